"""Every module of the lab imports: a refactor of the product that breaks a benchmark fails here, loudly,
rather than on the day someone next runs it."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import bench

LAB = Path(bench.__file__).parent
MODULES = sorted(
    ".".join(p.relative_to(LAB.parent).with_suffix("").parts).removesuffix(".__init__")
    for p in LAB.rglob("*.py")
    if "tests" not in p.relative_to(LAB).parts and p.name != "__main__.py"  # a __main__ runs as it imports
)


def test_the_lab_is_folders_by_question():
    loose = sorted(p.name for p in LAB.glob("*.py") if p.name not in ("__init__.py", "mirrors.py"))
    assert not loose, f"put these under bench/perf, bench/quality or bench/redaction: {loose}"
    assert {"bench.perf.lookup", "bench.quality.generalise", "bench.redaction.coverage"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_each_module_imports(name):
    module = importlib.import_module(name)
    if (LAB.parent / name.replace(".", "/")).with_suffix(".py").exists() and name.count(".") >= 2:
        # A benchmark says what it measures and how to run it, first thing.
        assert module.__doc__ and module.__doc__.strip(), f"{name} has no docstring"


def test_the_labs_readme_names_every_module():
    readme = (LAB / "README.md").read_text(encoding="utf-8")
    unnamed = [
        name
        for name in MODULES
        if name.count(".") >= 2 and not name.endswith(".__init__") and f"{name.rpartition('.')[2]}" not in readme
    ]
    assert not unnamed, f"bench/README.md says nothing of {unnamed}: add a row (question, command, the doc it feeds)"
