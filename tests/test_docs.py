"""The docs say what the code does: docs/operations.md's variable tables name every setting, and only settings."""

from __future__ import annotations

import re

from conftest import ROOT
from pydantic_settings import BaseSettings

from oncall_memory.settings import GROUPS, RankingWeights, Settings

# Read outside `Settings`, on purpose: the CLI's pointer to a running service.
NOT_SETTINGS = {"ONCALL_MEMORY_URL"}


def documented() -> set[str]:
    """The variable names in the first column of docs/operations.md's tables."""
    names: set[str] = set()
    for line in (ROOT / "docs" / "operations.md").read_text().splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([A-Z][A-Z0-9_]*\*?)`", line.split("|")[1]))
    return names


def settings_variables() -> list[set[str]]:
    """Each setting's names (its own and any alias), one set per setting; groups are not settings."""
    out = []
    for model in (Settings, RankingWeights, *(group for group, _ in GROUPS.values())):
        prefix = model.model_config["env_prefix"]
        for name, field in model.model_fields.items():
            if isinstance(field.annotation, type) and issubclass(field.annotation, BaseSettings):
                continue  # a group of settings (service, pagerduty, weights, ...): its fields are listed
            names = {f"{prefix}{name}".upper()}
            names.update(str(c).upper() for c in getattr(field.validation_alias, "choices", None) or [])
            out.append(names)
    return out


def test_every_setting_is_in_the_variable_tables():
    docs = documented()
    missing = sorted(min(names) for names in settings_variables() if not names & docs)
    assert not missing, f"settings missing from docs/operations.md's variable tables: {missing}"


def test_the_variable_tables_name_only_settings():
    known = set().union(*settings_variables()) | NOT_SETTINGS
    unknown = sorted(n for n in documented() if not n.endswith("*") and n not in known)
    assert not unknown, f"docs/operations.md documents variables nothing reads: {unknown}"
