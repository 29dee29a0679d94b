"""A job the service runs in the background on a timer (its ingest schedule, its vector-index check)."""

from __future__ import annotations

import logging
import threading


class Periodic:
    """Run `run()` in a background thread every `every` seconds (first at start when `at_start`), until the
    `with` block ends; a run under way finishes first (waited for up to `finish_within` seconds). A failed
    run is logged and changes nothing: the next one tries again."""

    name = "periodic"
    at_start = False
    finish_within = 30.0

    def __init__(self, every: float):
        self._every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)

    def run(self) -> None:
        raise NotImplementedError

    def failed(self) -> str:
        return f"{self.name} failed"

    def __enter__(self) -> Periodic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(self.finish_within)

    def _loop(self) -> None:
        if not self.at_start and self._stop.wait(self._every):
            return
        while True:
            try:
                self.run()
            except Exception:  # logged as the job's own module, where an operator looks for it
                logging.getLogger(type(self).__module__).exception(self.failed())
            if self._stop.wait(self._every):
                return
