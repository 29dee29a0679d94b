"""The integrations, built in and installed, registered alike on one pluggy `PluginManager`.

Each vendor lives in one package, `integrations/<name>/`, holding what the core needs of it; any installed
package adds one by declaring an entry point in the `oncall_memory.integrations` group (as llm and datasette
find theirs). Both are registered here the same way, under the integration's name, with the hooks of
`hookspecs` (the contract, with every signature). The service, the CLI and the flow ask this module, never a
package: `service_plugins()` for what the service mounts and delivers to, `source_factory(name)` for a
source, `settings_groups()` for what `Settings` merges.

A plugin that cannot be loaded, or that offers a hook by a misspelt name or with arguments the spec does not
have, is refused with one line naming it (`PluginError`); the rest load. This module sits on the ground
floor: it imports the standard library, pluggy and the contract, and reads the core only inside functions.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import logging
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pluggy

from . import hookspecs
from .errors import PluginError
from .hookspecs import GIVEN, HOOKS, PROJECT

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

hookimpl = pluggy.HookimplMarker(PROJECT)

ENTRY_POINT_GROUP = "oncall_memory.integrations"
BUILT_IN_WHERE = "built in"  # a Plugin's `where` when it is one of ours


def built_in() -> tuple[str, ...]:
    """The built-in integrations, in the order they are asked (`integrations.BUILT_IN`: the package lists its
    members; read by name, as every integration is)."""
    return tuple(importlib.import_module(f"{__package__}.integrations").BUILT_IN)


def built_in_sources() -> tuple[str, ...]:
    """The built-in integrations that offer a source (`integrations.BUILT_IN_SOURCES`)."""
    return tuple(importlib.import_module(f"{__package__}.integrations").BUILT_IN_SOURCES)


log = logging.getLogger(__name__)


def plugins(taken: tuple[str, ...] = ()) -> dict[str, EntryPoint]:
    """The integrations installed packages declare, by name (a name in `taken`, a built-in's, cannot be
    taken over)."""
    from importlib.metadata import entry_points  # here: the CLI's parser imports this module, and needs none

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name not in taken}


# -- reading what an integration offers ----------------------------------------------------------------------


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

    __getattr__.offers = ("webhook",)  # type: ignore[attr-defined]  # what `offered` reads without building
    return __getattr__


def _attribute(offerer: Any, name: str) -> Any:
    """A hook offered as an attribute. A package's submodules `webhook.py` and `targets.py` are its own code,
    not these hooks: once such a submodule is imported it stands in the attribute's place, and the package's
    module `__getattr__` (which builds the hook) is asked instead."""
    value = getattr(offerer, name, None)
    if isinstance(value, ModuleType) and isinstance(offerer, ModuleType):
        lazy = vars(offerer).get("__getattr__")
        try:
            value = lazy(name) if lazy is not None else None
        except AttributeError:
            value = None
    return value


def offered(offerer: Any, hook: str) -> bool:
    """Whether `offerer` offers `hook` as an attribute, told without building it (a webhook built on first
    use stays unbuilt)."""
    if not isinstance(offerer, ModuleType):
        return getattr(offerer, hook, None) is not None
    own = vars(offerer)
    if own.get(hook) is not None and not isinstance(own[hook], ModuleType):
        return True
    lazy = own.get("__getattr__")
    return hook in getattr(offerer, "__all__", ()) or hook in getattr(lazy, "offers", ())


def _marked(offerer: Any) -> bool:
    """Whether `offerer` marks its hooks with `hookimpl` (the contract's own way), rather than offering them
    as plain attributes."""
    return any(
        getattr(value, f"{PROJECT}_impl", None) is not None for value in _public(offerer).values() if callable(value)
    )


def _public(offerer: Any) -> dict[str, Any]:
    names = vars(offerer) if isinstance(offerer, ModuleType) else {n: getattr(offerer, n, None) for n in dir(offerer)}
    return {n: v for n, v in names.items() if not n.startswith("_")}


def _own(offerer: Any, value: Any) -> bool:
    """Whether `value` is the offerer's own (a function it defines, an instance, a string), not a class or a
    module or a function it imports: only its own names can be meant as hooks."""
    if isinstance(value, (ModuleType, type)):
        return False
    if callable(value) and isinstance(offerer, ModuleType):
        return getattr(value, "__module__", offerer.__name__) == offerer.__name__
    return True


def misspelt(name: str) -> str | None:
    """The hook `name` is close to without being it (`webhok` -> `webhook`), or None."""
    if name in HOOKS or not name.islower():
        return None
    close = difflib.get_close_matches(name, HOOKS, n=1, cutoff=0.8)
    return close[0] if close else None


class Offering:
    """What an integration offering its hooks as plain attributes offers, as pluggy registers it: each hook a
    function marked with `hookimpl`. A hook that gives a thing is read when first called, not now."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<the hooks of {self.name}>"


def _giving(offerer: Any, hook: str) -> Callable[[], Any]:
    def give() -> Any:
        return _attribute(offerer, hook)

    give.__name__ = hook
    return give


def _building(fn: Callable[..., Any], hook: str) -> Callable[..., Any]:
    @functools.wraps(fn)  # pluggy reads the arguments of what it wraps
    def build(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    build.__name__ = hook
    return build


def offering(name: str, where: str, offerer: Any) -> Any:
    """What pluggy registers for `offerer` (a package, a module, an object, or a source's factory alone).
    Raises `PluginError` for a name that looks like a hook and is not one, or a hook that is not callable."""
    if _marked(offerer):
        return offerer  # pluggy reads its marked functions; check_pending refuses a misspelt one
    if not isinstance(offerer, (ModuleType, type)) and callable(offerer) and not _public(offerer).keys() & set(HOOKS):
        offerer = _SourceOnly(offerer)  # the first shape: the entry point names a source's factory
    for attr, value in _public(offerer).items():
        if (hook := misspelt(attr)) is not None and _own(offerer, value):
            raise PluginError(
                f"the integration {name} ({where}) offers `{attr}`, which is no hook: did you mean `{hook}`?"
            )
    found = Offering(name)
    for hook in HOOKS:
        if not offered(offerer, hook):
            continue
        if hook in GIVEN:
            impl = _giving(offerer, hook)
        else:
            value = _attribute(offerer, hook)
            if not callable(value):
                raise PluginError(
                    f"the integration {name} ({where}) offers `{hook}` as a {type(value).__name__}, not a function"
                )
            impl = _building(value, hook)
        setattr(found, hook, hookimpl(impl))
    return found


@dataclass(frozen=True)
class _SourceOnly:
    source: Callable[..., Any]


# -- the registry ---------------------------------------------------------------------------------------------


@dataclass
class Registry:
    """Every integration registered on one `PluginManager`, with where each came from, and the installed ones
    that were refused (by name: the one line that says why)."""

    manager: pluggy.PluginManager
    where: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    groups: dict[str, type[Any]] = field(default_factory=dict)  # each one's settings group (`settings_groups`)

    def register(self, name: str, where: str, offerer: Any) -> None:
        """Register what `offerer` offers as `name`. Raises `PluginError` in one line naming it."""
        registered = offering(name, where, offerer)
        try:
            self.manager.register(registered, name=name)
            self.manager.check_pending()
        except (pluggy.PluginValidationError, ValueError) as exc:
            if self.manager.has_plugin(name):
                self.manager.unregister(name=name)
            raise PluginError(f"the integration {name} ({where}): {_said(exc)}") from None
        self.where[name] = where

    def hook(self, name: str, hook: str) -> Callable[..., Any] | None:
        """The function `name` registered for `hook`, or None."""
        for impl in getattr(self.manager.hook, hook).get_hookimpls():
            if impl.plugin_name == name:
                return impl.function
        return None

    def given(self, name: str, hook: str) -> Any:
        """What `name`'s `hook` gives (a webhook, a settings group...), or None."""
        impl = self.hook(name, hook)
        return impl() if impl is not None else None

    def names(self) -> Iterator[str]:
        """The registered integrations: the built-in ones in their order, then the installed by name."""
        yield from self.where


def _said(exc: Exception) -> str:
    """pluggy's reason in our words, on one line."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if (extra := _between(str(exc), "Argument(s) ", " are declared")) is not None:
        hook = _between(text, "for hook '", "'") or "a hook"
        spec = (
            inspect.signature(getattr(hookspecs, hook)).replace(return_annotation=inspect.Signature.empty)
            if hook in HOOKS
            else "()"
        )
        return f"`{hook}` takes {extra}, which the hook does not give: its arguments are {spec}"
    if (unknown := _between(text, "unknown hook '", "'")) is not None:
        hint = misspelt(unknown)
        return f"`{unknown}` is no hook" + (
            f": did you mean `{hint}`?" if hint else f" (the hooks: {', '.join(HOOKS)})"
        )
    return text


def _between(text: str, start: str, end: str) -> str | None:
    if start not in text:
        return None
    rest = text.split(start, 1)[1]
    return rest.split(end, 1)[0]


def registry() -> Registry:
    """Every integration, registered: built in first, then each installed one that loads. Built once per
    `sys.path` (finding the entry points costs tens of milliseconds, and a `Settings` is built often); a package
    installed while the process runs is found once `sys.path` names it."""
    return _registry(tuple(sys.path))


@lru_cache(maxsize=4)
def _registry(path: tuple[str, ...]) -> Registry:
    manager = pluggy.PluginManager(PROJECT)
    manager.add_hookspecs(hookspecs)
    found = Registry(manager)
    for name in built_in():
        found.register(name, BUILT_IN_WHERE, importlib.import_module(f"{__package__}.integrations.{name}"))
    for name, ep in sorted(plugins(built_in()).items()):
        where = f"{ep.name} = {ep.value}"
        try:
            loaded = ep.load()
        except Exception as exc:
            found.refused[name] = (
                f"the integration {name} (entry point {where}) could not be loaded: {type(exc).__name__}: {exc}"
            )
            continue
        try:
            found.register(name, where, loaded)
        except PluginError as exc:
            found.refused[name] = str(exc)
    found.groups = _settings_groups(found)
    return found


# -- what the service, the CLI and the flow ask ----------------------------------------------------------------


def source_factory(name: str) -> Callable[..., Any] | None:
    """The `source` hook of the integration `name`, or None. Raises `PluginError` for an installed one that
    was refused."""
    found = registry()
    if name in found.refused:
        raise PluginError(found.refused[name])
    return found.hook(name, "source")


def settings_groups() -> dict[str, type[Any]]:
    """Each integration's settings group by its name, built in and installed: what `Settings` merges."""
    return dict(registry().groups)


def _settings_groups(found: Registry) -> dict[str, type[Any]]:
    """Read once, as the registry is built: an installed group under another integration's prefix is logged and
    left out (its variables would not be its own)."""
    from pydantic_settings import BaseSettings

    groups: dict[str, type[Any]] = {}
    for name in found.names():
        try:
            group = found.given(name, "settings_group")
        except Exception:  # service_plugins() says why when the service starts; settings go on without it
            continue
        if not (isinstance(group, type) and issubclass(group, BaseSettings)):
            continue  # no settings of its own
        wanted = f"ONCALL_MEMORY_{name.upper()}_"
        if found.where[name] != BUILT_IN_WHERE and (
            group.model_config.get("env_prefix") != wanted or not name.isidentifier()
        ):
            log.error(
                "the integration %s (entry point %s): its settings are left out: their env_prefix must be %r",
                name,
                found.where[name],
                wanted,
            )
            continue
        groups[name] = group
    return groups
