"""The house rules of docs/architecture.md, checked on the source so they hold after the next change:
no import up the floors and no import cycle (wherever an import stands, in the package and the lab), one reader of the environment, one reader of the app's state, a
docstring on every module, and a `Memory` that stays a façade."""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "oncall_memory"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
# The lab is held to the same rules: above the whole package, no cycle among its own modules.
LAB = {module_name(p): p for p in sorted((ROOT / "bench").rglob("*.py"))}
EVERY = {**MODULES, **LAB}


@dataclass(frozen=True)
class Import:
    target: str
    type_only: bool  # under `if TYPE_CHECKING:`: read by type checkers, never run
    line: int


def imports_of(name: str) -> list[Import]:
    """Every import of one of our modules that `name` makes, wherever it stands: at the top, inside a function
    (a lazy import is still a dependency), or under `if TYPE_CHECKING:` (marked type-only)."""
    path = EVERY[name]
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    typed = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                target = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [f"{target}.{a.name}" if f"{target}.{a.name}" in EVERY else target for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [Import(t, id(node) in typed, node.lineno) for t in dict.fromkeys(names) if t in EVERY and t != name]
    return found


# The floors, lowest first: a module imports only from its own floor or below (docs/architecture.md draws
# them). Ground: errors, the data dir, the environment's reader, the plugin registry and contract (pluggy and
# the standard library). Then the redaction every text passes, the domain (incidents, alerts, what rides with
# them), settings, the ports and what fills them (embedders, sources, the pager's job, its webhook), the store,
# the two stages (ingest writes, answer reads), the memory's façade, where answers go, the integrations,
# and the surfaces: the service, the CLI, the MCP server, the Prefect flow, the evaluation harness, the
# public plugin module.
FLOORS = (
    ("errors", "env_values", "links", "datadir", "local_token", "log_format", "hosts", "credentials",
     "http_answers", "hookspecs", "plugins"),
    ("redact",),
    ("domain", "logs"),
    ("settings",),
    ("embedders", "jobs", "live", "webhook", "sources"),
    ("store",),
    ("ingest", "answer"),
    ("observe",),
    ("memory",),
    ("targets", "chat", "learning"),
    ("integrations",),
    ("service", "cli", "mcp", "orchestration", "evaluation", "plugin", "__main__", ""),
)  # fmt: skip
TOP = len(FLOORS)  # the lab
# The one import up the floors: types only. The contract's hooks are typed with the public module's names.
TYPE_ONLY_UP = {("oncall_memory.hookspecs", "oncall_memory.plugin")}


def floor_of(name: str) -> int:
    if name.startswith("bench"):
        return TOP
    head = name.removeprefix("oncall_memory").removeprefix(".").split(".")[0]
    found = [i for i, names in enumerate(FLOORS) if head in names]
    assert found, f"{name} stands on no floor: add its package or module to FLOORS (and docs/architecture.md)"
    return found[0]


def test_no_module_imports_from_a_floor_above_its_own():
    upward = [
        f"{name} (floor {floor_of(name)}) imports {i.target} (floor {floor_of(i.target)}), line {i.line}"
        + (" (type only)" if i.type_only else "")
        for name in EVERY
        for i in imports_of(name)
        if floor_of(i.target) > floor_of(name) and (name, i.target) not in TYPE_ONLY_UP
    ]
    assert not upward, "imports up the floors (move the module, or what it needs):\n" + "\n".join(upward)
    for name, target in TYPE_ONLY_UP:  # still there, and still for types only
        assert [i.type_only for i in imports_of(name) if i.target == target] == [True], (name, target)


def test_the_layout_rules_see_what_they_look_for(tmp_path, monkeypatch):
    probe = PACKAGE / "answer" / "_layout_probe.py"
    monkeypatch.setitem(EVERY, "oncall_memory.answer._layout_probe", probe)
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: PROBE if self == probe else READ(self, *a, **k))
    found = {(i.target, i.type_only) for i in imports_of("oncall_memory.answer._layout_probe")}
    assert found == {("oncall_memory.memory", False), ("oncall_memory.service", True), ("oncall_memory.errors", False)}


READ = Path.read_text
PROBE = (
    '"""probe"""\nfrom typing import TYPE_CHECKING\nfrom ..errors import InvalidInput\n'
    "if TYPE_CHECKING:\n    from .. import service\n"
    "def f():\n    from ..memory import Memory\n    return Memory\n"
)


def import_graph() -> dict[str, set[str]]:
    return {name: {i.target for i in imports_of(name) if (name, i.target) not in TYPE_ONLY_UP} for name in EVERY}


def test_no_import_cycles():
    graph = import_graph()
    state: dict[str, int] = {}  # 1 on the current path, 2 done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for nxt in sorted(graph[name]):
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt) :] + [name, nxt] if nxt in path else [name, nxt]
                pytest.fail(f"import cycle: {' -> '.join(cycle)}")
            if nxt not in state:
                visit(nxt, [*path, name])
        state[name] = 2

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
    for name in graph:
        if name not in state:
            visit(name, [])


def test_the_architecture_pages_map_is_the_floors():
    """docs/architecture.md's map lists each floor's packages and modules, lowest last, as FLOORS has them."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    start = page.index("<!-- floors: checked by tests/test_layout.py -->")
    end = page.index("<!-- /floors -->")
    rows = [line for line in page[start:end].splitlines() if line.startswith("| ") and "---" not in line][1:]
    drawn = [tuple(sorted(c.strip("` ") for c in row.split("|")[2].split(","))) for row in reversed(rows)]
    assert drawn == [tuple(sorted(f if f else "__init__" for f in floor)) for floor in FLOORS]


INTEGRATIONS = "oncall_memory.integrations"


def integration_of(name: str) -> str | None:
    """`oncall_memory.integrations.pagerduty.notes` -> "pagerduty"; None outside a vendor's package (a module
    beside the packages, `integrations/loose.py`, is shared by them all, as `integrations` itself is)."""
    parts = name.split(".")
    inside = name.startswith(INTEGRATIONS + ".") and len(parts) > 2
    return parts[2] if inside and (PACKAGE / "integrations" / parts[2]).is_dir() else None


def test_each_integration_keeps_to_itself_and_the_core():
    """A vendor's package imports the core (and what `integrations/` shares), never another vendor's package;
    below the integrations' floor nothing names one (the registry loads them by name), as the floors hold."""
    for name in MODULES:
        vendor = integration_of(name)
        if vendor is not None:
            others = {i.target for i in imports_of(name) if integration_of(i.target) not in (None, vendor)}
            assert not others, f"{name} imports another integration: {sorted(others)}"


def test_there_is_one_web_link_rule():
    """Every place a link from outside is shown or posted uses links.web_link (there were three rules, one of
    them not stripping white space)."""
    for name, path in MODULES.items():
        text = path.read_text()
        if name != "oncall_memory.links":
            assert 'startswith(("https://", "http://"))' not in text and "_SAFE_URL" not in text, name


def environment_reads(tree: ast.AST) -> list[str]:
    """The ONCALL_MEMORY_* names read from the environment: os.environ[...], .get(...), os.getenv(...),
    "..." in os.environ."""

    def is_environ(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "environ"

    def ours(node: ast.AST) -> str | None:
        ok = isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("ONCALL_MEMORY_")
        return node.value if ok else None  # type: ignore[union-attr]

    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and is_environ(node.value):
            names.append(ours(node.slice))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute):
            if node.func.attr == "getenv" or (node.func.attr == "get" and is_environ(node.func.value)):
                names.append(ours(node.args[0]))
        elif isinstance(node, ast.Compare) and any(is_environ(c) for c in node.comparators):
            names.append(ours(node.left))
    return [n for n in names if n]


def test_only_settings_reads_our_variables():
    assert environment_reads(ast.parse('os.environ.get("ONCALL_MEMORY_X") or "ONCALL_MEMORY_Y" in os.environ')) == [
        "ONCALL_MEMORY_X",
        "ONCALL_MEMORY_Y",
    ]
    for name, path in MODULES.items():
        if name != "oncall_memory.settings":
            read = environment_reads(ast.parse(path.read_text()))
            assert not read, f"{name} reads {read} from the environment: read it in settings.py"


def test_only_deps_and_the_factory_touch_the_apps_state():
    allowed = {"oncall_memory.service.deps", "oncall_memory.service.app"}
    for name, path in MODULES.items():
        if name not in allowed:
            assert "request.app.state" not in path.read_text(), (
                f"{name} reads request.app.state: add a provider to deps.py"
            )


def test_every_module_says_what_it_owns():
    missing = [
        name
        for name, path in MODULES.items()
        if path.stat().st_size and not ast.get_docstring(ast.parse(path.read_text()))
    ]
    assert not missing, f"modules without a docstring: {missing}"


def test_memory_stays_a_facade():
    tree = ast.parse(MODULES["oncall_memory.memory"].read_text())
    (memory,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Memory"]
    lines = memory.end_lineno - memory.lineno + 1
    assert lines <= 235, f"Memory is {lines} lines: move what it does into the module that owns it"


def test_a_lookup_on_the_embedded_store_loads_no_heavy_stack(tmp_path):
    import os
    import subprocess
    import sys

    fixtures = PACKAGE.parent / "fixtures" / "incidents.jsonl"
    env = {**os.environ, "ONCALL_MEMORY_DATA_DIR": str(tmp_path / "data"), "ONCALL_MEMORY_EMBEDDER": "fake"}
    subprocess.run([sys.executable, "-m", "oncall_memory.cli", "ingest", str(fixtures)], env=env, check=True)
    probe = (
        "import sys\n"
        "from oncall_memory.cli import main\n"
        "sys.argv = ['oncall-memory', 'similar', 'pods crash looping', '--json']\n"
        "code = main()\n"
        # http.client: what asks a running service, imported only when there is one (20 ms of a CLI's start).
        "heavy = sorted(m for m in ('qdrant_client', 'prefect', 'fastapi', 'torch', 'http.client') if m in sys.modules)\n"
        "print('HEAVY', heavy, code, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=300)
    assert "HEAVY [] 0" in done.stderr, done.stderr[-2000:]


def test_every_public_name_imports_from_the_package():
    """`from oncall_memory import read_jsonl` (the package docstring's example) broke when the core was
    grouped by stage: the lazy export table still named the old flat modules. Each name must resolve, to the
    object its module defines."""
    import importlib

    import oncall_memory

    for name, module in oncall_memory._EXPORTS.items():
        assert getattr(oncall_memory, name) is getattr(importlib.import_module(f"oncall_memory.{module}"), name), name


def test_every_built_in_source_is_found_through_the_hook_a_plugin_offers():
    """Each built-in integration with a source offers `source(settings, path)` on its package, as an installed
    one does, and the name stays that function once the package's modules are imported (a submodule named
    `source` would take it over: the source lives in `backlog.py`)."""
    import inspect
    import pkgutil
    from importlib import import_module

    from oncall_memory.sources.factory import BUILT_IN

    for name in BUILT_IN:
        if name == "jsonl":  # files: the core's own
            continue
        package = import_module(f"{INTEGRATIONS}.{name}")
        for module in pkgutil.iter_modules(package.__path__):
            import_module(f"{package.__name__}.{module.name}")
        assert inspect.isfunction(package.source), f"{name}: `source` is {package.source!r}"
        assert list(inspect.signature(package.source).parameters)[:2] == ["settings", "path"], name


def test_the_built_in_sources_named_for_the_help_are_the_packages_that_offer_one():
    """`integrations.BUILT_IN_SOURCES` lets the CLI's help name the sources without importing a package: it
    must be exactly the built-in packages whose `source` hook is a function, in `BUILT_IN`'s order."""
    import inspect
    from importlib import import_module

    from oncall_memory.integrations import BUILT_IN, BUILT_IN_SOURCES

    offering = [
        n for n in BUILT_IN if inspect.isfunction(getattr(import_module(f"{INTEGRATIONS}.{n}"), "source", None))
    ]
    assert list(BUILT_IN_SOURCES) == offering


# Issue 53's goal is a core that names no vendor outside `integrations/` (docstrings aside): no module imports,
# names or branches on an integration. Three modules name a product as data about that product, not as an
# integration of ours, each only by the words given here (and none imports an integration).
VENDORS = sorted(p.name for p in (PACKAGE / "integrations").iterdir() if (p / "__init__.py").exists())
NAMING_A_PRODUCT_AS_DATA = {
    "redact/vendors.py": {"github", "gitlab", "grafana", "slack"},  # their tokens' formats: what redaction finds
    "domain/label_facts.py": {"alertmanager"},  # Alertmanager's own scrape job: the monitoring, not the service
    "sources/git_links.py": {"gitlab"},  # how a GitLab host addresses a file at a commit (`/-/blob/`)
}


def vendors_named(path: Path) -> set[str]:
    """The vendors a module names in code: imports, names, attributes, arguments and string literals, its
    docstrings left out (a docstring may give an example)."""
    pattern = re.compile("|".join(v.replace("_", "[_.]?") for v in VENDORS), re.IGNORECASE)
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    words: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words.append(node.value)
        elif isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, ast.arg):
            words.append(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            words.append(node.name)
        elif isinstance(node, ast.ImportFrom):
            words += [node.module or "", *(a.name for a in node.names)]
        elif isinstance(node, ast.Import):
            words += [a.name for a in node.names]
    return {m.lower() for w in words for m in pattern.findall(w)}


def test_no_module_outside_the_integrations_starts_naming_a_vendor(tmp_path):
    naming = {
        str(path.relative_to(PACKAGE)): named
        for path in PACKAGE.rglob("*.py")
        if path.relative_to(PACKAGE).parts[0] != "integrations" and (named := vendors_named(path))
    }
    beyond = {m: n - NAMING_A_PRODUCT_AS_DATA.get(m, set()) for m, n in naming.items()}
    assert not {m: n for m, n in beyond.items() if n}, f"names a vendor outside integrations/: {beyond}"
    assert naming == NAMING_A_PRODUCT_AS_DATA, f"no longer names what it did: {NAMING_A_PRODUCT_AS_DATA} / {naming}"
    for module in NAMING_A_PRODUCT_AS_DATA:
        assert "integrations" not in (PACKAGE / module).read_text(), module  # data, not an integration
    # The rule can see what it looks for: an import, a string and a name each count; a docstring does not.
    probe = tmp_path / "probe.py"
    probe.write_text('"""Posts to PagerDuty."""\nX = 1\n')
    assert vendors_named(probe) == set()
    probe.write_text('"""x"""\nfrom .integrations.opsgenie import webhook\nURL = "https://slack.com"\n')
    assert vendors_named(probe) == {"opsgenie", "slack"}


def test_modules_that_moved_into_the_domain_still_import_by_their_old_paths():
    """Issue 53 grouped the domain (`domain/`), the agents' door (`mcp/`) and renamed `signatures.py`
    (`credentials.py`); a plugin written against an old path gets the same module, not a copy."""
    import importlib

    import oncall_memory

    for old, new in oncall_memory._MOVED.items():
        assert not (PACKAGE / f"{old}.py").exists(), old  # the top level holds stages, not the domain's parts
        moved = importlib.import_module(f"oncall_memory.{new}")
        assert importlib.import_module(f"oncall_memory.{old}") is moved, old
    from oncall_memory.domain.incident import Incident  # as a plugin writes it

    assert Incident is oncall_memory.Incident
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("oncall_memory.no_such_module")


def test_the_architecture_pages_pager_example_is_the_code():
    """docs/architecture.md shows Alertmanager's hook as the worked example of a pager: it is that class."""
    import inspect

    from oncall_memory.integrations.alertmanager.webhook import AlertmanagerHook

    page = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    assert f"```python\n{inspect.getsource(AlertmanagerHook)}```" in page


# Files held to the 450-line ceiling: the package and the lab (what a newcomer reads to learn the code).
CEILING = 450


def test_no_module_is_over_the_ceiling():
    long = {name: n for name, path in EVERY.items() if (n := len(path.read_text().splitlines())) > CEILING}
    assert not long, f"over {CEILING} lines (split by what each part owns): {long}"


def test_every_error_is_under_one_tree_drawn_in_errors_docstring():
    """Every exception class the package defines is an `OncallMemoryError` (one private `ValueError` aside,
    which pydantic's validators need), and errors.py's docstring draws each by name."""
    import importlib
    import inspect

    import oncall_memory.errors as errors

    outside, undrawn = [], []
    for name in MODULES:
        if name.endswith("__main__"):
            continue
        module = importlib.import_module(name)
        for value in vars(module).values():
            if not (inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == name):
                continue
            if not issubclass(value, errors.OncallMemoryError) and f"{name}.{value.__name__}" != (
                "oncall_memory.service.request_body._Refused"
            ):
                outside.append(f"{name}.{value.__name__}")
            elif not value.__name__.startswith("_") and not re.search(rf"\b{value.__name__}\b", errors.__doc__ or ""):
                undrawn.append(value.__name__)
    assert not outside, f"errors outside OncallMemoryError: {outside}"
    assert not undrawn, f"errors.py's tree does not draw {undrawn}"
