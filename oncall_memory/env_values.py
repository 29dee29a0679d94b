"""Settings as people type them in the environment: a list as JSON or comma-separated
(`ONCALL_MEMORY_PAGERDUTY_SERVICE_IDS=P123,P456`), the label mapping as JSON or `fact=label,label;fact=label`,
and every mistake said in one line naming the variable that was set (`settings.py` uses both)."""

from __future__ import annotations

import re
from typing import Any, get_args, get_origin

from pydantic import ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource

from .errors import InvalidInput


class SettingTyped(InvalidInput):
    """A setting in the environment that cannot be read; the message names its variable."""


def _shape(annotation: Any) -> type | None:
    """list or dict, for a field of either (optional or not); None otherwise."""
    for candidate in (annotation, *get_args(annotation)):
        origin = get_origin(candidate) or candidate
        if origin in (list, dict):
            return origin
    return None


def _mapping(variable: str, value: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in filter(None, (p.strip() for p in value.split(";"))):
        key, sep, labels = part.partition("=")
        if not sep or not key.strip():
            raise SettingTyped(
                f'{variable}: give JSON ({{"service": ["app", "container"]}}) or fact=label,label;fact=label, '
                f"e.g. service=app,container;env=cluster (got {value[:80]!r})"
            )
        out[key.strip()] = [v.strip() for v in labels.split(",") if v.strip()]
    return out


# The forms a list or a mapping setting is read in, for the error that says what to give.
FORMS: dict[type, str] = {
    list: 'a JSON list (["P123", "P456"]) or a list separated by commas or spaces (P123,P456)',
    dict: 'JSON ({"service": ["app", "container"]}) or fact=label,label;fact=label (service=app,container;env=cluster)',
}
_SEPARATORS = re.compile(r"[,\s]+")


class PeopleEnv(EnvSettingsSource):
    """The environment, a list or mapping read as JSON first and then as people type it. What starts as JSON
    (`[` or `{`) must be JSON of the setting's shape: `["P123",` is refused, not taken as the one id `["P123"`."""

    def decode_complex_value(self, field_name: str, field: FieldInfo, value: Any) -> Any:
        shape = _shape(field.annotation)
        text = str(value).strip()
        variable = f"{self.env_prefix}{field_name}".upper()
        try:
            decoded = super().decode_complex_value(field_name, field, value)
        except ValueError as exc:
            if shape is not None and text[:1] in "[{":
                raise SettingTyped(
                    f"{variable}: it starts as JSON but is not JSON ({str(exc).split(':')[0]}); give {FORMS[shape]}"
                ) from None
            decoded = None
        if shape is None or isinstance(decoded, shape):
            return decoded if decoded is not None else value
        if decoded is not None and text[:1] in "[{":
            kind = "an object" if isinstance(decoded, dict) else "a list"
            raise SettingTyped(
                f"{variable}: {kind} in JSON where {'a list' if shape is list else 'a mapping'} goes; give {FORMS[shape]}"
            )
        if shape is list:
            return [v for v in _SEPARATORS.split(text) if v]
        return _mapping(variable, text)


class ReadsPeople(BaseSettings):
    """A settings model whose environment is read by `PeopleEnv`."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, PeopleEnv(settings_cls), dotenv_settings, file_secret_settings


def variable_of(model: str, field: str, prefixes: dict[str, str]) -> str:
    """The environment variable a field of a settings model is read from."""
    return f"{prefixes.get(model, 'ONCALL_MEMORY_')}{field}".upper()


# What to give, by the kind of mistake pydantic reports (its message says what was wrong, not what is read).
_GIVE = {
    "int_parsing": "give a whole number",
    "int_from_float": "give a whole number",
    "float_parsing": "give a number (0.5, 30)",
    "bool_parsing": "give true or false",
    "list_type": f"give {FORMS[list]}",
    "dict_type": f"give {FORMS[dict]}",
    "url_parsing": "give a URL (https://...)",
}


def said(exc: ValidationError, prefixes: dict[str, str]) -> str:
    """A settings model's validation error in one line, each problem by the variable the user set, what was
    wrong and what to give (the value is not repeated: it may be a secret)."""
    parts = []
    for error in exc.errors():
        loc = [str(p) for p in error["loc"] if not isinstance(p, int)]
        name = variable_of(exc.title, loc[0], prefixes) if loc else exc.title
        give = _GIVE.get(error["type"])
        parts.append(f"{name}: {error['msg'].removeprefix('Value error, ')}" + (f"; {give}" if give else ""))
    return "; ".join(dict.fromkeys(parts))
