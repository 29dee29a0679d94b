"""No secret leaves: a corpus of secret shapes, each placed in every field of an incident (and in the
tags), ingested through the CLI, looked up through the CLI and HTTP, and posted as PagerDuty notes and
Slack messages; then the data dir (byte by byte), every output and every log line are searched."""

import json
import logging
import re
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
import uvicorn
from conftest import write_jsonl
from fastapi.testclient import TestClient
from pydantic import SecretStr
from secret_corpus import corpus
from slack_sdk.signature import SignatureVerifier

from oncall_memory.backlog import read_jsonl
from oncall_memory.cli import main
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.redact import MARKER, redact, secret_spans
from oncall_memory.schedule import free_port
from oncall_memory.service import create_app
from oncall_memory.settings import Settings

SHAPES = corpus()
TEXT_FIELDS = [
    "title",
    "root_cause",
    "error_signature",
    "oncall_note",
    "signature",
    "service",
    "env",
    "flavor",
    "severity",
    "status",
    "url",
]
CANARY = "canary-plain-words-xyzzy"  # stored as is: proves the byte search can see stored text


def _pieces(secret: str) -> set[bytes]:
    """The secret, or for a long one its first, middle and last 12 characters: a half-redacted secret leaks too."""
    if len(secret) <= 12:
        return {secret.encode()}
    middle = len(secret) // 2 - 6
    return {secret[:12].encode(), secret[middle : middle + 12].encode(), secret[-12:].encode()}


PIECES = [(shape.name, set().union(*(_pieces(s) for s in shape.secrets))) for shape in SHAPES]


def leaks(output: str | bytes) -> list[str]:
    """The corpus shapes whose secret (or a 12-character piece of it) appears in `output`."""
    data = output if isinstance(output, bytes) else output.encode("utf-8", "surrogateescape")
    return [name for name, pieces in PIECES if any(p in data for p in pieces)]


def test_the_corpus_is_broad_enough():
    assert len(SHAPES) >= 100
    assert len({s.name for s in SHAPES}) == len(SHAPES)


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_every_shape_is_redacted_on_its_own(shape):
    cleaned = redact(shape.text)
    assert MARKER in cleaned
    assert leaks(cleaned) == []


def test_ordinary_ops_prose_is_left_alone():
    for line in read_jsonl(Path(__file__).parent.parent / "fixtures" / "incidents.jsonl"):
        for field in ("title", "root_cause", "error_signature"):
            value = getattr(line, field)
            assert not value or MARKER not in value, (line.id, field, value)


def corpus_backlog() -> list[dict]:
    rows = [{"id": "CANARY", "title": CANARY}]
    for i, shape in enumerate(SHAPES):
        for field in TEXT_FIELDS:
            rows.append({"id": f"SEC-{i}-{field}", "title": "secret pasted in a hurry", field: shape.text})
        rows.append({"id": f"SEC-{i}-tags", "title": "secret in a tag", "component_tags": ["dns", shape.text]})
        rows.append(
            {
                "id": f"SEC-{i}-fix",
                "title": "secret in a fix",
                "fixes_attempted": [{"action": f"rotated {shape.text}", "outcome": "resolved"}],
            }
        )
    return rows


def test_an_id_holding_a_secret_is_rejected_with_a_reason_not_merged(tmp_path, capsys):
    token = "ghp_" + "a1B2c3D4e5" * 4
    path = write_jsonl(
        tmp_path / "ids.jsonl",
        [
            {"id": f"INC-{token}-1", "title": "one"},
            {"id": f"INC-{token}-2", "title": "two"},
            {"id": "INC-3", "title": "three"},
        ],
    )
    assert main(["ingest", str(path), "--json"]) == 3
    out, err = capsys.readouterr()
    assert json.loads(out)["new"] == 1 and json.loads(out)["rejected"] == 2
    assert f"{path}:1: id holds a secret (" in err and f"{path}:2: id holds a secret (" in err
    assert token not in err


class Recorder(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(self.format(record))


def slack_command(client, text: str, secret: str):
    """The Slack app's slash command, signed as Slack signs it."""
    body = urlencode({"command": "/oncall-memory", "text": text, "user_id": "U1", "response_url": ""}).encode()
    timestamp = str(int(time.time()))
    sig = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body)
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": timestamp,
        "X-Slack-Signature": sig,
    }
    return client.post("/slack/commands", content=body, headers=headers)


def test_no_secret_reaches_the_store_an_output_a_post_or_a_log(tmp_path, monkeypatch, capsys, caplog, httpserver):
    caplog.set_level(logging.DEBUG)
    data = tmp_path / "data"
    monkeypatch.setenv("ONCALL_MEMORY_DATA_DIR", str(data))
    outputs: list[str] = []

    # 1. The CLI: ingest the corpus, look each shape up, print stats.
    backlog = write_jsonl(tmp_path / "corpus.jsonl", corpus_backlog())
    assert main(["ingest", str(backlog), "--json"]) == 0
    outputs.append("".join(capsys.readouterr()))
    for shape in SHAPES:
        main(["similar", shape.text, "--json", "--limit", "20"])
        main(["similar", shape.text, "--limit", "3"])
        outputs.append("".join(capsys.readouterr()))
    main(["similar", "secret pasted in a hurry", "--json", "--limit", "100"])
    cli_json = capsys.readouterr().out
    assert len(json.loads(cli_json)) == 100  # the lookup returned stored incidents, their payloads included
    outputs.append(cli_json)

    # 2. HTTP and the posts it makes: every webhook carries a secret in the alert's own text.
    httpserver.expect_request(re.compile(r"^/incidents/[A-Z0-9]+/notes$"), method="POST").respond_with_json(
        {"note": {}}, status=201
    )
    httpserver.expect_request("/slack/T000/B000/XXXX", method="POST").respond_with_data("ok")
    settings = Settings(
        data_dir=data,
        embedder="fake",
        pagerduty_url=httpserver.url_for(""),
        pagerduty_token=SecretStr("pd-token"),
        pagerduty_from_email="oncall@acme.example",
        slack_webhook_url=SecretStr(httpserver.url_for("/slack/T000/B000/XXXX")),
        slack_signing_secret=SecretStr("slack-signing-secret"),
        post_backoff=0.01,
    )
    with Memory.open(settings) as memory, TestClient(create_app(settings, memory=memory)) as client:
        for i, shape in enumerate(SHAPES):
            pd = {"event": {"event_type": "incident.triggered", "data": {"id": f"P{i}X", "title": shape.text}}}
            am = {
                "version": "4",
                "status": "firing",
                "alerts": [
                    {
                        "status": "firing",
                        "labels": {"alertname": "KubeSecretLeak", "namespace": shape.text},
                        "annotations": {"summary": shape.text, "description": shape.text},
                        "startsAt": "2026-11-29T03:10:00Z",
                        "fingerprint": f"fp{i}",
                    }
                ],
            }
            og = {
                "action": "Create",
                "alert": {"alertId": f"og-{i}", "message": shape.text, "description": shape.text, "tags": [shape.text]},
            }
            feedback = {
                "alert": {"text": shape.text},
                "suggested": shape.text[:200],
                "verdict": "helped",
                "who": shape.text[:200],
            }
            responses = [
                client.post("/feedback", json=feedback),
                client.get("/", params={"q": shape.text, "service": shape.text}, follow_redirects=True),
                client.post("/webhooks/pagerduty", json=pd),
                client.post("/webhooks/alertmanager", json=am),
                client.post("/webhooks/opsgenie", json=og),
                client.get("/similar", params={"text": shape.text, "limit": 10}),
                client.post("/similar", json={"alert": {"text": shape.text, "service": shape.text}, "limit": 10}),
                slack_command(client, shape.text, "slack-signing-secret"),
            ]
            assert [r.status_code for r in responses] == [200, 200, 202, 202, 202, 200, 200, 200]
            outputs += [r.text for r in responses]
        client.app.state.dispatcher.join()
    posts = [req.get_data(as_text=True) for req, _ in httpserver.log]
    assert len(posts) == 3 * len(SHAPES) + len(SHAPES)  # a Slack message per webhook, a note per PagerDuty one
    outputs += posts

    # 3. The access log of a real server, asked with secrets in the query string.
    access = Recorder()
    port = free_port()
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="info")
    logging.getLogger("uvicorn.access").addHandler(access)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        for shape in SHAPES:
            assert (
                httpx.get(f"http://127.0.0.1:{port}/similar", params={"text": shape.text}, timeout=10).status_code
                == 200
            )
    finally:
        server.should_exit = True
        thread.join(10)
        logging.getLogger("uvicorn.access").removeHandler(access)
    assert len(access.lines) >= len(SHAPES) and all("/similar?text=" in line for line in access.lines)

    # Every output, every log line, every stored byte.
    assert leaks("\n".join(outputs)) == []
    assert leaks("\n".join(access.lines)) == []
    assert leaks("\n".join(r.getMessage() for r in caplog.records)) == []
    stored = b"".join(p.read_bytes() for p in data.rglob("*") if p.is_file())
    assert CANARY.encode() in stored  # the search can see what the store keeps
    assert leaks(stored) == []


def test_redaction_cost_is_paid_only_by_text_that_might_hold_a_secret():
    clean = "checkout pods crash looping after the deploy; readiness probe failing on port"
    assert secret_spans(clean) == []
    embedder = FakeEmbedder()
    assert embedder.embed([redact(clean)]) == embedder.embed([clean])
