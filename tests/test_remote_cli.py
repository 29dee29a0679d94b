"""The CLI asks a running service when there is one (its model is loaded and it owns the store), and
looks up by itself when there is none or it does not answer."""

import json
import os
import re

from conftest import FIXTURES, serving

from oncall_memory.cli import main
from oncall_memory.domain.signature import canonical_signature
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.settings import Settings


def test_similar_and_stats_go_through_a_running_service(tmp_path, monkeypatch, capsys):
    data = tmp_path / "data"
    monkeypatch.setenv("ONCALL_MEMORY_DATA_DIR", str(data))
    assert main(["ingest", str(FIXTURES / "incidents.jsonl")]) == 0
    main(["similar", "IPsec tunnel down", "--json", "--limit", "3"])
    capsys.readouterr()
    main(["similar", "IPsec tunnel down", "--json", "--limit", "3"])
    standalone = json.loads(capsys.readouterr().out)
    settings = Settings(data_dir=data, embedder="fake")
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:  # the service owns the store now
        with serving(create_app(settings, memory=memory)) as url:
            (data / "service.json").write_text(json.dumps({"url": url, "pid": os.getpid()}))
            assert main(["similar", "IPsec tunnel down", "--json", "--limit", "3"]) == 0
            assert json.loads(capsys.readouterr().out) == standalone  # the same answer, from the service
            assert main(["similar", "IPsec tunnel down", "--limit", "3"]) == 0
            out = capsys.readouterr().out
            assert f"(asked the service at {url})" in out and "fixed by:" in out
            assert main(["stats", "--json"]) == 0
            assert json.loads(capsys.readouterr().out)["count"] == 64
            assert main(["similar", "dns", "--limit", "500"]) == 2  # the service's 4xx is the CLI's usage error
            # feedback goes to the service too (it holds the store): its memory counts it at once
            assert main(["feedback", "INC-1030", "helped", "node disk pressure", "--who", "ana"]) == 0
            assert "INC-1030 helped" in capsys.readouterr().out
            assert memory.feedback.tallies(canonical_signature("node disk pressure", [None]))["INC-1030"].helped == 1
    # The service is gone: the file is stale, the CLI looks up by itself and says so.
    assert main(["similar", "IPsec tunnel down", "--json", "--limit", "3"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == standalone and "did not answer" in err


def test_every_fixture_alert_reads_the_same_standalone_and_through_the_service(tmp_path, monkeypatch, capsys):
    """Issue 35: through a running service the CLI printed "nothing close is on record" above a high-confidence
    first answer (the remote lookup was built without its confidence). Every shipped alert is asked both
    ways; the printed answer must be the same, line for line, but for the footer."""
    data = tmp_path / "data"
    monkeypatch.setenv("ONCALL_MEMORY_DATA_DIR", str(data))
    assert main(["ingest", str(FIXTURES / "incidents.jsonl")]) == 0
    alerts = sorted((FIXTURES / "alerts").glob("*.json"))
    assert len(alerts) >= 5

    def answer() -> list[str]:
        lines = capsys.readouterr().out.rstrip().removesuffix(f"(asked the service at {url})").splitlines()
        return [re.sub(r", \d+ ms\)", ")", line) for line in lines if line.strip()]  # timing aside

    standalone, url = {}, None
    capsys.readouterr()
    for alert in alerts:
        assert main(["similar", "--alert", str(alert), "--limit", "3"]) == 0
        standalone[alert.name] = answer()
    settings = Settings(data_dir=data, embedder="fake")
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        with serving(create_app(settings, memory=memory)) as url:
            (data / "service.json").write_text(json.dumps({"url": url, "pid": os.getpid()}))
            for alert in alerts:
                assert main(["similar", "--alert", str(alert), "--limit", "3"]) == 0
                assert answer() == standalone[alert.name], alert.name


def test_through_the_service_a_typed_secret_is_printed_redacted_as_standalone(tmp_path, monkeypatch, capsys):
    """Through a service the CLI does not redact the query itself (loading the catalogue was 0.4 s of its
    start-up): the service redacts it where it enters and sends back the text to print. A text too long
    for that header is redacted by the CLI, as before."""
    data = tmp_path / "data"
    monkeypatch.setenv("ONCALL_MEMORY_DATA_DIR", str(data))
    assert main(["ingest", str(FIXTURES / "incidents.jsonl")]) == 0
    secret = "ghp_" + "Zq4" * 12
    short = f"checkout pods CrashLoopBackOff, token {secret} in the env"
    long = short + " lorem" * 4000  # over the echo header's bound
    capsys.readouterr()
    settings = Settings(data_dir=data, embedder="fake")
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        with serving(create_app(settings, memory=memory)) as url:
            (data / "service.json").write_text(json.dumps({"url": url, "pid": os.getpid()}))
            for text in (short, long):
                assert main(["similar", text, "--limit", "2"]) == 0
                out = capsys.readouterr().out
                assert "asked the service" in out
                assert secret not in out and "[REDACTED" in out.splitlines()[0]
                assert "checkout pods CrashLoopBackOff, token" in out.splitlines()[0]
            # the short one's text came back from the service, redacted there; the long one's did not
            from urllib.parse import unquote

            from oncall_memory.cli import remote

            echoed = [
                remote.post(remote.Service(url), "/similar", {"alert": {"text": t}}).headers for t in (short, long)
            ]
            assert unquote(echoed[0]["x-lookup-text"]) == short.replace(secret, "[REDACTED]")
            assert "x-lookup-text" not in echoed[1]


def test_the_query_goes_unredacted_only_over_a_channel_nobody_else_reads():
    from oncall_memory.cli.remote import private_channel

    assert private_channel("http://127.0.0.1:8080") and private_channel("http://localhost:8080")
    assert private_channel("http://[::1]:8080") and private_channel("https://memory.internal")
    assert not private_channel("http://memory.internal:8080") and not private_channel("http://10.0.0.5:8080")


def test_the_thin_client_reads_its_three_settings_as_settings_does(tmp_path, monkeypatch):
    """`cli/similar.py` reads the data dir, the service URL and the API token itself (building `Settings` was
    a third of a lookup through the service): for each way they can be given, both must read the same."""
    from oncall_memory.cli import similar as thin

    cases = [
        {},
        {
            "ONCALL_MEMORY_DATA_DIR": str(tmp_path / "d"),
            "ONCALL_MEMORY_URL": "http://127.0.0.1:9/",
            "ONCALL_MEMORY_API_TOKEN": "t0ken",
        },
        {"oncall_memory_data_dir": str(tmp_path / "lower"), "Oncall_Memory_Api_Token": "mixed"},
        {"ONCALL_MEMORY_API_TOKEN": "  ", "ONCALL_MEMORY_URL": ""},  # `VAR=`: not set
    ]
    for env in cases:
        for name in [n for n in os.environ if n.lower().startswith("oncall_memory_")]:
            monkeypatch.delenv(name)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        settings = Settings()
        token = settings.service.api_token
        assert thin.data_dir() == settings.data_dir, env
        assert thin.setting("url") == settings.service.url, env
        assert thin.api_token() == (token.get_secret_value() if token else None), env


def test_through_the_service_the_cli_imports_neither_pydantic_nor_settings(tmp_path, monkeypatch):
    """What makes `similar` through a service fast (0.45 s -> about 0.1 s on the machine of
    docs/integrations.md): the service renders the answer, so the client builds no model of its own."""
    import subprocess
    import sys

    data = tmp_path / "data"
    monkeypatch.setenv("ONCALL_MEMORY_DATA_DIR", str(data))
    assert main(["ingest", str(FIXTURES / "incidents.jsonl")]) == 0
    probe = (
        "import sys\n"
        "from oncall_memory.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "heavy = sorted(m for m in sys.modules if m.startswith(('pydantic', 'oncall_memory.settings', 'numpy')))\n"
        "print('imported:', heavy)\n"
        "sys.exit(code)\n"
    )
    settings = Settings(data_dir=data, embedder="fake")
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        with serving(create_app(settings, memory=memory)) as url:
            (data / "service.json").write_text(json.dumps({"url": url, "pid": os.getpid()}))
            out = {}
            for argv in (["similar", "pods crash looping on start", "--limit", "2"], ["stats"]):
                run = subprocess.run(
                    [sys.executable, "-c", probe, *argv], capture_output=True, text=True, timeout=120, check=False
                )
                assert run.returncode == 0, run.stderr
                assert "imported: []" in run.stdout, run.stdout
                out[argv[0]] = run.stdout
            assert f"(asked the service at {url})" in out["similar"] and "fixed by:" in out["similar"]
            assert "count: 64" in out["stats"]


def test_ingest_verify_backup_and_deliveries_go_through_the_service_that_owns_the_memory(tmp_path, monkeypatch, capsys):
    """Issue 52: with `serve` running, `ingest` failed ("the embedded store ... is open in another process").
    A post-mortem is added while the service serves, then checked, backed up and found, with no restart."""
    data = tmp_path / "data"
    monkeypatch.setenv("ONCALL_MEMORY_DATA_DIR", str(data))
    assert main(["ingest", str(FIXTURES / "incidents.jsonl")]) == 0
    capsys.readouterr()
    templates = FIXTURES.parent / "tests" / "postmortems"
    settings = Settings(data_dir=data, embedder="fake")
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:  # the service owns the store now
        with serving(create_app(settings, memory=memory)) as url:
            (data / "service.json").write_text(json.dumps({"url": url, "pid": os.getpid()}))
            assert main(["ingest", str(templates)]) == 0
            out, err = capsys.readouterr()
            assert out.startswith("4 new, 0 updated, 0 unchanged, 0 rejected") and url in out, out
            assert "open in another process" not in err
            assert memory.stats()["count"] == 68  # stored by the service's own memory, at once
            assert main(["ingest", str(templates), "--json"]) == 0
            assert json.loads(capsys.readouterr().out)["unchanged"] == 4
            broken = tmp_path / "broken.jsonl"
            broken.write_text('{"id": "X-1", "title": "disk full"}\nnot json\n')
            assert main(["ingest", str(broken)]) == 3  # a bad line is reported as standalone, the rest stored
            assert "broken.jsonl:2" in capsys.readouterr().err
            assert main(["verify", "--source", str(templates)]) == 0
            assert "healthy: 69 incidents read and checked" in capsys.readouterr().out
            assert main(["backup", str(tmp_path / "copy")]) == 0
            assert "backed up 69 incidents" in capsys.readouterr().out
            assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == ["manifest.json", "points.jsonl.gz"]
            assert main(["deliveries"]) == 0
            assert capsys.readouterr().out == "no deliveries\n"
            assert main(["similar", "container registry pushes fail with HTTP 500", "--json", "--limit", "1"]) == 0
            assert json.loads(capsys.readouterr().out)[0]["id"].endswith("gitlab-registry-storage.md")
    assert not [p for p in data.iterdir() if p.name.startswith("backup-")]  # the service's copy is gone
    assert main(["restore", str(tmp_path / "copy")]) == 0  # and the copy is a backup restore takes
