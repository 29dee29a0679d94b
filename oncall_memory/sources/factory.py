"""Build the source a setting or a command names: files, the built-in integrations' and any a package adds,
each through the same hook: `source(settings, path) -> Source` on the integration's module.

A package adds a source by declaring an entry point in the `oncall_memory.integrations` group (as llm
finds its plugins): its name is the source's name, its object the integration's module offering
`source(settings, path) -> Source` (beside a webhook or targets, see `integrations`), or that callable:

    [project.entry-points."oncall_memory.integrations"]
    opsnotes = "oncall_memory_opsnotes"
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from importlib import import_module
from importlib.metadata import EntryPoint
from pathlib import Path
from types import ModuleType
from typing import Any

from ..domain.incident import Incident
from ..domain.rejected import Rejected
from ..errors import InvalidInput, OncallMemoryError, SourceFailed
from ..plugins import ENTRY_POINT_GROUP, built_in_sources
from ..plugins import plugins as installed
from ..settings import Settings
from . import Source, Window
from .jsonl import JsonlSource


def built_in() -> tuple[str, ...]:
    """The built-in sources: files (`jsonl`), then each built-in integration whose package offers the
    `source` hook, in `integrations.BUILT_IN`'s order."""
    return ("jsonl", *built_in_sources())


def _package(name: str) -> Any:
    return import_module(f"..integrations.{name}", __package__)


def __getattr__(name: str) -> Any:
    if name == "BUILT_IN":  # the tuple it was, found from the integrations when first asked for
        return built_in()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def plugins() -> dict[str, EntryPoint]:
    """The sources installed packages add, by name (a built-in name cannot be taken over)."""
    return installed(taken=built_in())


def source_names() -> list[str]:
    return [*built_in(), *sorted(plugins())]


def make_source(settings: Settings, source: str, path: str | None, *, follow_open: bool = True) -> Source:
    """The source `source` names: files, or an integration's, built-in or installed, each through the same
    hook (`source(settings, path)` on its module), as llm loads its default plugins beside installed ones.
    `follow_open`: a schedule's run (PagerDuty remembers incidents seen open and looks at them again on
    later runs); False for a one-shot backfill (`Source.one_shot`)."""
    if source == "jsonl":
        if not path:
            raise InvalidInput("the jsonl source needs --path (a JSONL file, a post-mortem, or a folder of them)")
        return JsonlSource(Path(path))
    if source in built_in():
        made = _from_integration(_package(source), f"the built-in source {source!r}", settings, path)
    else:
        plugin = plugins().get(source)
        if plugin is None:
            raise InvalidInput(f"unknown source {source!r}: use one of {', '.join(source_names())}")
        made = _from_plugin(plugin, settings, path)
    if not follow_open:
        made.one_shot()
    return made


def _from_plugin(plugin: EntryPoint, settings: Settings, path: str | None) -> Source:
    where = f"the source {plugin.name!r} ({plugin.value}, from the {ENTRY_POINT_GROUP} entry points)"
    try:
        loaded = plugin.load()
    except Exception as exc:  # a broken plugin is a message naming it, not a traceback of ours
        raise InvalidInput(f"{where} could not be loaded: {type(exc).__name__}: {exc}") from exc
    try:
        made = _from_integration(loaded, where, settings, path)
    except OncallMemoryError:
        raise
    except Exception as exc:
        raise InvalidInput(f"{where} could not start: {type(exc).__name__}: {exc}") from exc
    return PluginSource(made, where)


class PluginSource(Source):
    """An installed source, kept to one rule the built-in ones keep by construction: whatever it raises
    reaches the user as one line naming the plugin (a `SourceFailed`), never a traceback of ours that
    hides whose bug it was. Its own `SourceFailed` and `InvalidInput` pass through as they are."""

    def __init__(self, inner: Source, where: str):
        self.inner, self.where = inner, where
        self.name = getattr(inner, "name", "plugin")
        self.whole_backlog = bool(getattr(inner, "whole_backlog", False))

    def incidents(self, window: Window | None) -> Iterator[Incident | Rejected]:
        try:
            yield from self.inner.incidents(window)
        except OncallMemoryError:
            raise
        except Exception as exc:
            raise SourceFailed(f"{self.where} failed: {type(exc).__name__}: {exc}") from exc

    def one_shot(self) -> None:
        self.inner.one_shot()

    def close(self) -> None:
        try:
            self.inner.close()
        except Exception as exc:
            raise SourceFailed(f"{self.where} failed to close: {type(exc).__name__}: {exc}") from exc


def _from_integration(loaded: object, where: str, settings: Settings, path: str | None) -> Source:
    """The source an integration's module offers (`source`), or that a plugin's entry point names itself."""
    factory: Callable[[Settings, str | None], object] | None = getattr(loaded, "source", None)
    if factory is None and not isinstance(loaded, ModuleType) and callable(loaded):
        factory = loaded
    if factory is None:
        raise InvalidInput(f"{where} offers no source (its webhook or targets are the service's)")
    made = factory(settings, path)
    if not isinstance(made, Source):
        raise InvalidInput(f"{where} gave a {type(made).__name__}, not an oncall_memory.sources.Source")
    return made
