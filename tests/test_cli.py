"""The command line end to end, on a temp data dir with the fake embedder."""

import json
import os
import subprocess
import sys

import pytest
from conftest import FIXTURES, skip_without, write_jsonl

from oncall_memory.cli import main
from oncall_memory.store.engines import open_store


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ingest_then_similar_then_stats(capsys):
    code, out, _ = run(capsys, "ingest", str(FIXTURES / "incidents.jsonl"), "--json")
    assert code == 0
    counts = json.loads(out)
    assert counts["new"] == 64 and counts["rejected"] == 0 and counts["embedding_calls"] >= 1

    code, out, _ = run(capsys, "ingest", str(FIXTURES / "incidents.jsonl"), "--json")
    assert json.loads(out) == {**counts, "new": 0, "unchanged": 64, "embedding_calls": 0}

    code, out, _ = run(capsys, "similar", "IPsec tunnel down to the payment processor", "--json", "--limit", "3")
    assert code == 0
    neighbours = json.loads(out)
    assert len(neighbours) == 3
    for key in ("id", "title", "score", "similarity", "age_days", "fixes_worked", "fixes_failed", "url", "reasons"):
        assert key in neighbours[0]
    assert "ipsec" in neighbours[0]["title"].lower()

    code, out, _ = run(capsys, "similar", "--alert", str(FIXTURES / "alerts" / "tunnel-down.json"))
    assert code == 0
    assert "fixed by:" in out and "why:" in out

    code, out, _ = run(capsys, "stats", "--json")
    assert json.loads(out)["count"] == 64


def test_an_update_that_needs_no_embedding_is_not_reported_as_embedded(capsys, tmp_path):
    path = write_jsonl(tmp_path / "b.jsonl", [{"id": "A", "title": "disk full on db-1", "env": "shop-prod"}])
    run(capsys, "ingest", str(path))
    write_jsonl(path, [{"id": "A", "title": "disk full on db-1", "env": "shop-staging"}])  # a fact, not the text
    code, out, _ = run(capsys, "ingest", str(path))
    assert code == 0 and out.startswith("0 new, 1 updated") and "(0 embedding calls" in out
    assert "embedded" not in out


def test_env_filter_only_returns_that_env(capsys):
    run(capsys, "ingest", str(FIXTURES / "incidents.jsonl"))
    code, out, _ = run(
        capsys, "similar", "database connections exhausted", "--env", "data-prod", "--json", "--limit", "10"
    )
    assert code == 0
    envs = {n["env"] for n in json.loads(out)}
    assert envs == {"data-prod"}


def test_rejected_lines_are_listed_and_the_exit_status_says_so(capsys, tmp_path):
    path = write_jsonl(tmp_path / "b.jsonl", [{"id": "A", "title": "ok"}, "{broken", {"id": "B"}])
    code, out, err = run(capsys, "ingest", str(path), "--json")
    assert code == 3
    assert json.loads(out)["new"] == 1 and json.loads(out)["rejected"] == 2
    assert f"{path}:2" in err and f"{path}:3" in err and "title is required" in err


@pytest.mark.parametrize(
    "argv,message",
    [
        (["similar", "   "], "alert text is empty"),
        (["similar", "dns", "--limit", "0"], "limit must be between 1 and 100"),
        (["similar", "dns", "--limit", "101"], "limit must be between 1 and 100"),
        (["similar"], "give the alert text"),
    ],
)
def test_bad_lookups_exit_2_with_a_message(capsys, argv, message):
    run(capsys, "ingest", str(FIXTURES / "incidents.jsonl"))
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert message in err


def test_unknown_filter_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["similar", "dns", "--region", "eu"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --region" in err
    assert err.startswith("usage: oncall-memory similar ")  # the command's own usage, not every command's


def test_similar_before_any_ingest_says_what_to_do(capsys):
    code, _, err = run(capsys, "similar", "dns")
    assert code == 1 and "run `oncall-memory ingest PATH` first" in err


def test_nothing_stored_yet_is_one_answer_and_one_exit_code_everywhere(capsys):
    """Issue 35: on an empty data dir `similar` exited 1, `stats` 2, and `verify` printed "DAMAGED: 0
    incidents read; the engine counts None"."""
    for command in (["similar", "dns"], ["stats"], ["stats", "--json"], ["verify"], ["verify", "--json"]):
        code, out, err = run(capsys, *command)
        assert code == 1 and "run `oncall-memory ingest PATH` first" in err and not out, (command, code, out, err)


def test_embedded_store_held_by_another_process_is_a_clear_error(capsys, tmp_path, monkeypatch):
    from oncall_memory.settings import Settings

    holder = open_store(Settings())  # same data dir as the CLI will use
    try:
        code, _, err = run(capsys, "ingest", str(FIXTURES / "incidents.jsonl"))
        # A second `serve` printed a chained three-exception traceback from uvicorn's start-up (issue 34).
        served, _, served_err = run(capsys, "serve", "--port", "0")
    finally:
        holder.close()
    assert code == 1 and "open in another process" in err and "QDRANT_URL" in err
    assert served == 1 and "open in another process" in served_err and "Traceback" not in served_err


def test_console_script_runs(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "oncall_memory.cli", "ingest", str(FIXTURES / "incidents.jsonl"), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["new"] == 64


def test_eval_scores_each_shipped_set_per_configuration_beside_bm25(capsys):
    assert run(capsys, "ingest", str(FIXTURES / "incidents.jsonl"))[0] == 0
    code, out, _ = run(capsys, "eval", "--json")
    assert code == 0
    sets = json.loads(out)
    assert len(sets) == 3
    for name, scores in sets.items():
        assert list(scores)[:5] == ["BM25", "dense-only", "lexical-only", "hybrid", "hybrid+ranking"], name
        assert "abstention" in scores
    written = next(s for name, s in sets.items() if name.endswith("labels.jsonl"))
    assert 0 < written["BM25"]["mrr"] <= 1  # the baseline finds what shares words, embedder or not
    code, out, _ = run(capsys, "eval")
    assert code == 0 and out.count("\nBM25 ") == 2  # the no-match set has no table, only its abstention line


def test_dates_as_people_type_them(capsys):
    """Issue 35: `--since yesterday` gave pydantic's "Input should be a valid datetime or date, input is too
    short"."""
    from datetime import datetime, timezone

    from oncall_memory.cli.when import moment

    now = datetime(2026, 12, 1, 15, 30, tzinfo=timezone.utc)
    assert moment("yesterday", now) == datetime(2026, 11, 30, tzinfo=timezone.utc)
    assert moment("today", now) == datetime(2026, 12, 1, tzinfo=timezone.utc)
    assert moment("7d", now) == datetime(2026, 11, 24, 15, 30, tzinfo=timezone.utc)
    assert moment("36h", now) == datetime(2026, 11, 30, 3, 30, tzinfo=timezone.utc)
    assert moment("2w", now) == datetime(2026, 11, 17, 15, 30, tzinfo=timezone.utc)
    assert moment("2026-11-01", now) == datetime(2026, 11, 1, tzinfo=timezone.utc)
    assert moment("2026-11-01T03:00Z", now) == datetime(2026, 11, 1, 3, tzinfo=timezone.utc)
    assert run(capsys, "ingest", str(FIXTURES / "incidents.jsonl"))[0] == 0
    assert run(capsys, "similar", "dns", "--since", "3000d", "--json")[0] == 0
    with pytest.raises(SystemExit) as info:
        main(["similar", "dns", "--since", "last tuesday"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "'last tuesday' is not a date: give a date (2026-11-01)" in err
    assert "pydantic" not in err and "Input should be" not in err


def test_nothing_stored_is_said_before_the_local_model_loads(capsys, monkeypatch):
    skip_without("sentence_transformers")
    from oncall_memory.embedders.local import LocalEmbedder

    def must_not_load(self):
        raise AssertionError("the model was loaded for a lookup that cannot run")

    monkeypatch.setattr(LocalEmbedder, "_load", must_not_load)
    monkeypatch.setenv("ONCALL_MEMORY_EMBEDDER", "local")
    code, out, err = run(capsys, "similar", "disk full on db-1")
    assert code == 1 and out == ""
    assert "run `oncall-memory ingest PATH` first" in err


def test_an_alert_file_with_an_unknown_field_says_which_fields_an_alert_has(capsys, tmp_path):
    run(capsys, "ingest", str(FIXTURES / "incidents.jsonl"))
    alert = tmp_path / "alert.json"
    alert.write_text('{"text": "disk full", "sevrity": "high"}')
    code, _, err = run(capsys, "similar", "--alert", str(alert))
    assert code == 2 and "sevrity is not a known field (an alert has " in err and "component_tags" in err
    assert "incident format" not in err


# -- mistakes that passed in silence or misled (issue 52) ------------------------------------------------------


@pytest.mark.parametrize(
    "content, said",
    [
        ('{"txt": "pods crashing"}', "txt is not a known field (an alert has text, "),
        ('{"txt": "pods crashing"}', "did you mean text?"),
        ("", "is empty: give a JSON object"),
        ("   \n", "is empty: give a JSON object"),
        ("{pods crashing", "is not JSON (Expecting property name"),
    ],
)
def test_an_alert_file_with_a_mistake_says_what_to_fix_in_one_line(tmp_path, capsys, content, said):
    alert = tmp_path / "alert.json"
    alert.write_text(content)
    code, _, err = run(capsys, "similar", "--alert", str(alert))
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1, err


def test_the_alert_files_fields_are_the_alerts():
    from oncall_memory.cli.similar import ALERT_FIELDS
    from oncall_memory.domain.alert import Alert

    assert set(ALERT_FIELDS) == set(Alert.model_fields) - {"fact_sources"}


def test_an_empty_backlog_is_not_a_success(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, out, err = run(capsys, "ingest", str(empty))
    assert code == 2 and "holds no incidents" in err and "docs/integrations.md" in err


def test_a_window_that_ends_before_it_starts_is_refused(capsys):
    code, _, err = run(
        capsys, "ingest", str(FIXTURES / "incidents.jsonl"), "--since", "2027-01-01", "--until", "2026-01-01"
    )
    assert code == 2 and "is not before --until" in err


def test_an_unknown_incident_field_points_at_the_page_with_the_format(tmp_path, capsys):
    backlog = write_jsonl(tmp_path / "b.jsonl", [{"id": "X-1", "title": "disk full", "root_casue": "logs"}])
    code, _, err = run(capsys, "ingest", str(backlog))
    assert code == 3 and "root_casue" in err and "docs/integrations.md" in err and "README" not in err


def test_a_quick_command_leaves_once_answered_and_the_next_finds_the_store_whole(capsys, monkeypatch):
    # As a program, `similar` and `stats` leave as soon as their answer is flushed, before the store's flush and
    # close; under `main` alone they close what they opened. Either way the next command finds the store
    # unlocked and whole.
    import oncall_memory.cli as cli
    from oncall_memory.cli import leaving
    from oncall_memory.memory import Memory

    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")  # as console sets it, and this worker's own again after
    assert main(["ingest", str(FIXTURES / "incidents.jsonl")]) == 0
    closed: list[str] = []
    real_close = Memory.close

    def close(self):
        closed.append("store")
        real_close(self)

    class Left(Exception):
        pass

    left: list[tuple[int, list[str]]] = []

    def leave(code):
        left.append((code, list(closed)))
        raise Left  # unwinds the `with` blocks, closing the store as a test must

    monkeypatch.setattr(Memory, "close", close)
    monkeypatch.setattr(leaving.os, "_exit", leave)
    monkeypatch.setattr(leaving.logging, "shutdown", lambda: None)
    capsys.readouterr()
    for argv in (["similar", "--alert", str(FIXTURES / "alerts" / "crashloop-checkout.json"), "--json"], ["stats"]):
        closed.clear()
        monkeypatch.setattr(sys, "argv", ["oncall-memory", *argv])
        with pytest.raises(Left):
            cli.console()
        assert left[-1] == (0, [])  # left with the answer out and the store not yet closed
        out = capsys.readouterr().out
        assert ("INC-1001" in out) if argv[0] == "similar" else ("count: 64" in out)
        assert not leaving.at_once  # a `main` called later in this process closes what it opens
    # and under `main` alone: answered, then closed, then returned
    closed.clear()
    assert main(["similar", "--alert", str(FIXTURES / "alerts" / "crashloop-checkout.json")]) == 0
    assert closed == ["store"]
    assert main(["ingest", str(FIXTURES / "incidents.jsonl")]) == 0


def test_a_quick_command_runs_without_the_cyclic_collector_and_every_other_keeps_it(monkeypatch):
    # `similar` and `stats` hold what they build until they leave at once: the collector would only walk it.
    # A command that runs for long or reads a whole backlog (ingest, serve) must keep it.
    import contextlib
    import gc

    import oncall_memory.cli as cli
    from oncall_memory.cli import leaving

    seen: dict[str, bool] = {}

    def fake_main(argv):
        seen[argv[-1]] = gc.isenabled()
        return 0

    monkeypatch.setattr(cli, "main", fake_main)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")  # as console sets it, and this worker's own again after
    # A quick command's way out, kept from ending pytest or closing its log handlers.
    monkeypatch.setattr(leaving.os, "_exit", lambda code: None)
    monkeypatch.setattr(leaving.logging, "shutdown", lambda: None)
    try:
        for command in ("similar", "stats", "ingest", "serve"):
            monkeypatch.setattr(sys, "argv", ["oncall-memory", "-v", command])
            with contextlib.suppress(SystemExit):
                cli.console()
            gc.enable()
    finally:
        gc.enable()
    assert seen == {"similar": False, "stats": False, "ingest": True, "serve": True}
    assert not leaving.at_once  # what console set for a quick command ends with it


def test_the_program_starts_numpy_with_one_blas_thread_unless_the_user_chose(monkeypatch):
    # OpenBLAS spins a worker per core as numpy loads: on two cores that slowed a standalone `similar` by
    # 0.04-0.07 s, and nothing here multiplies matrices big enough to use them. The variable must be set before
    # numpy loads, so by the program's entry, and a value the user set is theirs.
    import contextlib

    import oncall_memory.cli as cli

    seen: list[str | None] = []
    monkeypatch.setattr(cli, "main", lambda argv: seen.append(os.environ.get("OPENBLAS_NUM_THREADS")) or 0)
    monkeypatch.setattr(sys, "argv", ["oncall-memory", "ingest"])
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "")  # recorded as the worker had it, restored after
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    with contextlib.suppress(SystemExit):
        cli.console()
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    with contextlib.suppress(SystemExit):
        cli.console()
    assert seen == ["1", "4"]


def test_a_standalone_lookup_runs_the_model_on_one_thread(monkeypatch, tmp_path):
    # It embeds one alert: a second ONNX Runtime thread would only spin beside the catalogue's load.
    from oncall_memory import embedders

    asked: list[int | None] = []
    made = embedders.make_embedder

    def spy(settings, *, threads=None):
        asked.append(threads)
        return made(settings, threads=threads)

    monkeypatch.setattr(embedders, "make_embedder", spy)
    monkeypatch.setenv("ONCALL_MEMORY_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("ONCALL_MEMORY_EMBEDDER", "fake")
    assert main(["ingest", str(FIXTURES / "incidents.jsonl")]) == 0
    assert main(["similar", "--alert", str(FIXTURES / "alerts" / "crashloop-checkout.json")]) == 0
    assert asked == [1]
