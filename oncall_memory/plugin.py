"""Everything a plugin's author needs, from one module: import from here, not from the package's insides.

    from oncall_memory.plugin import Incident, Source, hookimpl

    @hookimpl
    def source(settings, path):
        return MySource(path)

The hooks and their signatures are `oncall_memory.hookspecs`; docs/plugins.md is the guide, with a complete
package. The names below are the contract: they keep working as the package's modules move (`__all__` is
held by tests/test_plugin_contract.py), and each is imported when first used, so a plugin that imports this
module at its top costs the commands that never touch it nothing.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .answer.render import Answer, job_note
    from .chat import ChatApp
    from .credentials import same_secret
    from .domain.alert import Alert, Filters
    from .domain.incident import Fix, Incident, Outcome
    from .domain.rejected import Rejected, validation_message
    from .errors import InvalidInput, OncallMemoryError, PluginError, SourceFailed
    from .integrations.loose import Loose
    from .jobs import Item, Job, Refiner
    from .live import LiveIncidents
    from .memory import Memory
    from .plugins import hookimpl
    from .settings import Settings, SettingsGroup
    from .sources import Source, Window
    from .targets import DeliveryError, Target, check, transport_failure
    from .webhook import Webhook

# Each public name, and the module (under `oncall_memory`) that defines it.
_WHERE = {
    "hookimpl": "plugins",
    # what a source makes
    "Incident": "domain.incident",
    "Fix": "domain.incident",
    "Outcome": "domain.incident",
    "Rejected": "domain.rejected",
    "validation_message": "domain.rejected",
    "Source": "sources",
    "Window": "sources",
    # what a webhook makes
    "Webhook": "webhook",
    "Alert": "domain.alert",
    "Filters": "domain.alert",
    "Job": "jobs",
    "Item": "jobs",
    "Refiner": "jobs",
    "Loose": "integrations.loose",
    "same_secret": "credentials",
    # where answers go
    "Target": "targets",
    "DeliveryError": "targets",
    "check": "targets",
    "transport_failure": "targets",
    "Answer": "answer.render",
    "job_note": "answer.render",
    "ChatApp": "chat",
    "LiveIncidents": "live",
    # what the hooks are given
    "Settings": "settings",
    "SettingsGroup": "settings",
    "Memory": "memory",
    # how they fail
    "OncallMemoryError": "errors",
    "InvalidInput": "errors",
    "SourceFailed": "errors",
    "PluginError": "errors",
}

__all__ = [
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


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(import_module(f"oncall_memory.{_WHERE[name]}"), name)
        globals()[name] = value  # once
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
