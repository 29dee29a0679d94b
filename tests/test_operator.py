"""Issue 84, the smaller items of the operator's day: windows and dates that explain themselves, links that
are never words, and what `stats`, `verify` and `deliveries` print."""

from __future__ import annotations

import json
import os

from conftest import FIXTURES, serving

from oncall_memory.cli import main
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.settings import Settings


def test_ingest_says_how_many_fell_outside_the_window(capsys):
    assert main(["ingest", str(FIXTURES / "incidents.jsonl"), "--since", "2026-11-20"]) == 0
    out, err = capsys.readouterr()
    stored = int(out.split(" new,")[0])
    outside = int(err.split("incidents in")[0].split()[-1])
    assert stored + outside == 64 and outside > 0
    assert "fell outside --since and were not stored" in err
    assert main(["ingest", str(FIXTURES / "incidents.jsonl"), "--since", "2026-11-20", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["outside_window"] == outside


def test_a_future_since_says_so_instead_of_finding_nothing(capsys):
    assert main(["ingest", str(FIXTURES / "incidents.jsonl")]) == 0
    capsys.readouterr()
    for argv in (
        ["similar", "pods crash", "--since", "2099-01-01"],
        ["ingest", str(FIXTURES / "incidents.jsonl"), "--since", "2099-01-01"],
    ):
        assert main(argv) == 2
        assert "is in the future" in capsys.readouterr().err


def test_the_ingest_rate_never_reads_one_incidents_a_second():
    from oncall_memory.cli.ingest import _rate

    assert _rate(157.4) == "157 incidents/s" and _rate(1.4) == "1.4 incidents/s"
    assert _rate(0.2) == "one incident every 5 s"


def test_links_are_never_words_in_any_pagers_text():
    """Grafana's silence link put "new" (`/alerting/silence/new`) among an alert's words in common."""
    from oncall_memory.domain.distill import distill_alert
    from oncall_memory.domain.lexical import terms

    grafana = (
        "[FIRING:1] HighLatency (checkout) Silence: https://grafana.example/alerting/silence/new?matcher=a%3Db "
        "Dashboard: http://grafana.example/d/abc123?orgId=1 Panel: https://grafana.example/d/x?viewPanel=2"
    )
    words = terms(distill_alert(grafana))
    assert "highlatency" in words and "checkout" in words
    assert not {"new", "alerting", "grafana", "orgid", "https", "matcher", "viewpanel"} & set(words)


def test_stats_aligns_its_keys_and_says_when_it_asked_the_service(tmp_path, capsys):
    data = tmp_path / "data"
    assert main(["ingest", str(FIXTURES / "incidents.jsonl")]) == 0
    capsys.readouterr()
    assert main(["stats"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if ": " in line]
    assert len({line.index(": ") for line in lines}) == 1  # one column, whatever the longest key
    settings = Settings(data_dir=data, embedder="fake")
    with Memory.open(settings, embedder=FakeEmbedder()) as memory, serving(create_app(settings, memory=memory)) as url:
        (data / "service.json").write_text(json.dumps({"url": url, "pid": os.getpid()}))
        assert main(["stats"]) == 0
        assert f"(asked the service at {url})" in capsys.readouterr().out
        assert main(["verify"]) == 0
        assert f"checked by the service at {url}" in capsys.readouterr().out


def test_deliveries_show_a_groups_key_short(capsys, tmp_path):
    from oncall_memory.domain.alert import Alert
    from oncall_memory.jobs import Item, Job, short_key
    from oncall_memory.service.outbox import Outbox

    key = 'alertmanager:{}/{severity="critical"}:{alertname="KubePodCrashLooping", namespace="checkout-production-eu-west-1"}#5f8a3b2c1d0e9f7a'
    assert len(key) > 100 and len(short_key(key)) <= 72 and short_key(key).endswith(key[-14:])
    job = Job(key=key, items=[Item(key=key, alert=Alert(text="pods crash"), title="pods crash")])
    with Outbox(tmp_path / "data" / "outbox.sqlite3") as box:
        box.claim([job], {key: ["slack"]}, deadline=60)
    assert main(["deliveries"]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert short_key(key) in line and key not in line
