"""`oncall-memory serve` started as a deployment runs it, for the benchmarks that measure it from outside."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx

from oncall_memory.orchestration.schedule import free_port


class Serve:
    """A context manager: `oncall-memory serve` on a free loopback port with `env` added to this process's
    environment, entered once `/readyz` answers 200 (`ready_seconds` after the start); stopped on exit.
    `timeout`: seconds to wait for that, after which it is stopped (None: as long as it runs)."""

    def __init__(self, env: dict[str, str], *, timeout: float | None = None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "oncall_memory.cli", "serve", "--port", str(self.port)],
            env={**os.environ, **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        while True:
            try:
                if httpx.get(self.url + "/readyz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None:
                raise SystemExit("serve exited during start-up")
            if timeout is not None and time.perf_counter() - started > timeout:
                self.stop()
                raise SystemExit(f"serve did not become ready in {timeout:g} s")
            time.sleep(0.1)
        self.ready_seconds = time.perf_counter() - started

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(60)

    def __enter__(self) -> Serve:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
