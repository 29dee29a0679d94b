"""The service says what it does: at start, what it holds, where answers go and how each route is
authenticated; a webhook whose answer will be posted nowhere is a warning naming what to set."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import time

from conftest import FIXTURES, ROOT
from local_client import TestClient
from pydantic import SecretStr

from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.orchestration.schedule import free_port
from oncall_memory.service import create_app
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl
from oncall_memory.store.engines import open_store


def test_serve_logs_what_it_holds_where_answers_go_and_how_each_route_is_guarded(tmp_path):
    data = tmp_path / "data"
    env = {**os.environ, "ONCALL_MEMORY_DATA_DIR": str(data), "ONCALL_MEMORY_EMBEDDER": "fake"}
    cli = [sys.executable, "-m", "oncall_memory.cli"]
    subprocess.run([*cli, "ingest", str(FIXTURES / "incidents.jsonl")], env=env, check=True, capture_output=True)
    port = free_port()
    env["ONCALL_MEMORY_ALERTMANAGER_TOKEN"] = "am-token"
    server = subprocess.Popen(
        [*cli, "serve", "--port", str(port)], env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True
    )
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = server.stderr.readline()
            lines.append(line)
            if "Uvicorn running" in line or not line:
                break
    finally:
        server.terminate()
        server.wait(20)
    log = "".join(lines)
    # every line of the service's log, uvicorn's own included, carries its time (issue 84)
    assert all(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ", line) for line in lines if line.strip())
    assert "memory: 64 incidents in 'incidents'" in log and "embedded with fake-bow" in log
    assert "answers go nowhere" in log and "ONCALL_MEMORY_SLACK_WEBHOOK_URL" in log
    assert "route POST /webhooks/alertmanager: bearer token" in log
    assert "route POST /webhooks/pagerduty: OPEN (set ONCALL_MEMORY_PAGERDUTY_WEBHOOK_SECRET)" in log
    # a pager mounted through the integrations' hook has its row too
    assert "route POST /webhooks/grafana: OPEN (set ONCALL_MEMORY_GRAFANA_SECRET)" in log
    assert "route /slack/commands, /slack/interactions: off" in log
    assert "learning as incidents close: off" in log


def test_a_configured_service_names_its_targets(tmp_path, caplog, httpserver):
    caplog.set_level(logging.INFO, logger="oncall_memory")
    settings = Settings(
        data_dir=tmp_path / "data",
        embedder="fake",
        pagerduty_token=SecretStr("pd"),
        pagerduty_from_email="oncall@acme.example",
        pagerduty_url=httpserver.url_for(""),
        slack_webhook_url=SecretStr(httpserver.url_for("/hook")),
        api_token=SecretStr("api"),
    )
    memory = Memory(open_store(Settings(data_dir=":memory:")), FakeEmbedder(), settings)
    memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    with TestClient(create_app(settings, memory=memory)):
        pass
    memory.close()
    said = [r.getMessage() for r in caplog.records]
    assert "answers go to: PagerDuty notes on PagerDuty incidents (from oncall@acme.example)" in said
    assert "answers go to: Slack, through the incoming webhook" in said
    assert (
        "route /similar, /stats, /metrics, /docs, /answers, /coverage: bearer token (the API token or the local token)"
        in said
    )
    assert any(line.startswith("route POST /ingest, /verify, /backup, /feedback") for line in said)
    assert "route / (search page), /alerts: bearer token or a login session" in said
    assert "learning as incidents close: on (resolved and annotated PagerDuty incidents)" in said
    assert not any("answers go nowhere" in line for line in said)


def test_an_alert_that_will_be_posted_nowhere_is_a_warning(tmp_path, caplog):
    settings = Settings(data_dir=tmp_path / "data", embedder="fake")
    memory = Memory(open_store(Settings(data_dir=":memory:")), FakeEmbedder(), settings)
    memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    body = (FIXTURES / "webhooks" / "alertmanager-group.json").read_bytes()
    with TestClient(create_app(settings, memory=memory)) as client:
        caplog.clear()
        response = client.post("/webhooks/alertmanager", content=body, headers={"Content-Type": "application/json"})
        assert response.status_code == 202 and json.loads(response.text)["accepted"] >= 1
    memory.close()
    (warning,) = [r for r in caplog.records if r.levelno == logging.WARNING and "posted nowhere" in r.getMessage()]
    assert "ONCALL_MEMORY_SLACK_WEBHOOK_URL" in warning.getMessage()


def test_serve_on_a_taken_port_says_so_in_one_line_before_loading_anything(tmp_path):
    import socket

    env = {**os.environ, "ONCALL_MEMORY_DATA_DIR": str(tmp_path / "data"), "ONCALL_MEMORY_EMBEDDER": "fake"}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        run = subprocess.run(
            [sys.executable, "-m", "oncall_memory.cli", "serve", "--port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert run.returncode == 1, run.stderr  # 3 means "ingested, some lines rejected": not this
    (line,) = run.stderr.strip().splitlines()
    assert f"127.0.0.1:{port}" in line and "in use" in line and "--port" in line
    assert not (tmp_path / "data").exists()  # nothing opened, nothing written


def test_every_route_the_service_serves_is_named_with_its_guard_in_the_log_and_the_docs(tmp_path, caplog):
    """Issue 81: `/ingest`, `/verify` and `/backup` were missing from the startup's lines, auth.py's table and
    docs/security.md. Every route the app really serves, the installed integrations' included, must fall
    under one line of the guard table, and docs/security.md must name each."""
    from oncall_memory.integrations.offers import service_plugins
    from oncall_memory.service.route_list import paths_and_methods
    from oncall_memory.service.startup import guards
    from oncall_memory.webhook import Webhook

    settings = Settings(data_dir=tmp_path / "data", embedder="fake")
    app = create_app(settings)
    plugins = service_plugins()
    hooks = [p.webhook for p in plugins if isinstance(p.webhook, Webhook)]
    chats = [p.chat_app for p in plugins if p.chat_app is not None]
    table = guards(settings, hooks, chats)
    served = {path for path, _ in paths_and_methods(app)}
    assert len(served) > 30
    unguarded = sorted(p for p in served if not any(g.covers(p) for g in table))
    assert unguarded == []
    twice = sorted(p for p in served if sum(g.covers(p) for g in table) > 1)
    assert twice == []
    security = (ROOT / "docs" / "security.md").read_text()

    def named(path: str) -> bool:  # as written there: itself, its `{id}`, or the folder pattern it falls under
        forms = {path, re.sub(r"\{[^}]*\}", "{id}", path)}
        forms |= {p for g in table for p in g.paths if "*" in p and g.covers(path)}
        return any(f"`{f}`" in security or f"`POST {f}`" in security or f"`GET {f}`" in security for f in forms)

    assert sorted(p for p in served if not named(p)) == []
    # and the log says them all, at start
    caplog.set_level(logging.INFO, logger="oncall_memory")
    memory = Memory(open_store(Settings(data_dir=":memory:")), FakeEmbedder(), settings)
    with TestClient(create_app(settings, memory=memory)):
        pass
    memory.close()
    said = "\n".join(r.getMessage() for r in caplog.records)
    for guard in table:
        assert f"route {guard.label}: {guard.how}" in said
    assert "browsers: every route answers to the host names localhost, 127.0.0.1, ::1" in said
