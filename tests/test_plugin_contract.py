"""The plugin contract (issue 83): one public module with a pinned `__all__`, every hook in `hookspecs` with its
signature and docstring, built-in integrations registered as installed ones are, and a misspelt hook refused
as the plugin loads, in one line."""

from __future__ import annotations

import inspect
import logging
import sys
import types
import warnings

import pytest

import oncall_memory.plugin as public
from oncall_memory import hookspecs
from oncall_memory.errors import PluginError
from oncall_memory.plugins import BUILT_IN_WHERE, Registry, offering, registry

# What a plugin author may import. Adding a name is a decision (docs/plugins.md's table names each); taking
# one away breaks plugins, so this list changes only with the guide.
PINNED = [
    "Alert",
    "Answer",
    "ChatApp",
    "DeliveryError",
    "Filters",
    "Fix",
    "Incident",
    "InvalidInput",
    "Item",
    "Job",
    "LiveIncidents",
    "Loose",
    "Memory",
    "OncallMemoryError",
    "Outcome",
    "PluginError",
    "Refiner",
    "Rejected",
    "Settings",
    "SettingsGroup",
    "Source",
    "SourceFailed",
    "Target",
    "Webhook",
    "Window",
    "check",
    "hookimpl",
    "job_note",
    "same_secret",
    "transport_failure",
    "validation_message",
]


def test_the_public_module_exports_exactly_the_pinned_names_each_the_packages_own():
    assert public.__all__ == PINNED
    from oncall_memory.domain.incident import Incident
    from oncall_memory.sources import Source

    for name in PINNED:
        assert getattr(public, name) is not None, name
    assert public.Incident is Incident and public.Source is Source
    guide = public.__file__.rsplit("/oncall_memory/", 1)[0] + "/docs/plugins.md"
    text = open(guide, encoding="utf-8").read()
    unnamed = [n for n in PINNED if f"`{n}" not in text]
    assert not unnamed, f"docs/plugins.md's table does not name {unnamed}"
    with pytest.raises(AttributeError):
        public.Outbox  # noqa: B018  (internal: not part of the contract)


def test_every_hook_has_a_spec_with_its_signature_and_docstring():
    specs = {n: f for n, f in vars(hookspecs).items() if hasattr(f, "oncall_memory_spec")}
    assert sorted(specs) == sorted(hookspecs.HOOKS)
    for name, spec in specs.items():
        assert inspect.getdoc(spec), name
        assert inspect.signature(spec).return_annotation != inspect.Signature.empty, name
    assert set(hookspecs.GIVEN) <= set(hookspecs.HOOKS)
    assert all(not inspect.signature(specs[h]).parameters for h in hookspecs.GIVEN)


def test_the_built_in_integrations_are_registered_on_the_same_manager_as_installed_ones():
    from oncall_memory.integrations import BUILT_IN

    found = registry()
    assert [n for n in found.names() if found.where[n] == BUILT_IN_WHERE] == list(BUILT_IN)
    names = {impl.plugin_name for impl in found.manager.hook.source.get_hookimpls()}
    assert {"pagerduty", "jira", "github"} <= names
    assert found.given("alertmanager", "webhook").name == "alertmanager"


def module(name: str, code: str) -> types.ModuleType:
    made = types.ModuleType(name)
    exec(compile(code, f"<{name}>", "exec"), made.__dict__)
    return made


def fresh() -> Registry:
    import pluggy

    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    return Registry(manager)


@pytest.mark.parametrize(
    "code, said",
    [
        # a plain attribute, as plugins were written before the contract
        ("webhok = object()\n", "offers `webhok`, which is no hook: did you mean `webhook`?"),
        ("def target(settings):\n    return []\n", "offers `target`, which is no hook: did you mean `targets`?"),
        # marked with hookimpl: pluggy finds no spec of that name
        (
            "from oncall_memory.plugin import hookimpl\n@hookimpl\ndef learner(settings, memory):\n    return []\n",
            "`learner` is no hook: did you mean `learners`?",
        ),
        # an argument the spec does not give
        (
            "from oncall_memory.plugin import hookimpl\n@hookimpl\ndef targets(settings, memory):\n    return []\n",
            "`targets` takes {'memory'}, which the hook does not give: its arguments are (settings: 'Settings')",
        ),
    ],
    ids=["attribute", "unmarked-function", "marked-function", "argument"],
)
def test_a_misspelt_hook_is_refused_as_the_plugin_loads_in_one_line(code, said):
    with pytest.raises(PluginError) as refused:
        fresh().register("zabbix", "zabbix = oncall_memory_zabbix", module("oncall_memory_zabbix", code))
    line = str(refused.value)
    assert "\n" not in line and "zabbix" in line and said in line, line


def test_a_hook_offered_rightly_either_way_is_registered_and_read():
    marked = module(
        "marked",
        "from oncall_memory.plugin import hookimpl\n"
        "@hookimpl\ndef targets_need():\n    return 'MARKED_TOKEN'\n"
        "@hookimpl\ndef source(settings, path):\n    return ('a source', path)\n",
    )
    plain = module("plain", "targets_need = 'PLAIN_TOKEN'\ndef source(settings, path=None):\n    return path\n")
    found = fresh()
    found.register("marked", "marked = marked", marked)
    found.register("plain", "plain = plain", plain)
    assert found.given("marked", "targets_need") == "MARKED_TOKEN"
    assert found.given("plain", "targets_need") == "PLAIN_TOKEN"
    assert found.hook("marked", "source")(None, "x") == ("a source", "x")
    assert found.hook("plain", "source")(None, "y") == "y"
    from oncall_memory.integrations.offers import plugin_of

    assert plugin_of(found, "plain").targets_need == "PLAIN_TOKEN"
    # the first shape: the entry point names a source's factory alone
    assert offering("csv", "csv = m:f", lambda settings, path: path).source is not None


def test_an_installed_plugin_with_a_misspelt_hook_is_left_out_with_one_logged_line(tmp_path, monkeypatch, caplog):
    site = tmp_path / "site"
    (site / "oncall_memory_typo").mkdir(parents=True)
    (site / "oncall_memory_typo" / "__init__.py").write_text("def learner(settings, memory):\n    return []\n")
    dist = site / "oncall_memory_typo-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: oncall-memory-typo\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[oncall_memory.integrations]\ntypo = oncall_memory_typo\n")
    monkeypatch.syspath_prepend(str(site))
    from oncall_memory.integrations.offers import service_plugins

    with caplog.at_level(logging.ERROR, logger="oncall_memory"):
        names = [p.name for p in service_plugins()]
    assert "typo" not in names and "pagerduty" in names
    (line,) = [r.getMessage() for r in caplog.records if "typo" in r.getMessage()]
    assert line == (
        "the integration typo (typo = oncall_memory_typo) offers `learner`, which is no hook: did you mean `learners`?"
    )
    sys.modules.pop("oncall_memory_typo", None)


def test_an_old_path_still_imports_the_same_module_and_warns_once_with_the_date():
    import oncall_memory

    for name in [m for m in sys.modules if m in ("oncall_memory.ingest.backlog", "oncall_memory.incident")]:
        del sys.modules[name]
    oncall_memory._warned.clear()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        from oncall_memory.incident import Incident  # type: ignore[import-not-found]
        from oncall_memory.ingest.backlog import Rejected  # type: ignore[import-not-found]
    assert Incident is public.Incident and Rejected is public.Rejected
    said = [str(w.message) for w in seen if issubclass(w.category, FutureWarning)]
    assert len(said) == 1 and oncall_memory.OLD_PATHS_UNTIL in said[0] and "oncall_memory.plugin" in said[0]
