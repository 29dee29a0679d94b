#!/usr/bin/env bash
# The third-party programs the suite tests against, from Debian's packages (their own downloads are not
# reachable from these machines): Chromium for the browser test (tests/test_browser.py), promtool
# (package prometheus, with Prometheus itself) for the alerting rules' unit tests (tests/test_metrics.py) and a
# rule's link to its expression (tests/test_hookup.py), and Alertmanager with
# amtool (package prometheus-alertmanager) for the documented receiver (tests/test_hookup.py). Installs only what is
# missing; where it cannot (not root, no apt-get, no mirror) it says so, and those tests are skipped with
# the same reason. Never fails the test command.
set -uo pipefail
need=()
have_chromium=
for candidate in "${ONCALL_MEMORY_CHROMIUM:-}" /usr/lib/chromium/chromium "$(command -v chromium || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
        have_chromium=1
    fi
done
[ -n "$have_chromium" ] || need+=(chromium)
command -v promtool >/dev/null || need+=(prometheus)
command -v amtool >/dev/null || need+=(prometheus-alertmanager)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "install-tools: ${need[*]} missing, and installing needs root and apt-get: their tests will be skipped" >&2
    exit 0
fi
echo "install-tools: apt-get install ${need[*]} (for the browser test, the alerting rules' and the receiver's tests)" >&2
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }; then
    echo "install-tools: installing ${need[*]} failed: their tests will be skipped" >&2
fi
exit 0
