"""Opsgenie: its webhook integration (`webhook.py`), offered through the `webhook` hook an installed
integration offers, so the service mounts it as it mounts a plugin's: `POST /webhooks/opsgenie`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .config import OpsgenieSettings

if TYPE_CHECKING:
    from .webhook import OpsgenieHook

    webhook: OpsgenieHook

settings_group = OpsgenieSettings  # merged into `Settings` as `settings.opsgenie`

__all__ = ["settings_group", "webhook"]


def __getattr__(name: str) -> Any:
    # The webhook is built when the service asks for it: `Settings` reads this package for its settings
    # group, and a command that posts nothing should not import the webhook's models.
    if name == "webhook":
        from .webhook import OpsgenieHook

        globals()["webhook"] = hook = OpsgenieHook()
        return hook
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
