#!/usr/bin/env bash
# The suite as a busy CI machine runs it: three full runs in a row, each beside two CPU-bound processes
# (on a 2-core machine, the tests get what the scheduler leaves them). Exits non-zero at the first red run.
#
#   bash tests/under-load.sh            # after the README's test command has made .venv
#   RUNS=1 bash tests/under-load.sh -x  # extra arguments go to pytest
#   WORKERS=0 bash tests/under-load.sh  # one process, without pytest-xdist's workers
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-.venv/bin/python}
runs=${RUNS:-3}
workers=${WORKERS:-3}  # as the test command runs it (-n 3)

burners=()
stop_burners() { for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop_burners EXIT
for _ in 1 2; do
    "$python" -c 'while True: pass' &
    burners+=("$!")
done

for run in $(seq 1 "$runs"); do
    started=$(date +%s)
    echo "== run $run of $runs, beside ${#burners[@]} CPU-bound processes"
    PYTHONDONTWRITEBYTECODE= "$python" -m pytest -q -p no:cacheprovider -n "$workers" "$@"
    echo "== run $run passed in $(( $(date +%s) - started )) s"
done
