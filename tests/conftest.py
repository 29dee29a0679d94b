"""Shared fixtures. Every test runs with a clean ONCALL_MEMORY_* environment and its own data dir."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.incident import Incident
from oncall_memory.settings import Settings
from oncall_memory.store import IncidentStore

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

_STANDARD = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "QDRANT_URL", "QDRANT_API_KEY")


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch, tmp_path):
    for key in list(os.environ):
        if key.startswith("ONCALL_MEMORY_") or key in _STANDARD:
            monkeypatch.delenv(key)
    monkeypatch.setenv("ONCALL_MEMORY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ONCALL_MEMORY_EMBEDDER", "fake")


@pytest.fixture
def settings() -> Settings:
    return Settings(data_dir=":memory:", embedder="fake")


@pytest.fixture
def store(settings) -> IncidentStore:
    s = IncidentStore.open(settings)
    yield s
    s.close()


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder()


def make_incident(**fields) -> Incident:
    base = {"id": "INC-1", "title": "checkout pods crash looping"}
    base.update(fields)
    return Incident.model_validate(base)


def write_jsonl(path: Path, rows: list) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(row if isinstance(row, str) else json.dumps(row))
            fh.write("\n")
    return path


def snapshot(store: IncidentStore) -> dict:
    """Everything the collection holds, for 'left it identical' assertions."""
    out = {}
    for point_id, payload, vectors in store.points(with_vectors=True):
        dense = [round(v, 6) for v in vectors["meaning"]]
        sparse = vectors["words"]
        out[point_id] = (json.dumps(payload, sort_keys=True), dense, list(sparse.indices), list(sparse.values))
    return out
