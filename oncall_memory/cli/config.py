"""`oncall-memory config`: every setting in effect, the variable that sets it and where its value came from
(issue 84), secrets masked. A typo in a variable's name sets nothing: here it shows as a default."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from ..settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("config", help="the settings in effect, where each came from (secrets masked)")
    p.add_argument("--changed", action="store_true", help="only the settings the environment set")
    p.add_argument("--json", action="store_true", help="print them as a JSON list")
    p.set_defaults(func=cmd_config)


def _shown(value: Any) -> Any:
    """A value as it may be printed: a secret as whether it is set, a URL without its user and password, any
    token a detector finds in the rest redacted."""
    from pydantic import SecretStr

    from ..redact import redact

    if isinstance(value, SecretStr):
        return "(set, hidden)" if value.get_secret_value() else None
    if isinstance(value, str) and "://" in value and "@" in (parts := urlsplit(value)).netloc:
        value = value.replace(parts.netloc, parts.netloc.rpartition("@")[2])
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, (list, tuple)):
        return [_shown(v) for v in value]
    if isinstance(value, dict):
        return {k: _shown(v) for k, v in value.items()}
    return value if isinstance(value, (int, float, bool)) or value is None else redact(str(value))


def rows(settings: Settings) -> list[dict[str, Any]]:
    """Each setting: its variable, its value as shown, and `environment` or `default`."""
    from pydantic import BaseModel

    from ..settings import CORE_GROUPS, RankingWeights, groups

    models: list[tuple[BaseModel, str]] = [(settings, "ONCALL_MEMORY_"), (settings.weights, "ONCALL_MEMORY_WEIGHT_")]
    for name, (_, prefix) in groups().items():
        group = settings.group(name)
        if group is not None:
            models.append((group, f"ONCALL_MEMORY_{prefix}" if name not in CORE_GROUPS else "ONCALL_MEMORY_"))
    out = []
    for model, prefix in models:
        for field in type(model).model_fields:
            value = getattr(model, field)
            if isinstance(value, (BaseModel, RankingWeights)):
                continue  # a group: its own settings are listed
            source = "environment" if field in model.model_fields_set else "default"
            out.append({"variable": f"{prefix}{field}".upper(), "value": _shown(value), "source": source})
    return out


def cmd_config(args: argparse.Namespace, settings: Settings) -> int:
    listed = [r for r in rows(settings) if r["source"] == "environment" or not args.changed]
    if args.json:
        print(json.dumps(listed, indent=2))
        return 0
    width = max((len(r["variable"]) for r in listed), default=0)
    for r in listed:
        value = r["value"] if isinstance(r["value"], str) else json.dumps(r["value"])
        mark = "*" if r["source"] == "environment" else " "
        print(f"{mark} {r['variable']:<{width}}  {value}")
    print("\n* set in the environment; every other setting is its default (docs/operations.md lists them)")
    return 0
