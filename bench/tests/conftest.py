"""The lab's tests run as the product's do: with a clean ONCALL_MEMORY_* environment and a data dir of their own
(tests/conftest.py is the product suite's; this package's tests do not reach into it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in list(os.environ):
        if key.startswith("ONCALL_MEMORY_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("ONCALL_MEMORY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ONCALL_MEMORY_EMBEDDER", "fake")
