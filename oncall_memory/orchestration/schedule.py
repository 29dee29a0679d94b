"""Run the ingest flow on a schedule.

Prefect's ephemeral mode runs flows but never schedules them, so on a single machine the schedule
command starts a local Prefect server (SQLite under the data dir, its UI on ONCALL_MEMORY_PREFECT_PORT,
Prefect's usual 4200, or a free port when that one is taken) unless `PREFECT_API_URL` points at a shared
one. It prints the deployment's page in the UI (its runs, retries, failures and logs) and a command that
runs it now, both working as printed. Each scheduled run is a separate process that opens the embedded
store for the length of the run and closes it; one run at a time (`limit=1`) so runs never fight over the
store.
"""

from __future__ import annotations

import argparse
import logging
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from prefect.settings import PREFECT_API_URL, PREFECT_RUNNER_POLL_FREQUENCY, PREFECT_UI_URL, temporary_settings

from ..errors import OncallMemoryError
from ..integrations import BUILT_IN_SOURCES
from ..settings import Settings
from ..sources import default_window_days
from .flow import ingest_flow

# What `schedule --help` says: what the user gets, not how it is built (the module's docstring).
USAGE = """Run the ingest on a schedule: starts a local Prefect server if none is configured
(PREFECT_API_URL), prints the page of its runs in Prefect's UI and a command that runs it now."""
log = logging.getLogger(__name__)

# This machine class has no internet: analytics and telemetry only produce DNS errors (and, from the
# heartbeat on a fresh SQLite database, a "database is locked" traceback).
QUIET_PREFECT = {"PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The schedule options, shared by `oncall-memory schedule` and `python flows/ingest.py`."""
    p.add_argument(
        "--source",
        default="jsonl",
        metavar="SOURCE",
        help=f"jsonl (files: the default), {', '.join(BUILT_IN_SOURCES)}, or an installed plugin's",
    )
    p.add_argument("--path", help="for jsonl: a file or a folder of *.jsonl")
    p.add_argument(
        "--window-days",
        type=float,
        help="look-back window of each run (default: 7 for an API source, all of a jsonl backlog; 0: all)",
    )
    when = p.add_mutually_exclusive_group()
    when.add_argument("--interval", type=float, help="seconds between runs (default 900)")
    when.add_argument("--cron", help='a cron schedule, e.g. "*/15 * * * *"')


DEPLOYMENT = "scheduled-ingest"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_or_free(port: int) -> int:
    """`port` when nothing listens on it on loopback, else a free one (said in the log)."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            chosen = free_port()
            log.warning(
                "port %d is taken: the local Prefect server uses %d (set ONCALL_MEMORY_PREFECT_PORT)", port, chosen
            )
            return chosen
    return port


@contextmanager
def local_prefect_server(home: Path, *, port: int | None = None, timeout: float = 120.0) -> Iterator[str]:
    """Start `prefect server start` on loopback with its database under `home` and its UI on; yield its
    API URL (the UI is the same address without `/api`)."""
    port = port or free_port()
    home.mkdir(parents=True, exist_ok=True)
    api = f"http://127.0.0.1:{port}/api"
    env = {
        **os.environ,
        **QUIET_PREFECT,
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_UI_ENABLED": "true",
        "PREFECT_UI_API_URL": api,  # what the UI in the browser asks
    }
    env.pop("PREFECT_API_URL", None)
    with (home / "server.log").open("ab") as logfile:
        server = subprocess.Popen(
            [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=logfile,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_healthy(server, api, home, timeout)
            log.info("local Prefect server at %s (database under %s)", api, home)
            yield api
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()


def _wait_healthy(server: subprocess.Popen, url: str, home: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if server.poll() is not None:
            raise OncallMemoryError(f"the local Prefect server exited ({server.returncode}); see {home}/server.log")
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise OncallMemoryError(
                f"the local Prefect server did not answer within {timeout:.0f}s; see {home}/server.log"
            )
        time.sleep(0.5)


def serve_schedule(
    settings: Settings,
    *,
    source: str,
    path: str | None,
    window_days: float | None,
    interval: float | None = None,
    cron: str | None = None,
) -> None:
    """Serve the ingest flow on `interval` seconds or `cron` (default every 15 minutes). Blocks.

    `window_days` None: the source's default (the whole backlog for jsonl, 7 days for an API source);
    0 also means the whole backlog.
    """
    if window_days is None:
        window_days = default_window_days(source)
    if not interval and not cron:
        interval = 15 * 60
    api = os.environ.get("PREFECT_API_URL")
    if api:
        _serve(api, source, path, window_days or None, interval, cron)
        return
    home = settings.dir.prefect
    with local_prefect_server(home.resolve(), port=port_or_free(settings.schedule.prefect_port)) as url:
        _serve(url, source, path, window_days or None, interval, cron)


def _serve(
    api: str, source: str, path: str | None, window_days: float | None, interval: float | None, cron: str | None
) -> None:
    import prefect
    from prefect.deployments.runner import RunnerDeployment
    from prefect.types.entrypoint import EntrypointType

    window = f"window {window_days:g} days" if window_days else "whole backlog"
    params = {"source": source, "path": str(Path(path).resolve()) if path else None, "window_days": window_days}
    # Prefect's runner asks for due runs every 10 s: left so, `--interval 5` would run every 10 s, not as asked.
    polls = {PREFECT_RUNNER_POLL_FREQUENCY: max(1, min(10, int(interval)))} if interval else {}
    with temporary_settings({PREFECT_API_URL: api, **polls}):
        # By module path, not file path: Prefect loads a file path as a lone script, where the flow's
        # package-relative imports cannot resolve.
        deployment = ingest_flow.to_deployment(
            name=DEPLOYMENT,
            interval=interval,
            cron=cron,
            parameters=params,
            entrypoint_type=EntrypointType.MODULE_PATH,
        )
        assert isinstance(deployment, RunnerDeployment)  # called from sync code: Prefect answers in kind
        deployment_id = deployment.apply()
        ui = PREFECT_UI_URL.value() or api.removesuffix("/api")
        # Prefect's own banner is left out: its hint to run the deployment assumes PREFECT_API_URL is set in
        # the reader's shell, which on this machine it is not. These lines work as printed.
        print(
            f"serving scheduled ingest of {source} ({params['path'] or 'api'}) every "
            f"{f'{interval:g}s' if interval else repr(cron)}, {window}; Prefect API {api}\n"
            f"  runs, retries and failures: {ui}/deployments/deployment/{deployment_id}\n"
            f"  run it now:  PREFECT_API_URL={api} {_prefect_command()} deployment run "
            f"'{ingest_flow.name}/{DEPLOYMENT}'",
            flush=True,
        )
        prefect.serve(deployment, limit=1, print_starting_message=False)


def _prefect_command() -> str:
    """The `prefect` beside this interpreter, by its full path: a fresh shell has no activated venv."""
    beside = Path(sys.executable).parent / "prefect"
    return shlex.quote(str(beside)) if beside.exists() else "prefect"


def main(argv: list[str] | None = None, settings: Settings | None = None) -> int:
    """The schedule as a program (`oncall-memory schedule`, `python flows/ingest.py`): quiet Prefect and
    stop cleanly on SIGTERM too (systemd, docker stop), so the local server is shut down with us."""
    parser = argparse.ArgumentParser(
        prog="oncall-memory schedule", description=USAGE, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    os.environ.update(QUIET_PREFECT)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    serve_schedule(
        settings or Settings(),
        source=args.source,
        path=args.path,
        window_days=args.window_days,
        interval=args.interval,
        cron=args.cron,
    )
    return 0
