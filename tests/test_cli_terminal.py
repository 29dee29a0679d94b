"""The CLI as a responder meets it at a terminal: quiet when the reader of a pipe leaves, colour and width
only on a terminal (never with NO_COLOR), JSON lines that stream, escape sequences from incidents never
sent to the terminal, the memory found from any folder, and a failed first ingest that leaves nothing."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import pytest
from conftest import FIXTURES, write_jsonl

from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.ingest.ingest import IngestStopped
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl

CLI = [sys.executable, "-m", "oncall_memory.cli"]


@pytest.fixture
def data(tmp_path, monkeypatch):
    """A data dir with the sample backlog, for commands run as subprocesses."""
    data = tmp_path / "data"
    env = {**os.environ, "ONCALL_MEMORY_DATA_DIR": str(data), "ONCALL_MEMORY_EMBEDDER": "fake"}
    subprocess.run([*CLI, "ingest", str(FIXTURES / "incidents.jsonl")], env=env, check=True, capture_output=True)
    return env


def test_a_reader_that_leaves_the_pipe_gets_no_traceback(data):
    # 64 incidents as indented JSON is far more than a pipe holds: the writer meets the closed pipe.
    proc = subprocess.Popen(
        [*CLI, "similar", "disk pressure evictions", "--json", "--limit", "100"],
        env=data,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout.readline().strip() == b"["
    proc.stdout.close()  # `| head -1`
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0 and b"Traceback" not in stderr and b"BrokenPipe" not in stderr, stderr


def test_a_command_that_leaves_without_teardown_writes_all_it_said_and_its_status(data, tmp_path):
    # `similar` leaves at once (cli.QUICK_EXIT): its answer, written to a file (buffered, not line by line),
    # is whole, and a failure keeps its exit status and its message.
    out = tmp_path / "answer.json"
    with out.open("w") as f:
        done = subprocess.run(
            [*CLI, "similar", "disk pressure evictions", "--json", "--limit", "100"], env=data, stdout=f
        )
    assert done.returncode == 0 and len(json.loads(out.read_text())) == 64
    missing = tmp_path / "no-such-alert.json"
    failed = subprocess.run([*CLI, "similar", "--alert", str(missing)], env=data, capture_output=True, text=True)
    assert failed.returncode == 2 and f"cannot read alert file {missing}" in failed.stderr, failed.stderr


def test_jsonl_streams_the_same_neighbours_as_json(data):
    args = [*CLI, "similar", "IPsec tunnel down", "--limit", "5"]
    as_json = json.loads(subprocess.run([*args, "--json"], env=data, capture_output=True, check=True).stdout)
    lines = subprocess.run([*args, "--jsonl"], env=data, capture_output=True, check=True).stdout.splitlines()
    streamed = [json.loads(line) for line in lines]
    assert len(streamed) == len(as_json) == 5

    # The clock moves between the two commands: an age (to 0.01 day, 14 minutes) and the recency in a score
    # (to 1e-6) may round across a step in between. CI met that once; the rest must be equal.
    def steady(n: dict) -> dict:
        return {k: v for k, v in n.items() if k not in ("age_days", "age", "score")}

    assert [steady(n) for n in streamed] == [steady(n) for n in as_json]

    def near(x: float | None, y: float | None, step: float) -> bool:
        return x == y or (x is not None and y is not None and abs(x - y) <= step)

    for a, b in zip(streamed, as_json):
        assert near(a["age_days"], b["age_days"], 0.011) and near(a["score"], b["score"], 2e-6), (a, b)


def at_a_terminal(argv: list[str], env: dict, columns: int = 80) -> str:
    """Run `argv` with its stdout on a pseudo-terminal of `columns`; what it wrote."""
    leader, follower = pty.openpty()
    import fcntl
    import struct
    import termios

    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    proc = subprocess.Popen(argv, env={**env, "COLUMNS": str(columns)}, stdout=follower, stderr=subprocess.PIPE)
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        out += chunk
    proc.wait(60)
    os.close(leader)
    return out.decode()


def test_colour_and_width_only_at_a_terminal_and_never_with_no_color(data):
    args = [*CLI, "similar", "checkout pods CrashLoopBackOff after release", "--limit", "2"]
    piped = subprocess.run(args, env=data, capture_output=True, text=True, check=True).stdout
    assert "\x1b[" not in piped
    assert any(len(line) > 80 for line in piped.splitlines())  # plain text is not wrapped
    coloured = at_a_terminal(args, data)
    assert "\x1b[32m   fixed by: " in coloured and "\x1b[31m   tried without effect: " in coloured
    assert all(len(line.replace("\x1b[0m", "").split("m", 1)[-1]) <= 80 for line in coloured.splitlines())
    plain = at_a_terminal(args, {**data, "NO_COLOR": "1"})
    assert "\x1b[" not in plain and "fixed by: " in plain


def test_escape_sequences_in_an_incident_never_reach_the_terminal(tmp_path, data):
    hostile = {
        "id": "INC-ESC",
        "title": "disk full \x1b]0;owned\x07 on \x1b[2Jdb-1",
        "root_cause": "log volume filled \x1b[8mhidden\x1b[0m",
    }
    subprocess.run([*CLI, "ingest", str(write_jsonl(tmp_path / "esc.jsonl", [hostile]))], env=data, check=True)
    for out in (
        at_a_terminal([*CLI, "similar", "disk full on db-1", "--limit", "3"], data),
        subprocess.run([*CLI, "similar", "disk full on db-1"], env=data, capture_output=True, text=True).stdout,
    ):
        assert "INC-ESC" in out
        body = out.replace("\x1b[0m", "")
        for code in ("1", "2", "31", "32", "33", "36"):  # the CLI's own styles
            body = body.replace(f"\x1b[{code}m", "")
        assert "\x1b" not in body and "\x07" not in body
        assert "disk full �]0;owned� on �[2Jdb-1" in out


def test_the_memory_is_found_from_any_folder_and_an_old_one_is_still_used(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "ONCALL_MEMORY_DATA_DIR"}
    env |= {"XDG_DATA_HOME": str(tmp_path / "xdg"), "ONCALL_MEMORY_EMBEDDER": "fake"}
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    ingest = subprocess.run(
        [*CLI, "ingest", str(FIXTURES / "incidents.jsonl")], env=env, cwd=here, capture_output=True, text=True
    )
    assert ingest.returncode == 0, ingest.stderr
    assert (tmp_path / "xdg" / "oncall-memory").is_dir() and not (here / ".oncall-memory").exists()
    found = subprocess.run([*CLI, "stats", "--json"], env=env, cwd=there, capture_output=True, text=True)
    assert found.returncode == 0 and json.loads(found.stdout)["count"] == 64
    # A ./.oncall-memory an earlier version made is still used where it is, with a one-line notice.
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    old_env = {**env, "ONCALL_MEMORY_DATA_DIR": str(legacy / ".oncall-memory")}
    subprocess.run([*CLI, "ingest", str(FIXTURES / "incidents.jsonl")], env=old_env, cwd=legacy, check=True)
    old = subprocess.run([*CLI, "stats", "--json"], env=env, cwd=legacy, capture_output=True, text=True)
    assert old.returncode == 0 and ".oncall-memory" in json.loads(old.stdout)["location"]
    assert "using ./.oncall-memory" in old.stderr and "ONCALL_MEMORY_DATA_DIR" in old.stderr
    # Nothing here: the error says where it looked and what to set.
    empty = subprocess.run(
        [*CLI, "stats"], env={**env, "XDG_DATA_HOME": str(tmp_path / "none")}, cwd=there, capture_output=True, text=True
    )
    assert empty.returncode != 0 and str(tmp_path / "none") in empty.stderr and "ONCALL_MEMORY_DATA_DIR" in empty.stderr


def test_a_failed_first_ingest_leaves_no_collection_bound_to_its_model(tmp_path):
    data = tmp_path / "data"
    failing = FakeEmbedder(model="text-embedding-3-small", fail_calls=[1])
    with Memory.open(Settings(data_dir=data), embedder=failing) as memory:
        with pytest.raises(IngestStopped):
            memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    # Another model next: it simply ingests (no "reindex" of an empty collection made for the first one).
    with Memory.open(Settings(data_dir=data), embedder=FakeEmbedder()) as memory:
        report = memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        assert report.new == 64 and memory.stats()["embed_model"] == "fake-bow"


def test_the_plain_answer_shows_each_root_cause_under_its_title_wrapped_to_the_terminal():
    from oncall_memory.answer.render import terminal
    from oncall_memory.domain.alert import Alert
    from oncall_memory.store.engines import open_store

    memory = Memory(open_store(Settings(data_dir=":memory:")), FakeEmbedder(), Settings(data_dir=":memory:"))
    memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    lookup = memory.similar(Alert(text="checkout pods CrashLoopBackOff after release"), limit=3)
    plain = terminal(lookup, "checkout pods", 0.01)
    first = lookup.neighbours[0]
    assert first.root_cause and f"{first.title}\n   cause: {first.root_cause}" in plain
    narrow = terminal(lookup, "checkout pods", 0.01, width=50)
    assert all(len(line) <= 50 for line in narrow.splitlines() if " " in line.strip()), narrow
    assert "cause: " in narrow
    memory.close()
