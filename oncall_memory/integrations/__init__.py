"""Integrations: each vendor in one package, `integrations/<name>/`, holding what the core needs of it, as
far as the vendor has each: its webhook (payload models, how an alert and its facts are read from them, the
jobs they become, its auth check), its API client, its source (the backlog), its targets (notes, messages)
and its learner (resolved -> remembered).

The core defines the ports an integration fills: `sources.Source` (a backlog), `webhook.Webhook` (a pager's
webhook, making `jobs.Job`s), `targets.Target` (where an answer goes; a learner is a target of the memory).
The service routes webhooks to the integrations and runs their targets through the outbox; the CLI and the
flow find sources by name (`sources.factory`), built-in and installed alike through the `source` hook on
the integration's package (a built-in keeps its source in `backlog.py`, so no submodule takes the name).
Beside the built-in ones, any installed package can declare an integration in the
`oncall_memory.integrations` entry-point group (as llm finds its plugins): the entry point names either a
module (or object) offering any of

- `source(settings, path) -> Source`, for `ingest --source <name>`;
- `webhook`, a `Webhook`, mounted at `POST /webhooks/<its name>`;
- `targets(settings) -> list[Target]`, where the service also sends answers, and `targets_need`, what to
  set for them in words (said when answers would go nowhere);
- `refiners(settings) -> list[Refiner]`, each reading a job's alerts further before they are looked up (what
  a pager's webhook leaves out, read back from its API; `jobs.Refiner`);
- `learners(settings, memory) -> list[Target]`, targets through which the memory learns (a closed incident
  read back and remembered); the service's startup line names what each `learns`;
- `live_incidents(settings) -> LiveIncidents | None`, a pager's live incidents for the agents' door (an
  agent reads one and posts a finding on it; `live.LiveIncidents`);
- `chat_app`, a `chat.ChatApp` subclass: a chat's app (a slash command, buttons under each suggestion), mounted
  at `POST /<its name>/commands` and `/<its name>/interactions`, built when the service starts if its
  settings turn it on;
- `settings_group`, its settings: a `settings.SettingsGroup` whose `env_prefix` is `ONCALL_MEMORY_<NAME>_`.
  `Settings` merges it under the integration's name (`settings.<name>.<field>`), read from the environment
  by its own variables and given by flat names (`Settings(<name>_<field>=...)`), as the built-in groups are;

or just a source's factory (the first shape, still read). A built-in offers the same hooks from its package
(its group in `config.py`).

Integrations import the core, never the service or the CLI, and never each other.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from .payload import Loose as Loose

ENTRY_POINT_GROUP = "oncall_memory.integrations"
BUILT_IN = (
    "pagerduty",
    "alertmanager",
    "opsgenie",
    "grafana",
    "slack",
    "jira",
    "servicenow",
    "github",
    "gitlab",
    "incident_io",
    "rootly",
)

BUILT_IN_WHERE = "built in"  # a Plugin's `where` when it is one of ours
log = logging.getLogger(__name__)


# The built-in integrations whose package offers the `source` hook, in `BUILT_IN`'s order: named here so that
# the CLI's help lists them without importing a package (tests/test_layout.py holds it to the packages).
BUILT_IN_SOURCES = ("pagerduty", "jira", "servicenow", "github", "gitlab", "incident_io", "rootly")


def __getattr__(name: str) -> Any:
    # `Loose` (pydantic) is imported when a vendor's payload needs it: the CLI's parser reads this module's
    # names, and a command that parses no payload should not import pydantic for that.
    if name == "Loose":
        from .payload import Loose

        return Loose
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def plugins(taken: tuple[str, ...] = ()) -> dict[str, EntryPoint]:
    """The integrations installed packages declare, by name (a name in `taken`, a built-in's, cannot be
    taken over)."""
    from importlib.metadata import entry_points  # here: the CLI's parser imports this module, and needs none

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name not in taken}


@dataclass(frozen=True)
class Plugin:
    """What one installed integration offers the service (its source is found by `sources.factory`)."""

    name: str
    where: str  # its entry point, for messages: "zabbix = oncall_memory_zabbix"; BUILT_IN_WHERE for ours
    webhook: Any = None  # a webhook.Webhook
    targets: Callable[..., list[Any]] | None = None  # settings -> [targets.Target]
    learners: Callable[..., list[Any]] | None = None  # settings, memory -> [targets.Target]
    targets_need: str | None = None  # what to set for its targets, in words
    refiners: Callable[..., list[Any]] | None = None  # settings -> [jobs.Refiner]
    chat_app: Any = None  # a chat.ChatApp subclass
    live_incidents: Callable[..., Any] | None = None  # settings -> live.LiveIncidents | None


# The hooks a `Plugin` holds, by the names a package offers them under (its fields after `name` and `where`).
SERVICE_HOOKS = ("webhook", "targets", "learners", "targets_need", "refiners", "chat_app", "live_incidents")


def _plugin(name: str, where: str, offerer: Any, read: Callable[[Any, str], Any]) -> Plugin | None:
    """The plugin of what `offerer` (a package or a loaded entry point) offers of `SERVICE_HOOKS`, each read by
    `read(offerer, hook)`; None when it offers none of them (a source's factory alone: nothing for the service)."""
    offered = {h: read(offerer, h) for h in SERVICE_HOOKS}
    return Plugin(name, where, **offered) if any(v is not None for v in offered.values()) else None


def built_in_webhooks() -> list[Any]:
    """The webhooks the built-in integrations offer through the hook: every built-in pager's and learner's."""
    return [p.webhook for p in _built_in() if p.webhook is not None]


def _built_in() -> list[Plugin]:
    found = []
    for name in BUILT_IN:
        package = importlib.import_module(f"{__name__}.{name}")
        if (plugin := _plugin(name, BUILT_IN_WHERE, package, _hook)) is not None:
            found.append(plugin)
    return found


def targets_hint(offered: list[Plugin]) -> str:
    """What to set so that answers go somewhere: each integration's `targets_need`, for the line said at start
    and when an alert arrives with nowhere to go."""
    needs = [p.targets_need for p in offered if isinstance(p.targets_need, str) and p.targets_need]
    return "set " + "; or ".join(needs) if needs else "no integration here posts answers"


def lazy_webhook(package: str, hook: str) -> Callable[[str], Any]:
    """A built-in package's module `__getattr__` that builds its `webhook` hook (the class `hook` in its
    `webhook.py`) when first asked for: `Settings` reads the package for its settings group, and a command
    that posts nothing should not import the webhook's models."""

    def __getattr__(name: str) -> Any:
        if name != "webhook":
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        built = getattr(importlib.import_module(f"{package}.webhook"), hook)()
        vars(sys.modules[package])["webhook"] = built  # once: the submodule of that name no longer stands in
        return built

    return __getattr__


def _attribute(loaded: Any, name: str) -> Any:
    return getattr(loaded, name, None)


def _hook(package: ModuleType, name: str) -> Any:
    """A built-in package's hook. Its submodules `webhook.py` and `targets.py` are its own code, not these
    hooks: a package builds its `webhook` when first asked (its module `__getattr__`), and once the submodule
    of that name has been imported, the submodule stands in the attribute's place until the hook is asked
    for by that function."""
    value = getattr(package, name, None)
    if isinstance(value, ModuleType):
        lazy = vars(package).get("__getattr__")
        try:
            value = lazy(name) if lazy is not None else None
        except AttributeError:
            value = None
    return value


def service_plugins() -> list[Plugin]:
    """The integrations with a webhook or targets offered through the hooks, built in (their package offers
    them, as `grafana` does) and installed, loaded. An installed one that cannot be loaded is logged with its
    entry point and left out: a broken plugin does not keep the service down."""
    found = _built_in()
    for name, ep in sorted(plugins(BUILT_IN).items()):
        where = f"{ep.name} = {ep.value}"
        try:
            loaded = ep.load()
        except Exception as exc:
            log.error(
                "the integration %s (entry point %s) could not be loaded: %s: %s", name, where, type(exc).__name__, exc
            )
            continue
        if (plugin := _plugin(name, where, loaded, _attribute)) is not None:
            found.append(plugin)
    return found


def live_incidents(settings: Any, offered: list[Plugin] | None = None) -> Any | None:
    """The live incidents (`live.LiveIncidents`) of the first integration whose settings turn them on, built
    in first, then installed (`offered`: the service's plugins, else found here): what the MCP server offers
    an agent beside the memory. One that fails to build is logged and passed over."""
    from ..live import LiveIncidents

    for plugin in service_plugins() if offered is None else offered:
        if plugin.live_incidents is None:
            continue
        try:
            live = plugin.live_incidents(settings)
        except Exception as exc:
            log.error(
                "the integration %s could not offer its live incidents: %s: %s", plugin.where, type(exc).__name__, exc
            )
            continue
        if isinstance(live, LiveIncidents):
            return live
    return None


def settings_groups() -> dict[str, type[Any]]:
    """Each integration's settings group by its name, built in and installed: what `Settings` merges. Read
    once per `sys.path` (finding the entry points costs tens of milliseconds, and a `Settings` is built often);
    a package installed while the process runs is found by the next `Settings` once `sys.path` names it."""
    return dict(_settings_groups(tuple(sys.path)))


@lru_cache(maxsize=4)
def _settings_groups(path: tuple[str, ...]) -> tuple[tuple[str, type[Any]], ...]:
    from pydantic_settings import BaseSettings

    found: list[tuple[str, type[Any]]] = []
    for name in BUILT_IN:
        group = getattr(importlib.import_module(f"{__name__}.{name}"), "settings_group", None)
        if isinstance(group, type) and issubclass(group, BaseSettings):
            found.append((name, group))
    for name, ep in sorted(plugins(BUILT_IN).items()):
        where = f"{ep.name} = {ep.value}"
        try:
            group = getattr(ep.load(), "settings_group", None)
        except Exception:  # service_plugins() says why when the service starts; settings go on without it
            continue
        if not (isinstance(group, type) and issubclass(group, BaseSettings)):
            continue  # no settings of its own
        wanted = f"ONCALL_MEMORY_{name.upper()}_"
        if group.model_config.get("env_prefix") != wanted or not name.isidentifier():
            # Its variables would not be its own (or its name is no attribute): another group's, or none.
            log.error(
                "the integration %s (entry point %s): its settings are left out: their env_prefix must be %r",
                name,
                where,
                wanted,
            )
            continue
        found.append((name, group))
    return tuple(found)
