#!/usr/bin/env bash
# Chromium for the browser test (tests/test_browser.py), from Debian's packages: Playwright's own
# browser download is not reachable from these machines. Does nothing when a Chromium is already
# there; where it cannot install one (not root, no apt-get, no mirror) it says so and the browser
# test is skipped with the same message. Never fails the test command.
set -uo pipefail
for candidate in "${ONCALL_MEMORY_CHROMIUM:-}" /usr/lib/chromium/chromium "$(command -v chromium || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
        exit 0
    fi
done
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "install-browser: no Chromium, and installing one needs root and apt-get: the browser test will be skipped" >&2
    exit 0
fi
echo "install-browser: apt-get install chromium (for the browser test)" >&2
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; then
    echo "install-browser: installing chromium failed: the browser test will be skipped" >&2
fi
exit 0
