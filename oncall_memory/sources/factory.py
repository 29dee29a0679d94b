"""Build the source a setting or a command names: the built-in ones, then any a package adds.

A package adds a source by declaring an entry point in the `oncall_memory.integrations` group (as llm
finds its plugins): its name is the source's name, its object the integration's module offering
`source(settings, path) -> Source` (beside a webhook or targets, see `integrations`), or that callable:

    [project.entry-points."oncall_memory.integrations"]
    opsnotes = "oncall_memory_opsnotes"
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import EntryPoint
from pathlib import Path
from types import ModuleType

from ..errors import InvalidInput
from ..integrations import ENTRY_POINT_GROUP
from ..integrations import plugins as installed
from ..settings import Settings
from . import Source
from .jsonl import JsonlSource

BUILT_IN = ("jsonl", "pagerduty", "jira", "servicenow", "github", "gitlab", "incident_io", "rootly")


def plugins() -> dict[str, EntryPoint]:
    """The sources installed packages add, by name (a built-in name cannot be taken over)."""
    return installed(taken=BUILT_IN)


def source_names() -> list[str]:
    return [*BUILT_IN, *sorted(plugins())]


def make_source(settings: Settings, source: str, path: str | None, *, follow_open: bool = True) -> Source:
    """The source `source` names. `follow_open`: a PagerDuty source remembers incidents seen open and
    looks at them again on later runs (what a schedule wants, not a one-shot backfill)."""
    if source == "jsonl":
        if not path:
            raise InvalidInput("the jsonl source needs --path (a JSONL file, a post-mortem, or a folder of them)")
        return JsonlSource(Path(path))
    if source == "pagerduty":
        from ..integrations.pagerduty import PagerDutyAPI
        from ..integrations.pagerduty.source import PagerDutySource

        if settings.pagerduty.token is None:
            raise InvalidInput("the pagerduty source needs ONCALL_MEMORY_PAGERDUTY_TOKEN (a REST API key)")
        state = settings.dir.pagerduty_open if follow_open else None
        return PagerDutySource(
            PagerDutyAPI.from_settings(settings), service_ids=settings.pagerduty.service_ids, state_file=state
        )
    if source == "jira":
        from ..integrations.jira.source import JiraSource

        return JiraSource.from_settings(settings)
    if source == "servicenow":
        from ..integrations.servicenow.source import ServiceNowSource

        return ServiceNowSource.from_settings(settings)
    if source == "github":
        from ..integrations.github.source import GitHubSource

        return GitHubSource.from_settings(settings)
    if source == "gitlab":
        from ..integrations.gitlab.source import GitLabSource

        return GitLabSource.from_settings(settings)
    if source == "incident_io":
        from ..integrations.incident_io.source import IncidentIoSource

        return IncidentIoSource.from_settings(settings)
    if source == "rootly":
        from ..integrations.rootly.source import RootlySource

        return RootlySource.from_settings(settings)
    plugin = plugins().get(source)
    if plugin is None:
        raise InvalidInput(f"unknown source {source!r}: use one of {', '.join(source_names())}")
    return _from_plugin(plugin, settings, path)


def _from_plugin(plugin: EntryPoint, settings: Settings, path: str | None) -> Source:
    where = f"the source {plugin.name!r} ({plugin.value}, from the {ENTRY_POINT_GROUP} entry points)"
    try:
        loaded = plugin.load()
    except Exception as exc:  # a broken plugin is a message naming it, not a traceback of ours
        raise InvalidInput(f"{where} could not be loaded: {type(exc).__name__}: {exc}") from exc
    # The entry point names the integration (offering `source`) or the source's factory itself.
    factory: Callable[[Settings, str | None], object] | None = getattr(loaded, "source", None)
    if factory is None and not isinstance(loaded, ModuleType) and callable(loaded):
        factory = loaded
    if factory is None:
        raise InvalidInput(f"{where} offers no source (its webhook or targets are the service's)")
    made = factory(settings, path)
    if not isinstance(made, Source):
        raise InvalidInput(f"{where} gave a {type(made).__name__}, not an oncall_memory.sources.Source")
    return made
