"""Configuration: the only module that reads the environment (but for `cli/similar.py`, which reads the three
settings a thin client needs the same way, kept equal by a test).

Build a `Settings` at the edge (CLI, flow, service factory) and pass it down.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self

from pydantic import (
    AliasChoices,
    BaseModel,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import SettingsConfigDict

from .datadir import LEGACY_DATA_DIR, DataDir, default_data_dir
from .domain.label_facts import LABEL_FACTS
from .env_values import ReadsPeople, said


class RankingWeights(ReadsPeople):
    """How much each payload fact moves a neighbour, on the same 0..1 scale as relevance.

    Fitted by the generalisation protocol (`python -m bench.quality.generalise`: each labelled set left out in turn,
    then all of them; see docs/evaluation.md), except where a comment says otherwise. Measure a change with
    it, and `oncall-memory eval` on your own history.
    """

    model_config = SettingsConfigDict(env_prefix="ONCALL_MEMORY_WEIGHT_", extra="ignore")

    lexical_share: float = 0.2  # relevance = (1 - share) * meaning similarity + share * words
    # What "words" is: `search`, the word search's own score (IDF over the whole memory) over the best any
    # incident scored; `share`, the share of the alert's words the incident holds; `rarity`, that share
    # with each word weighed by its rarity among the candidates (the default until the protocol: it did not
    # survive it).
    words: Literal["search", "share", "rarity"] = "search"
    word_rarity: bool | None = None  # the variable before `words`: true is `rarity`, false is `share`
    # Where it happened (flavor, env, service) counts only for a candidate whose meaning is within
    # `facts_gate` of the best candidate's, or that tells of a symptom the alert tells of: the same
    # service's incident of another problem is not a recurrence.
    same_flavor: float = 0.03
    same_env: float = 0.12
    same_service: float = 0.2
    facts_gate: float = 0.2
    # ... and, with "symptom", when some candidate tells of a symptom the alert tells of, only for those: the
    # protocol kept it (left-out mean 0.793 -> 0.828; the sample incidents fired again 0.739 -> 0.900).
    # "meaning": the gate alone, as before.
    facts_where: Literal["symptom", "meaning"] = "symptom"
    same_symptom: float = 0.1  # per symptom both tell of (ops vocabulary: "exit code 137" is an OOM kill) ...
    same_title: float = 0.06  # the alert (or its first line) reads as the incident's title: the same alert, again
    rare_token: float = 0.03  # per rare token both mention (a version, a size, an exit or error code) ...
    max_rare_tokens: int = 2  # ... counted up to this many
    shared_tag: float = 0.03  # per shared component tag ...
    max_shared_tags: int = 3  # ... counted up to this many
    worked_fix: float = 0.03  # a recorded fix whose latest outcome resolved or mitigated it
    # Not fitted (no labelled set carries verdicts): set so that three responders' "not related" outweighs the
    # largest lead the fitted weights give a first answer over the next (0.3 in the sample backlog).
    feedback_helped: float = 0.04  # per "helped" on alerts with the same canonical signature ...
    feedback_not_related: float = 0.15  # per "not related" (subtracted) ...
    max_feedback: int = 3  # ... each counted up to this many
    # Not fitted: no labelled set carries the ages a team's history has. Full at age 0, halves every
    # `recency_half_life_days`.
    recency: float = 0.03
    recency_half_life_days: float = Field(default=180.0, gt=0)
    signature_pin: bool = True  # an exact canonical-signature match goes first

    @model_validator(mode="after")
    def _the_old_rarity_switch(self) -> RankingWeights:
        if self.word_rarity is not None and "words" not in self.model_fields_set:
            self.words = "rarity" if self.word_rarity else "share"
        return self


_COLLECTION = re.compile(r"[A-Za-z0-9_-]{1,64}")


class SettingsGroup(ReadsPeople):
    """Settings of one concern; the environment variables keep their flat names (`env_prefix`). The core's
    groups are below; each integration declares its own (its `settings_group` hook, `hookspecs.py`),
    with `env_prefix="ONCALL_MEMORY_<NAME>_"`, and `Settings` merges it as `settings.<name>`."""

    model_config = SettingsConfigDict(env_prefix="ONCALL_MEMORY_", extra="ignore")

    @field_validator("*", mode="after")
    @classmethod
    def _a_blank_secret_is_no_secret(cls, value: Any) -> Any:
        return _no_blank_secret(value)


# The default body limit takes a storm whole: Alertmanager posts every alert of a group unless `max_alerts`
# caps it. kube-prometheus's rules, rendered with a cluster's usual target labels and their generator URLs,
# make alerts of about 1.1 KB: a 10,000-alert post is 11 MB. The post's cost is linear (docs/operations.md).
MAX_BODY_BYTES = 16 * 1024 * 1024


class ServiceSettings(SettingsGroup):
    """The enrichment service (`oncall-memory serve`) and who may call it."""

    # A running service the CLI asks instead of opening the store itself (else the one that wrote
    # <data dir>/service.json, if it is still running).
    url: str | None = None
    host: str = "127.0.0.1"
    port: int = 8080
    max_body_bytes: int = MAX_BODY_BYTES
    api_token: SecretStr | None = None  # bearer token for /similar, the search page and the API docs
    allow_unauthenticated: bool = False  # serve on a non-loopback address with a route left open anyway
    # Addresses of the reverse proxies whose X-Forwarded-For / -Proto are believed (comma-separated IPs or
    # networks, "*" for any). Empty: the connecting address is the client, as Uvicorn's own default should be.
    forwarded_allow_ips: str = ""
    # The header a trusted authenticating proxy (oauth2-proxy's X-Auth-Request-Email, Grafana-style auth
    # proxies) sets to the person it logged in: believed only on requests from FORWARDED_ALLOW_IPS.
    auth_proxy_header: str | None = None
    # The names (the `Host` header) the service answers to beside this machine's own (localhost, 127.0.0.1,
    # ::1): what a reverse proxy or a cluster reaches it by (`memory.example.com`, `*.example.com`,
    # `oncall-memory`). A request naming any other host is refused, so a web page that rebinds its own
    # DNS name to this machine cannot reach the memory. Empty on a service that faces the network: any name
    # (every route there needs the API token). "*": any name, everywhere.
    allowed_hosts: list[str] = []
    # The CLI sends the API token to ONCALL_MEMORY_URL only over HTTPS or on this machine; true allows plain
    # HTTP to another host (a private network the team trusts).
    allow_plain_http: bool = False
    # How many answered alerts the answer log keeps (/answers, `oncall-memory answers`): the oldest go first.
    answers_keep: int = Field(default=1000, ge=1, le=1_000_000)
    # Below this much free space under the data dir /readyz says not ready (webhooks would soon be refused).
    min_free_mb: float = 64.0
    # Alertmanager label (and Opsgenie detail) -> alert fact, first label giving one wins; exporters'
    # names are skipped, "pod" means the workload behind the pod, "node" gives the flavor (see label_facts.py).
    label_facts: dict[str, list[str]] = Field(default_factory=lambda: {k: list(v) for k, v in LABEL_FACTS.items()})
    # How a LABEL_FACTS given reads: `add` (each fact's labels tried before its default ones; the facts not
    # given keep theirs), or `replace` (only what is given: a fact not named is read from no label).
    label_facts_mode: Literal["add", "replace"] = "add"

    @field_validator("label_facts")
    @classmethod
    def _facts_labels_can_give(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        # A misspelt fact ("servce") read no label at all, silently: name the ones there are.
        if unknown := sorted(set(value) - set(LABEL_FACTS)):
            raise ValueError(
                f"{', '.join(map(repr, unknown))} is not a fact labels give: name {', '.join(LABEL_FACTS)}"
            )
        return value

    @model_validator(mode="after")
    def _label_facts_add_to_the_defaults(self) -> Self:
        if "label_facts" in self.model_fields_set and self.label_facts_mode == "add":
            given = self.label_facts
            self.label_facts = {
                fact: list(dict.fromkeys([*given.get(fact, []), *labels])) for fact, labels in LABEL_FACTS.items()
            }
        return self


class DeliverySettings(SettingsGroup):
    """How notes and messages are delivered (the outbox)."""

    notify_limit: int = Field(default=3, ge=1, le=10)  # past incidents per note or message
    post_max_retries: int | None = (
        None  # give up after this many retries even before the deadline (None: deadline only)
    )
    post_timeout: float = 10.0  # seconds a note or message may take; longer is an uncertain attempt
    post_backoff: float = 1.0  # first retry after this many seconds, doubled each time ...
    post_backoff_cap: float = 300.0  # ... up to this
    retry_after_cap: float = 300.0  # the longest Retry-After / ratelimit-reset we honour
    delivery_deadline: float = 3600.0  # seconds a note or message is retried before it is marked failed
    degraded_after: float = 300.0  # a target failing this long makes /readyz report degraded


class ScheduleSettings(SettingsGroup):
    """Scheduled ingest: in the service's own process, and `schedule`'s local Prefect server."""

    # In-process schedule of the service (one owner of the embedded store): seconds between ingests, 0 = off.
    ingest_interval: float = 0.0
    ingest_source: str = (
        "jsonl"  # jsonl, pagerduty, jira, servicenow, github, gitlab, incident_io, rootly, or a plugin's name
    )
    ingest_path: str | None = None
    ingest_window_days: float | None = None
    # `schedule` on one machine: the local Prefect server (API and UI) listens here; another port when taken.
    prefect_port: int = Field(default=4200, ge=1, le=65535)


# The core's groups: group -> (its model, the prefix of its flat names). Fields of `Settings`.
CORE_GROUPS: dict[str, tuple[type[SettingsGroup], str]] = {
    "service": (ServiceSettings, ""),
    "deliveries": (DeliverySettings, ""),
    "schedule": (ScheduleSettings, ""),
}


def integration_groups() -> dict[str, type[SettingsGroup]]:
    """The integrations' settings groups by name (their `settings_group` hook), built in and installed; a name
    that is already a setting of the core's cannot be taken."""
    from .plugins import settings_groups

    return {name: group for name, group in settings_groups().items() if name not in Settings.model_fields}


def groups() -> dict[str, tuple[type[SettingsGroup], str]]:
    """Every settings group: group -> (its model, the prefix of its flat names): the core's, then the
    integrations' (`pagerduty` -> (its model, "pagerduty_"))."""
    return {**CORE_GROUPS, **{name: (model, f"{name}_") for name, model in integration_groups().items()}}


def __getattr__(name: str) -> Any:
    # `GROUPS`, as it was when every group lived here: the integrations' groups are found when asked for.
    if name == "GROUPS":
        return groups()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _group_of(flat: str, among: Mapping[str, tuple[type[SettingsGroup], str]]) -> tuple[str, str] | None:
    """The (group, field) a flat setting name belongs to (`pagerduty_token` -> ("pagerduty", "token")),
    or None for a top-level setting."""
    for group, (model, prefix) in among.items():
        if flat.startswith(prefix) and flat[len(prefix) :] in model.model_fields:
            return group, flat[len(prefix) :]
    return None


def _no_blank_secret(value: Any) -> Any:
    # `VAR=` (docker-compose's `${VAR:-}`) must mean "not set": an empty token would let an empty
    # Authorization header in, and would count as configured.
    if isinstance(value, SecretStr) and not value.get_secret_value().strip():
        return None
    return value


class Settings(ReadsPeople):
    model_config = SettingsConfigDict(env_prefix="ONCALL_MEMORY_", extra="ignore", populate_by_name=True)

    embedder: Literal["openai", "local", "fake"] = "local"
    embed_model: str | None = None  # None: the embedder's own default
    embed_dim: int | None = None  # only for embedders whose dimension is configurable (fake, openai -3 models)
    # Texts per embedding call when ingesting; None: the embedder's own (64 for the local model, 2,048 for
    # OpenAI, which splits them into requests sent side by side).
    embed_batch_size: int | None = Field(default=None, ge=1, le=4096)
    # The local model's weights on ONNX Runtime: int8 is ~1.8x faster at a 0.99 cosine to float32 and the
    # same rankings on the eval sets (docs/evaluation.md); float32 gives sentence-transformers' own vectors.
    local_precision: Literal["int8", "float32"] = "int8"
    store: Literal["edge", "local"] = "edge"  # the embedded engine; ignored when QDRANT_URL is set
    data_dir: Path = Field(default_factory=lambda: default_data_dir())
    collection: str = "incidents"  # a name, never a path: [A-Za-z0-9_-]{1,64}
    # Log lines: `text` (each with its UTC time) or `json` (one object a line, for a log shipper).
    log_format: Literal["text", "json"] = "text"

    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("ONCALL_MEMORY_OPENAI_API_KEY", "OPENAI_API_KEY")
    )
    openai_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("ONCALL_MEMORY_OPENAI_BASE_URL", "OPENAI_BASE_URL")
    )
    openai_timeout: float = 30.0
    openai_max_retries: int = 5
    openai_concurrency: int = Field(default=4, ge=1, le=32)  # embedding requests in flight at once

    qdrant_url: str | None = Field(
        default=None, validation_alias=AliasChoices("ONCALL_MEMORY_QDRANT_URL", "QDRANT_URL")
    )
    qdrant_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("ONCALL_MEMORY_QDRANT_API_KEY", "QDRANT_API_KEY")
    )

    # A new collection on a Qdrant cluster: how many shards it is split into and how many copies of each
    # (fixed at creation; the README's "Scale" says how to choose). Ignored by the embedded store.
    qdrant_shards: int = Field(default=1, ge=1, le=1000)
    qdrant_replicas: int = Field(default=1, ge=1, le=100)

    embed_retries: int = 3  # the flow's embedding task, on top of the client's own retries
    embed_retry_delays: list[float] = [5.0, 30.0, 120.0]

    candidates: int = Field(default=50, ge=1, le=1000)  # neighbours fetched before re-ranking
    # How sure an answer is (confidence.py): below `low_below` a match is weak (nothing close on record; on
    # the probability that it is of the alert's problem family), from `high_from` it is high (on the
    # probability that it is the same problem). None: the embedding model's calibrated values.
    confidence_low_below: float | None = Field(default=None, ge=0, le=1)
    confidence_high_from: float | None = Field(default=None, ge=0, le=1)
    # The embedded store searches exactly below this many incidents and builds its vector index (HNSW over
    # int8 vectors, rescored) above it, in the background; 0 never builds one. See the README's "Scale".
    index_threshold: int = Field(default=20_000, ge=0)
    # Where a new embedded collection keeps its payload: on disk, with a service holding only the ranking
    # fields packed in memory (about 0.3 KB an incident instead of 2), or all of it in RAM. Fixed at creation;
    # docs/operations.md, "Scale".
    payload_on_disk: bool = False
    # How a new embedded collection quantizes the vectors its graph search reads in RAM (the originals stay on
    # disk and rescore): int8, or TurboQuant at 4, 2 or 1 bits a dimension. Fixed at creation; docs/operations.md.
    quantization: Literal["int8", "turbo4", "turbo2", "turbo1"] = "int8"
    weights: RankingWeights = Field(default_factory=RankingWeights)

    # The core's groups (the environment variables keep their names). Each integration's group is merged in
    # by its hook as `settings.<name>` (`__init__`).
    service: ServiceSettings = Field(default_factory=lambda: ServiceSettings())
    deliveries: DeliverySettings = Field(default_factory=lambda: DeliverySettings())
    schedule: ScheduleSettings = Field(default_factory=lambda: ScheduleSettings())
    _integrations: dict[str, SettingsGroup] = PrivateAttr(default_factory=dict)

    def __init__(self, **values: Any) -> None:
        """`Settings(pagerduty_token=...)`: each integration's group (found through its hook) is read from
        the environment, and its settings may be given by their flat names or as the group itself
        (`pagerduty=...`); the rest of the core is pydantic's."""
        hooked = integration_groups()
        given: dict[str, dict[str, Any]] = {}
        built: dict[str, SettingsGroup] = {}
        for name in list(values):
            if name in hooked:
                group = values.pop(name)
                built[name] = group if isinstance(group, hooked[name]) else hooked[name](**group)
            elif (place := _group_of(name, {g: (m, f"{g}_") for g, m in hooked.items()})) is not None:
                given.setdefault(place[0], {})[place[1]] = values.pop(name)
        super().__init__(**values)
        self._integrations = {
            name: built[name] if name in built else model(**given.get(name, {})) for name, model in hooked.items()
        }

    if TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            """An integration's settings group (`settings.pagerduty`), typed where it is read."""

    else:

        def __getattr__(self, name):
            try:
                return object.__getattribute__(self, "__pydantic_private__")["_integrations"][name]
            except (AttributeError, KeyError, TypeError):
                return super().__getattr__(name)

    @model_validator(mode="before")
    @classmethod
    def _flat_names_fill_their_group(cls, data: Any) -> Any:
        """`Settings(host=...)`: the core's groups' settings may be given by their flat names (as the
        environment spells them); the rest of that group still comes from the environment."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        given: dict[str, dict[str, Any]] = {}
        for name in list(data):
            if (place := _group_of(name, CORE_GROUPS)) is not None:
                given.setdefault(place[0], {})[place[1]] = data.pop(name)
        for group, fields in given.items():
            if group not in data:
                data[group] = CORE_GROUPS[group][0](**fields)
        return data

    def replace(self, **changes: Any) -> Settings:
        """A copy with these settings changed, by their flat names (`host`, `pagerduty_token`, `post_timeout`)."""
        top: dict[str, Any] = {}
        updates: dict[str, dict[str, Any]] = {}
        among = groups()
        for name, value in changes.items():
            if (place := _group_of(name, among)) is not None:
                updates.setdefault(place[0], {})[place[1]] = value
            elif name in type(self).model_fields:
                top[name] = value
            else:
                raise ValueError(f"no setting {name!r}")
        hooked = dict(self._integrations)  # a copy's groups are its own: never change the original's
        for group, update in updates.items():
            if group in CORE_GROUPS:
                top[group] = getattr(self, group).model_copy(update=update)
            else:
                hooked[group] = hooked[group].model_copy(update=update)
        copied = self.model_copy(update=top)
        copied._integrations = hooked
        return copied

    def group(self, name: str) -> BaseModel | None:
        """A settings group by its name, the core's or an integration's (`pagerduty`), or None."""
        if name in CORE_GROUPS:
            return getattr(self, name)
        return self._integrations.get(name)

    def secrets(self) -> list[str]:
        """Every secret set (tokens, keys, signing secrets, webhook URLs), the core's and each integration's:
        found from the models, so a new secret setting cannot be forgotten where they are masked."""
        holders: list[BaseModel] = [self, *(getattr(self, g) for g in CORE_GROUPS), *self._integrations.values()]
        values = (getattr(m, field) for m in holders for field in type(m).model_fields)
        return [v.get_secret_value() for v in values if isinstance(v, SecretStr) and v.get_secret_value()]

    def on_legacy_data_dir(self) -> bool:
        """Is this the ./.oncall-memory an earlier version made, found by default (not named by the user)?"""
        return self.data_dir == LEGACY_DATA_DIR and "data_dir" not in self.model_fields_set

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        # pydantic's model_copy would quietly set an attribute nobody reads for a group's flat name
        # (`pagerduty_token`); say so instead of running with the old value.
        unknown = sorted(set(update or ()) - set(type(self).model_fields))
        if unknown:
            raise ValueError(
                f"no top-level setting {', '.join(unknown)}: use Settings.replace() for a group's settings"
            )
        return super().model_copy(update=update, deep=deep)

    @field_validator("*", mode="after")
    @classmethod
    def _a_blank_secret_is_no_secret(cls, value: Any) -> Any:
        return _no_blank_secret(value)

    @field_validator("collection")
    @classmethod
    def _collection_is_a_name(cls, value: str) -> str:
        # The name becomes a directory under the data dir: never a path, never empty.
        if not _COLLECTION.fullmatch(value):
            raise ValueError(f"collection must be 1 to 64 of A-Z a-z 0-9 _ - (got {value!r})")
        return value

    @property
    def dir(self) -> DataDir:
        """Where each file of this memory lives (see `datadir.py`)."""
        return DataDir(self.data_dir)

    @property
    def store_location(self) -> str:
        """Where the store lives, for messages: a server URL or an embedded path."""
        if self.qdrant_url:
            return self.qdrant_url
        data = self.dir
        return data.qdrant if data.in_memory or self.store == "local" else str(data.edge)


def configuration_error(exc: ValidationError) -> str:
    """A settings error in one line, naming each variable the user set (`ONCALL_MEMORY_WEIGHT_SAME_SERVICE`),
    not the field it fills."""
    models: list[type[ReadsPeople]] = [RankingWeights, Settings, *(model for model, _ in groups().values())]
    return said(exc, {m.__name__: str(m.model_config.get("env_prefix", "ONCALL_MEMORY_")) for m in models})
