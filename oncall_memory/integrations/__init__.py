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
`oncall_memory.integrations` entry-point group (as llm finds its plugins); both are registered alike on one
pluggy manager (`oncall_memory.plugins`), with the hooks of `oncall_memory.hookspecs`:

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

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .loose import Loose as Loose

# The built-in integrations, in the order they are asked (the first that offers live incidents is the agents'):
# the registry (`oncall_memory.plugins`) registers each of these packages as it registers an installed one.
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
# The built-in integrations whose package offers the `source` hook, in `BUILT_IN`'s order: named here so that
# the CLI's help lists them without importing a package (tests/test_layout.py holds it to the packages).
BUILT_IN_SOURCES = ("pagerduty", "jira", "servicenow", "github", "gitlab", "incident_io", "rootly")


def __getattr__(name: str) -> Any:
    # `Loose` (pydantic) is imported when a vendor's payload needs it: a command that parses no payload
    # should not import pydantic for that.
    if name == "Loose":
        from .loose import Loose

        return Loose
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
