"""Every hook an integration can offer, with its signature: the plugin contract, as pluggy reads it.

An integration (built in, or an installed package's `oncall_memory.integrations` entry point) offers any of
these, by these names. Write each as a function marked with `oncall_memory.plugin.hookimpl`; a module that
offers them as plain attributes (`webhook = MyHook()`, `settings_group = MySettings`, an unmarked
`def source(settings, path)`), as the built-in packages and plugins written before this contract do, is read
the same way. A name close to a hook's that is not one (`webhok`), or a hook whose arguments are not the
spec's, is refused when the plugin loads, in one line naming it (`plugins.PluginError`).

The four hooks that give a thing rather than build one (`webhook`, `targets_need`, `chat_app`,
`settings_group`) take no argument. Every hook may give None: the integration does not offer it here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    # The one import up the floors, for types only: the hooks' arguments and results are the public module's
    # names (tests/test_layout.py names this import; at run time this module imports pluggy alone).
    from .plugin import ChatApp, LiveIncidents, Memory, Refiner, Settings, SettingsGroup, Source, Target, Webhook

PROJECT = "oncall_memory"
hookspec = pluggy.HookspecMarker(PROJECT)


@hookspec
def source(settings: Settings, path: str | None) -> Source | None:
    """The backlog `ingest --source <name>` and `schedule --source <name>` read. `path` is what the user gave
    after the name, None when they gave none (a schedule, the service's timer): a source that needs one
    raises `InvalidInput` naming it; one that reads an API ignores it."""


@hookspec
def webhook() -> Webhook | None:
    """The pager's webhook, mounted at `POST /webhooks/<its name>` (one instance, built once per service)."""


@hookspec
def targets(settings: Settings) -> list[Target] | None:
    """Where the service also sends answers (an empty list while unconfigured); delivered through the outbox."""


@hookspec
def targets_need() -> str | None:
    """What to set for this integration's targets, in words: said when answers would go nowhere."""


@hookspec
def learners(settings: Settings, memory: Memory) -> list[Target] | None:
    """Targets through which the memory learns: each takes its webhook's `<name>-learn:` jobs, reads the
    closed incident back and remembers it. Each says what it learns in `learns`."""


@hookspec
def refiners(settings: Settings) -> list[Refiner] | None:
    """Callables that read a job's alerts further before the lookup (what the webhook left out)."""


@hookspec
def live_incidents(settings: Settings) -> LiveIncidents | None:
    """The pager's live incidents, for the agents' door (read one as an alert, post a note on one); None
    while its settings do not allow it."""


@hookspec
def chat_app() -> type[ChatApp] | None:
    """A chat's app (a `ChatApp` subclass): a slash command and buttons under each suggestion, mounted at
    `POST /<its name>/commands` and `/<its name>/interactions`."""


@hookspec
def settings_group() -> type[SettingsGroup] | None:
    """The integration's settings (a `SettingsGroup` subclass whose `env_prefix` is `ONCALL_MEMORY_<NAME>_`),
    merged into `Settings` as `settings.<name>`."""


# The hooks that give a thing rather than build one: offered as a plain attribute, the thing itself.
GIVEN = ("webhook", "targets_need", "chat_app", "settings_group")
HOOKS = (
    "source",
    "webhook",
    "targets",
    "targets_need",
    "learners",
    "refiners",
    "live_incidents",
    "chat_app",
    "settings_group",
)
