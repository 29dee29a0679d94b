"""An answer says how sure it is: each neighbour carries `confidence` (high, medium, low) in every output,
and a weak best match is said to be one: "nothing close is on record", its fixes never offered as "fixed by"."""

import json

from conftest import FIXTURES
from fastapi.testclient import TestClient

from oncall_memory.alert import Alert
from oncall_memory.backlog import read_jsonl
from oncall_memory.cli import main
from oncall_memory.confidence import CALIBRATED, Thresholds, level, overall, thresholds_for
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.render import NOTHING_CLOSE, note_text, slack_message, terminal
from oncall_memory.service import create_app
from oncall_memory.settings import Settings

NONSENSE = "zebra giraffe banana"
KNOWN = "IPsec tunnel to the payment processor is down"


def memory_with_fixtures(tmp_path) -> Memory:
    memory = Memory.open(Settings(data_dir=tmp_path / "data", embedder="fake"), embedder=FakeEmbedder())
    memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    return memory


def test_the_levels_follow_the_evidence():
    t = Thresholds(low_below=0.4, high_from=0.6)
    assert level(0.3, pinned=False, same_symptom=False, meaning=True, t=t) == "low"
    assert level(0.3, pinned=False, same_symptom=True, meaning=True, t=t) == "medium"  # both crash loops
    assert level(0.3, pinned=True, same_symptom=False, meaning=True, t=t) == "high"  # the same signature
    assert level(0.5, pinned=False, same_symptom=False, meaning=True, t=t) == "medium"
    assert level(0.7, pinned=False, same_symptom=False, meaning=True, t=t) == "high"
    assert level(0.7, pinned=False, same_symptom=False, meaning=False, t=t) == "medium"  # words only
    assert overall(["low", "medium", "low"]) == "medium" and overall([]) == "low"


def test_thresholds_are_per_model_and_the_settings_override_them():
    assert thresholds_for("all-MiniLM-L6-v2") == CALIBRATED["all-MiniLM-L6-v2"]
    assert thresholds_for("text-embedding-3-small") == CALIBRATED["all-MiniLM-L6-v2"]  # uncalibrated: the default
    assert thresholds_for("fake-bow", 0.1, None) == Thresholds(0.1, CALIBRATED["fake-bow"].high_from)


def test_a_nonsense_alert_is_answered_as_a_guess_everywhere(tmp_path):
    with memory_with_fixtures(tmp_path) as memory:
        weak = memory.similar(Alert(text=NONSENSE))
        strong = memory.similar(Alert(text=KNOWN))
    assert weak.confidence == "low" and all(n.confidence == "low" for n in weak.neighbours)
    assert strong.confidence in ("high", "medium") and strong.neighbours[0].confidence != "low"
    fixes = [n for n in weak.neighbours if n.fixes_worked]
    assert fixes  # the weak matches have fixes on record, and they must not read as suggestions
    for text in (terminal(weak, NONSENSE, 0.01), note_text(NONSENSE, weak), json.dumps(slack_message(NONSENSE, weak))):
        assert NOTHING_CLOSE in text
        assert "fixed by:" not in text and "weak match, not a suggestion" in text
    assert all("fixed by:" not in r for n in weak.neighbours for r in n.reasons)
    assert NOTHING_CLOSE not in terminal(strong, KNOWN, 0.01) and "fixed by:" in note_text(KNOWN, strong)


def test_json_answers_carry_the_confidence(tmp_path, monkeypatch, capsys):
    data = tmp_path / "data"
    monkeypatch.setenv("ONCALL_MEMORY_DATA_DIR", str(data))
    assert main(["ingest", str(FIXTURES / "incidents.jsonl")]) == 0
    capsys.readouterr()
    assert main(["similar", NONSENSE, "--json"]) == 0
    assert {n["confidence"] for n in json.loads(capsys.readouterr().out)} == {"low"}
    settings = Settings(data_dir=data, embedder="fake")
    with Memory.open(settings, embedder=FakeEmbedder()) as memory, TestClient(create_app(settings, memory=memory)) as c:
        got = c.get("/similar", params={"text": KNOWN}).json()
        assert got[0]["confidence"] in ("high", "medium")
        posted = c.post("/similar", json={"alert": {"text": NONSENSE}}).json()
        assert {n["confidence"] for n in posted} == {"low"}
