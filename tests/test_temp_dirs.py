"""Where the suite keeps its temporary directories (conftest.py): in RAM when there is room, and a run that
ended leaves RAM to the newest two."""

import os
import time
from pathlib import Path

from conftest import KEEP_RUNS, _forget_old_runs


def test_ended_runs_beyond_the_newest_two_are_removed_and_running_ones_are_kept(tmp_path):
    ended = int(Path("/proc/sys/kernel/pid_max").read_text()) + 1  # no process has a pid past the kernel's largest
    runs = []
    for age in range(4):  # the oldest first
        run = tmp_path / f"oncall-memory-tests-{ended + age}"
        run.mkdir()
        os.utime(run, (time.time() - 100 + age, time.time() - 100 + age))
        runs.append(run)
    alive = tmp_path / f"oncall-memory-tests-{os.getpid()}"
    alive.mkdir()
    os.utime(alive, (time.time() - 1000, time.time() - 1000))  # older than any, still running
    other = tmp_path / "someone-elses"
    other.mkdir()

    _forget_old_runs(tmp_path)

    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [alive.name, other.name, *(r.name for r in runs[-KEEP_RUNS:])]
    )
