"""The plugin author's guide runs as written (issue 52): docs/plugins.md's whole example, installed as pip
would (its module and a dist-info naming the entry point the guide declares), gives a source that `ingest`
reads, a webhook the service mounts and a target the outbox delivers to."""

import json
import logging
import re
import sys
import time

import pytest
from conftest import FIXTURES
from local_client import TestClient

from oncall_memory.cli import main
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl
from oncall_memory.store.engines import open_store

GUIDE = FIXTURES.parent / "docs" / "plugins.md"


def the_guides(kind: str, after: str) -> str:
    """The first ```kind block after the heading `after`, as the page has it."""
    text = GUIDE.read_text()
    start = text.index(after)
    found = re.search(rf"```{kind}\n(.*?)```", text[start:], re.S)
    assert found, f"no {kind} block after {after!r}"
    return found.group(1)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The guide's package, built from the page (its `pyproject.toml` and the whole example as the module it
    names) and installed by pip as a user would, into a folder of its own: the entry point pip writes is the
    one the registry finds."""
    import subprocess
    import tomllib

    pyproject = the_guides("toml", "## The package")
    declared = tomllib.loads(pyproject)
    ((name, module),) = declared["project"]["entry-points"]["oncall_memory.integrations"].items()
    source = tmp_path_factory.mktemp("opsdesk-src")
    (source / "pyproject.toml").write_text(pyproject)
    (source / module).mkdir()
    (source / module / "__init__.py").write_text(the_guides("python", "## The whole example"))
    site = tmp_path_factory.mktemp("opsdesk-site")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(site),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return site, name, module


@pytest.fixture
def opsdesk(installed, tmp_path, monkeypatch):
    site, name, module = installed
    monkeypatch.syspath_prepend(str(site))
    for variable in ("OPSDESK_WEBHOOK_TOKEN", "OPSDESK_URL", "OPSDESK_TOKEN"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("ONCALL_MEMORY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ONCALL_MEMORY_EMBEDDER", "fake")
    loaded = __import__(module)
    yield loaded
    sys.modules.pop(module, None)


def test_the_guides_plugin_imports_only_the_public_module(installed):
    site, name, module = installed
    code = (site / module / "__init__.py").read_text()
    imported = set(re.findall(r"^(?:from|import) (oncall_memory[\w.]*)", code, re.M))
    assert imported == {"oncall_memory.plugin"}, imported
    (dist,) = site.glob("*.dist-info")  # what pip wrote from the page's pyproject.toml
    assert f"[oncall_memory.integrations]\n{name} = {module}" in (dist / "entry_points.txt").read_text()


HISTORY = """id,title,service,cause,fix,resolved_at
OD-1,checkout pods CrashLoopBackOff after deploy,checkout,missing env var in the new release,roll back the deploy,2024-03-02T10:00:00Z
OD-2,kafka broker disk full,kafka,retention set to forever,raise retention limits,2019-07-11T08:30:00Z
OD-3,redis evicting keys under memory pressure,cache,,,
,a row without an id,,,,
OD-5,postgres replica lag,db,,,not a date
"""


def test_the_guides_source_is_read_by_ingest_with_each_bad_row_reported(tmp_path, capsys, opsdesk):
    history = tmp_path / "history.csv"
    history.write_text(HISTORY)
    assert main(["ingest", "--source", "opsdesk", str(history), "--json"]) == 3  # ingested, some rows rejected
    captured = capsys.readouterr()
    counts = json.loads(captured.out)
    assert (counts["new"], counts["rejected"]) == (3, 2), counts
    assert f"{history}:5: a row needs an id and a title" in captured.err
    assert f"{history}:6" in captured.err and "resolved_at" in captured.err
    # again: the same incidents, no embedding call
    assert main(["ingest", "--source", "opsdesk", str(history), "--json"]) == 3
    again = json.loads(capsys.readouterr().out)
    assert again["unchanged"] == 3 and again["embedding_calls"] == 0


def test_a_backfill_reads_the_guides_file_source_once(tmp_path, capsys, monkeypatch, opsdesk):
    history = tmp_path / "history.csv"
    history.write_text(HISTORY)
    windows = []
    read = opsdesk.OpsdeskHistory.incidents

    def counted(self, window):
        windows.append(window)
        return read(self, window)

    monkeypatch.setattr(opsdesk.OpsdeskHistory, "incidents", counted)
    assert main(["ingest", "--source", "opsdesk", str(history), "--since", "2009-01-01", "--json"]) == 3
    assert len(windows) == 1, windows  # not once per 180 days since 2009
    assert windows[0].since.year == 2009
    assert json.loads(capsys.readouterr().out)["new"] == 3


def test_without_a_path_or_with_a_bug_the_plugin_is_named_in_one_line(tmp_path, capsys, monkeypatch, opsdesk):
    assert main(["ingest", "--source", "opsdesk"]) == 2
    said = capsys.readouterr().err.strip()
    assert "\n" not in said and "opsdesk" in said and "FILE.csv" in said
    assert main(["ingest", "--source", "opsdesk", str(tmp_path / "missing.csv")]) == 1
    said = capsys.readouterr().err.strip()
    assert "\n" not in said and "cannot read the Opsdesk export" in said

    def buggy(self, window):
        yield from ()
        raise KeyError("title")

    monkeypatch.setattr(opsdesk.OpsdeskHistory, "incidents", buggy)
    history = tmp_path / "history.csv"
    history.write_text(HISTORY)
    assert main(["ingest", "--source", "opsdesk", str(history)]) == 1
    said = capsys.readouterr().err.strip()
    assert "Traceback" not in said and "\n" not in said, said
    assert "the source 'opsdesk'" in said and "KeyError" in said


def test_the_guides_webhook_and_target_deliver_a_note_through_the_service(
    tmp_path, monkeypatch, httpserver, caplog, opsdesk
):
    caplog.set_level(logging.INFO, logger="oncall_memory")
    monkeypatch.setenv("OPSDESK_WEBHOOK_TOKEN", "od-shared-1")
    monkeypatch.setenv("OPSDESK_URL", httpserver.url_for("/api"))
    monkeypatch.setenv("OPSDESK_TOKEN", "od-api-2")
    notes = []

    def note(request):
        from werkzeug import Response

        notes.append((request.headers.get("Authorization"), request.get_json()))
        return Response(status=201)

    httpserver.expect_request("/api/alerts/A-77/notes", method="POST").respond_with_handler(note)
    settings = Settings(data_dir=tmp_path / "data", embedder="fake")
    memory = Memory(open_store(Settings(data_dir=":memory:")), FakeEmbedder(), settings)
    memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    alert = {
        "id": "A-77",
        "title": "checkout pods CrashLoopBackOff",
        "text": "back-off restarting",
        "service": "checkout",
    }
    with TestClient(create_app(settings, memory=memory)) as client:
        assert client.post("/webhooks/opsdesk", json=alert).status_code == 401
        ok = {"X-Opsdesk-Token": "od-shared-1"}
        answer = client.post("/webhooks/opsdesk", json=alert, headers=ok)
        assert answer.status_code == 202 and answer.json() == {"accepted": 1, "duplicates": 0}
        resolved = client.post("/webhooks/opsdesk", json={**alert, "state": "resolved"}, headers=ok)
        assert resolved.json() == {"accepted": 0, "duplicates": 0, "ignored": "resolved"}
        bad = client.post("/webhooks/opsdesk", json={"text": "no id"}, headers=ok)
        assert bad.status_code == 422 and "an Opsdesk alert has an id and a title" in bad.text
        deadline = time.monotonic() + 20
        while not notes:
            assert time.monotonic() < deadline, "no note was delivered"
            time.sleep(0.05)
    memory.close()
    # the startup's list of routes names it, and how it is guarded
    assert "route POST /webhooks/opsdesk: its own check (OPSDESK_WEBHOOK_TOKEN is set)" in caplog.text
    authorization, body = notes[0]
    assert authorization == "Bearer od-api-2" and body["alert"] == "A-77"
    assert "CrashLoopBackOff" in body["note"] and "confidence" in body["note"]
