import pytest
from conftest import FIXTURES, write_jsonl

from oncall_memory.domain.incident import Incident
from oncall_memory.domain.rejected import Rejected
from oncall_memory.errors import InvalidInput
from oncall_memory.sources.jsonl_files import read_jsonl


def test_broken_lines_are_reported_with_line_numbers_and_the_rest_kept(tmp_path):
    path = write_jsonl(
        tmp_path / "backlog.jsonl",
        [
            {"id": "INC-1", "title": "disk full"},
            '{"id": "INC-2", "title": "truncated',
            {"title": "no id"},
            "",
            {"id": "INC-3", "title": "x", "fixes_attempted": [{"action": "restart", "outcome": "fixed"}]},
            {"id": "INC-4", "title": "dns", "root_casue": "typo"},
            "[1, 2]",
            {"id": "INC-5", "title": "cert expired"},
        ],
    )
    items = list(read_jsonl(path))
    kept = [i.id for i in items if isinstance(i, Incident)]
    rejected = {r.where.rsplit(":", 1)[1]: r.reason for r in items if isinstance(r, Rejected)}
    assert kept == ["INC-1", "INC-5"]
    assert set(rejected) == {"2", "3", "5", "6", "7"}
    assert "not valid JSON" in rejected["2"]
    assert "id is required" in rejected["3"]
    # An unknown outcome names the allowed ones.
    for allowed in ("resolved", "mitigated", "no-op", "worsened"):
        assert allowed in rejected["5"]
    assert "root_casue is not a known field" in rejected["6"]
    assert "expected a JSON object" in rejected["7"]


def test_a_folder_reads_the_jsonl_files_directly_in_it(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", [{"id": "A", "title": "a"}])
    write_jsonl(tmp_path / "b.jsonl", [{"id": "B", "title": "b"}])
    (tmp_path / "eval").mkdir()
    write_jsonl(tmp_path / "eval" / "labels.jsonl", [{"text": "x", "relevant": ["A"]}])
    (tmp_path / "notes.txt").write_text("not a backlog")
    assert sorted(i.id for i in read_jsonl(tmp_path)) == ["A", "B"]


def test_missing_path_is_a_clear_error(tmp_path):
    with pytest.raises(InvalidInput, match="does not exist"):
        list(read_jsonl(tmp_path / "nope.jsonl"))


def test_the_shipped_fixtures_are_all_valid_and_varied():
    items = list(read_jsonl(FIXTURES / "incidents.jsonl"))
    assert all(isinstance(i, Incident) for i in items), [str(i) for i in items if isinstance(i, Rejected)]
    assert len(items) >= 60
    assert len({i.env for i in items}) >= 4 and len({i.flavor for i in items}) >= 4
    assert len({i.signature for i in items}) >= 12


def test_files_that_are_not_utf8_text_are_named_and_skipped_and_the_rest_read(tmp_path):
    """Each of these was a traceback that lost the whole folder (issue 34): a binary file, UTF-16 with and
    without its byte-order mark, one line nested 100,000 deep; a UTF-8 BOM got line 1 rejected."""
    good = '{"id": "GOOD-1", "title": "disk full"}\n{"id": "GOOD-2", "title": "dns"}\n'
    (tmp_path / "a-binary.jsonl").write_bytes(bytes(range(256)) * 40)
    (tmp_path / "b-utf16.jsonl").write_bytes(good.replace("GOOD", "U16").encode("utf-16"))
    (tmp_path / "c-utf16le.jsonl").write_bytes(good.replace("GOOD", "U16LE").encode("utf-16-le"))
    (tmp_path / "d-bom.jsonl").write_bytes(b"\xef\xbb\xbf" + good.replace("GOOD", "BOM").encode())
    deep = '{"id": "DEEP-1", "title": "x"}\n' + "[" * 100_000 + "]" * 100_000 + '\n{"id": "DEEP-3", "title": "y"}\n'
    (tmp_path / "e-deep.jsonl").write_text(deep)
    (tmp_path / "f-latin1.jsonl").write_bytes(b'{"id": "L-1", "title": "caf\xe9"}\n{"id": "L-2", "title": "ok"}\n')
    (tmp_path / "g-good.jsonl").write_text(good)
    items = list(read_jsonl(tmp_path))
    kept = [i.id for i in items if isinstance(i, Incident)]
    rejected = {r.where.removeprefix(f"{tmp_path}/"): r.reason for r in items if isinstance(r, Rejected)}
    assert kept == ["BOM-1", "BOM-2", "DEEP-1", "DEEP-3", "L-2", "GOOD-1", "GOOD-2"]
    assert set(rejected) == {"a-binary.jsonl", "b-utf16.jsonl", "c-utf16le.jsonl", "e-deep.jsonl:2", "f-latin1.jsonl:1"}
    assert "binary" in rejected["a-binary.jsonl"] and "skipped" in rejected["a-binary.jsonl"]
    assert "UTF-16" in rejected["b-utf16.jsonl"] and "save it as UTF-8" in rejected["b-utf16.jsonl"]
    assert "NUL bytes" in rejected["c-utf16le.jsonl"]
    assert "nested too deep" in rejected["e-deep.jsonl:2"]
    assert "not UTF-8" in rejected["f-latin1.jsonl:1"]
