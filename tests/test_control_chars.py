"""Every control character (U+0000 to U+001F and U+007F) through every route and every field that takes
text, against a real server (uvicorn and h11, which drop a connection whose response header holds one):
each request gets an answer under 500, and the server logs no traceback."""

from __future__ import annotations

import hashlib
import logging
import time
from urllib.parse import quote, urlencode

import httpx
import pytest
from conftest import FIXTURES, serving
from pydantic import SecretStr
from slack_sdk.signature import SignatureVerifier

from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl
from oncall_memory.store.engines import open_store

CONTROLS = [chr(c) for c in (*range(32), 127)]
TOKEN = "api-token-for-control-chars"
SLACK_SECRET = "slack-signing-secret-cc"


class Tracebacks(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)


def requests_carrying(c: str) -> list[tuple[str, str, dict]]:
    """(method, path, httpx keywords) for each door, `c` in every text field it takes."""
    t = f"disk{c}full on node{c}7"
    fp = hashlib.sha256(c.encode()).hexdigest()[:16]
    alert = {"text": t, "signature": f"sig{c}1", "service": f"check{c}out", "env": f"prod{c}", "flavor": f"e{c}ks"}
    am = {
        "version": "4",
        "groupKey": f"g{c}1",
        "alerts": [
            {
                "status": "firing",
                "labels": {"alertname": f"Disk{c}Full", "service": f"svc{c}", "namespace": f"ns{c}"},
                "annotations": {"summary": t, "message": t, "runbook_url": f"https://x/{c}"},
                "startsAt": f"2026-12-01T00:00:0{c}Z",
                "fingerprint": f"{fp}{c}",
            }
        ],
    }
    slack = urlencode({"command": "/oncall-memory", "text": t, "user_id": f"U{c}1", "response_url": ""}).encode()
    stamp = str(int(time.time()))
    slack_headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": SignatureVerifier(SLACK_SECRET).generate_signature(timestamp=stamp, body=slack),
    }
    return [
        ("POST", "/similar", {"json": {"alert": alert, "filters": {"service": f"s{c}", "env": f"e{c}"}}}),
        ("POST", "/similar?format=text", {"json": {"alert": alert}}),
        ("GET", "/similar", {"params": {"text": t, "service": f"s{c}", "env": f"e{c}", "tag": f"t{c}"}}),
        ("POST", "/feedback", {"json": {"alert": alert, "suggested": f"INC-10{c}01", "verdict": "helped", "who": c}}),
        ("GET", "/stats", {}),
        ("GET", "/", {"params": {"q": t, "service": f"s{c}", "env": f"e{c}"}}),
        ("GET", f"/incidents/{quote(f'INC{c}1')}", {}),  # a client sends a path percent-encoded
        ("GET", "/login", {"params": {"next": f"/{c}x"}}),
        ("POST", "/login", {"data": {"next": f"/{c}x", "token": f"t{c}"}}),
        ("POST", "/webhooks/alertmanager", {"json": am}),
        ("POST", "/webhooks/grafana", {"json": {**am, "title": t, "message": t, "version": "1"}}),
        ("POST", "/webhooks/opsgenie", {"json": {"action": "Create", "alert": {"alertId": f"a{c}", "message": t}}}),
        (
            "POST",
            "/webhooks/pagerduty",
            {"json": {"event": {"id": f"e{c}", "event_type": "incident.triggered", "data": {"id": "P1", "title": t}}}},
        ),
        ("POST", "/slack/commands", {"content": slack, "headers": slack_headers}),
        ("POST", "/mcp", {"json": mcp("similar_incidents", {"text": t, "service": f"s{c}"}), "headers": MCP}),
        ("POST", "/mcp", {"json": mcp("get_incident", {"incident_id": f"INC{c}1"}), "headers": MCP}),
    ]


MCP = {"Accept": "application/json, text/event-stream"}  # what streamable HTTP asks of a client


def mcp(tool: str, arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


@pytest.fixture
def served(tmp_path):
    settings = Settings(
        data_dir=tmp_path / "data",
        embedder="fake",
        api_token=SecretStr(TOKEN),
        slack_signing_secret=SecretStr(SLACK_SECRET),
    )
    memory = Memory(open_store(Settings(data_dir=":memory:")), FakeEmbedder(), settings)
    memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    errors = Tracebacks()
    for name in ("uvicorn.error", "uvicorn", ""):
        logging.getLogger(name).addHandler(errors)
    try:
        with serving(create_app(settings, memory=memory)) as url:
            yield url, errors
    finally:
        for name in ("uvicorn.error", "uvicorn", ""):
            logging.getLogger(name).removeHandler(errors)
        memory.close()


def test_every_control_character_through_every_door_gets_an_answer_and_no_traceback(served):
    url, errors = served
    answered = 0
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as client:
        for c in CONTROLS:
            for method, path, kwargs in requests_carrying(c):
                try:
                    response = client.request(method, path, **kwargs)
                except httpx.TransportError as exc:  # a dropped connection: what h11 does to a bad header
                    pytest.fail(f"{method} {path} with U+{ord(c):04X}: no answer ({exc!r})")
                assert response.status_code < 500, (method, path, f"U+{ord(c):04X}", response.text[:200])
                answered += 1
    tracebacks = [r for r in errors.records if r.exc_info]
    assert not tracebacks, [r.getMessage() for r in tracebacks][:3]
    assert answered == len(CONTROLS) * len(requests_carrying("x"))
