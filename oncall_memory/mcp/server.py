"""The memory for AI on-call agents: an MCP server (the official `mcp` SDK), over stdio
(`oncall-memory mcp`) and streamable HTTP under the service at `/mcp` (with the service's API token).

Every tool has typed input and output schemas (unknown arguments are refused), annotations that say
whether it only reads, and answers failures an agent can act on as `ToolError` with the reason (no
traceback, no echo of a large argument). Every answer says how sure it is: `confidence` per incident and
`nothing_close` when the best is a weak match.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime
from importlib.metadata import version
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from ..answer.ranking import Neighbour
from ..answer.render import NOTHING_CLOSE
from ..answer.retrieve import Lookup
from ..domain.alert import Alert, Filters
from ..domain.promql import MAX_LINK, watched_metrics
from ..errors import InvalidInput, OncallMemoryError
from ..live import LiveIncidents
from ..memory import Memory
from ..redact import redact

INSTRUCTIONS = (
    "oncall-memory holds a team's past incidents: what broke, why, and what fixed it. When an alert fires, "
    "call similar_incidents with the alert's text (and its service/env when you know them), or "
    "similar_to_incident with the live incident's id, before investigating: each past incident comes with the "
    "fixes that worked, those that did not (try those last), why it ranked where it did, and how sure the "
    "match is. When nothing_close is true the incidents are weak matches: do not apply their fixes. "
    "suggest_fixes gathers the fixes that worked across the close matches. When a suggestion turned out right "
    "or wrong, call record_feedback: it moves that suggestion for the next alert like this one."
)
MAX_TEXT = 20_000  # characters of alert text an agent may send
MAX_ID = 200
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


class Fix(BaseModel):
    action: str
    outcome: str = Field(description="its latest outcome: resolved, mitigated, no-op or worsened")
    at: str | None = Field(default=None, description="when that outcome was recorded")
    history: str | None = Field(default=None, description="how its outcome changed over time")


class PastIncident(BaseModel):
    id: str
    title: str
    confidence: Literal["high", "medium", "low"] = Field(
        description="high: the same problem (below the first match, only a recurrence on the alert's own service); "
        "medium: close, at least of its problem family; low: not even that"
    )
    similarity: float | None = Field(description="cosine similarity of meaning")
    score: float = Field(description="what the order is by")
    age: str | None
    service: str | None
    env: str | None
    root_cause: str | None
    fixes_worked: list[str] = Field(description="try these first (for a low-confidence match: what fixed that one)")
    fixes_failed: list[str] = Field(description="tried before without effect or made it worse: try these last")
    fixes: list[Fix]
    reasons: list[str] = Field(description="why it ranked here")
    url: str | None
    resolution_minutes: float | None = Field(default=None, description="from opened to resolved")


class Answer(BaseModel):
    confidence: Literal["high", "medium", "low"] = Field(description="as sure as the best match")
    nothing_close: bool = Field(description="true: no close match is on record; the incidents are weak matches")
    note: str | None = Field(default=None, description="how the lookup ran when it ran with less (words only)")
    incidents: list[PastIncident]


class IncidentRecord(BaseModel):
    id: str
    title: str
    root_cause: str | None = None
    error_signature: str | None = None
    oncall_note: str | None = None
    service: str | None = None
    env: str | None = None
    flavor: str | None = None
    component_tags: list[str] = []
    severity: str | None = None
    status: str | None = None
    opened_at: str | None = None
    resolved_at: str | None = None
    url: str | None = None
    fixes: list[Fix] = []
    similar: list[PastIncident] = Field(default=[], description="its own nearest past incidents")


class SuggestedFix(BaseModel):
    action: str
    worked_in: list[str] = Field(description="close matches this fix resolved or mitigated")
    failed_in: list[str] = Field(description="close matches where it had no effect or made it worse")
    last_worked: str | None = Field(description="the latest date it worked")


class Suggestions(BaseModel):
    confidence: Literal["high", "medium", "low"]
    nothing_close: bool
    fixes: list[SuggestedFix] = Field(description="best first: worked most often, most recently; weak matches left out")


class Recorded(BaseModel):
    recorded: bool = Field(description="false: the same verdict was already recorded")
    suggested: str
    verdict: str


class NotePosted(BaseModel):
    incident: str
    posted: bool


class Stats(BaseModel):
    collection: str
    embed_model: str | None = None
    dimension: int | None = None
    count: int


Text = Annotated[
    str, Field(min_length=1, max_length=MAX_TEXT, description="The alert as it fired: title, summary or error.")
]
IncidentId = Annotated[str, Field(min_length=1, max_length=MAX_ID, description="An incident id, e.g. INC-1042.")]


def build_server(memory: Memory, *, live: LiveIncidents | None = None) -> MCPServer:
    """The MCP server over `memory`; `live` (a pager's live incidents, `integrations.live_incidents`) adds
    reading one of them and posting a note on one."""
    server = MCPServer("oncall-memory", instructions=INSTRUCTIONS, version=version("oncall-memory"))

    @server.tool(annotations=READ_ONLY)
    def similar_incidents(
        text: Text,
        service: Annotated[
            str | None, Field(max_length=MAX_ID, description="The service alerting (a preference).")
        ] = None,
        env: Annotated[
            str | None, Field(max_length=MAX_ID, description="The environment or cluster (a preference).")
        ] = None,
        flavor: Annotated[
            str | None, Field(max_length=MAX_ID, description="eks, aks, gke, onprem ... (a preference).")
        ] = None,
        tags: Annotated[
            list[Annotated[str, Field(max_length=MAX_ID)]] | None,
            Field(max_length=20, description="Component tags (a preference)."),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=20, description="How many past incidents.")] = 5,
        only_service: Annotated[
            str | None, Field(max_length=MAX_ID, description="Only this service's incidents.")
        ] = None,
        only_env: Annotated[str | None, Field(max_length=MAX_ID, description="Only this env's incidents.")] = None,
        status: Annotated[str | None, Field(max_length=MAX_ID, description="Only incidents with this status.")] = None,
        since: Annotated[date | None, Field(description="Only incidents opened on or after this date.")] = None,
        generator_url: Annotated[
            str | None,
            Field(
                max_length=MAX_LINK,
                description="The alert's generatorURL, a Prometheus-style ruler's link to its rule's expression: "
                "the metrics it names are searched as the alert's words.",
            ),
        ] = None,
    ) -> Answer:
        """Past incidents most like this alert, best first, each with the fixes that worked and did not, why it
        ranked here and how sure the match is. Call this first when an alert fires."""
        metrics = watched_metrics(generator_url)
        alert = _alert(text, service=service, env=env, flavor=flavor, component_tags=tags or [], metrics=metrics)
        filters = _filters(service=only_service, env=only_env, status=status, since=since)
        return _answer(_ask(lambda: memory.similar(alert, filters=filters, limit=limit)))

    pager = live.name if live is not None else None
    or_live = f", or the live {pager} incident (its {pager} id)" if pager else ""

    @server.tool(
        annotations=READ_ONLY.model_copy(update={"open_world_hint": live is not None}),
        description=f"Past incidents most like a given incident: one stored in the memory (its id){or_live}.",
    )
    def similar_to_incident(
        incident_id: IncidentId,
        limit: Annotated[int, Field(ge=1, le=20)] = 5,
    ) -> Answer:
        record = memory.incident(incident_id)
        if record is not None:
            return _answer(_ask(lambda: memory.neighbours_of(record, limit=limit)))
        if live is None or not live.ids.fullmatch(incident_id):
            asked = f"no {pager}" if pager else "no pager"
            raise ToolError(f"no incident {_shown(incident_id)} in the memory (and {asked} to ask)")
        try:
            alert = live.alert(incident_id, memory.known_values())
        except OncallMemoryError as exc:
            raise ToolError(f"{pager} could not give incident {incident_id}: {exc}") from exc
        return _answer(_ask(lambda: memory.similar(alert, limit=limit)))

    @server.tool(annotations=READ_ONLY)
    def get_incident(incident_id: IncidentId) -> IncidentRecord:
        """One past incident's whole record (root cause, error signature, on-call note, every fix tried with its
        outcome, service, env, times, link) and its own nearest past incidents."""
        record = memory.incident(incident_id)
        if record is None:
            raise ToolError(f"no incident {_shown(incident_id)} in the memory: use an id from similar_incidents")
        neighbours = _ask(lambda: memory.neighbours_of(record, limit=3)).neighbours
        fields = {k: v for k, v in record.items() if k in IncidentRecord.model_fields and k != "fixes"}
        fixes = [
            Fix(action=f.get("action", ""), outcome=f.get("outcome", ""), at=f.get("at"))
            for f in record.get("fixes_attempted") or []
        ]
        return IncidentRecord(**fields, fixes=fixes, similar=[_incident(n) for n in neighbours])

    @server.tool(annotations=READ_ONLY)
    def suggest_fixes(
        text: Text,
        service: Annotated[str | None, Field(max_length=MAX_ID)] = None,
        env: Annotated[str | None, Field(max_length=MAX_ID)] = None,
        limit: Annotated[int, Field(ge=1, le=20, description="How many past incidents to gather fixes from.")] = 5,
    ) -> Suggestions:
        """The fixes that worked for the past incidents most like this alert, gathered: each with the incidents
        it worked in and failed in and when it last worked. Weak matches' fixes are left out."""
        lookup = _ask(lambda: memory.similar(_alert(text, service=service, env=env), limit=limit))
        return _suggestions(lookup)

    @server.tool(
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        )
    )
    def record_feedback(
        alert_text: Text,
        suggested: IncidentId,
        verdict: Literal["helped", "not related", "not-related"],
        who: Annotated[
            str, Field(min_length=1, max_length=MAX_ID, description="The agent or the responder.")
        ] = "agent",
    ) -> Recorded:
        """Tell the memory whether a suggestion helped with this alert. "not related" pushes it down and
        "helped" up, for the next alert that reads the same; it is shown among the reasons."""
        if memory.incident(suggested) is None:
            raise ToolError(f"no incident {_shown(suggested)} in the memory: feedback is about a suggested incident")
        spelled = "not related" if verdict == "not-related" else verdict  # the CLI's spelling too
        recorded = _ask(lambda: memory.record_feedback(_alert(alert_text), suggested, spelled, who=who, ref="mcp"))
        return Recorded(recorded=recorded, suggested=suggested, verdict=spelled)

    if live is not None:
        _post_note_tool(server, live)

    @server.resource("oncall-memory://stats", mime_type="application/json")
    def stats() -> dict[str, Any]:
        """How many incidents the memory holds, with which embedding model and dimension."""
        info = _ask(memory.stats)
        return Stats(**{k: v for k, v in info.items() if k in Stats.model_fields}).model_dump()

    _refuse_unknown_arguments(server)
    return server


def _post_note_tool(server: MCPServer, live: LiveIncidents) -> None:
    """The tool that posts an agent's finding on a live incident of `live`'s pager."""
    pager = live.name

    def post_note_to_incident(incident_id: str, note: str) -> NotePosted:
        status = live.post_note(incident_id, redact(note))
        if status >= 300:
            raise ToolError(f"{pager} refused the note on {incident_id} (HTTP {status})")
        return NotePosted(incident=incident_id, posted=True)

    # The schema is read from the annotations, and the id's pattern is the pager's: given as objects (this
    # module's annotations are strings, resolved against its globals, where `live` is not).
    post_note_to_incident.__annotations__ = {
        "incident_id": Annotated[str, Field(pattern=live.id_pattern, description=f"The {pager} incident id.")],
        "note": Annotated[str, Field(min_length=1, max_length=20_000, description="What to tell the responders.")],
        "return": NotePosted,
    }
    server.tool(
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True
        ),
        description=(
            f"Post a note on a live {pager} incident (a finding, the past incident that matches). Redacted "
            "before it is sent."
        ),
    )(post_note_to_incident)


def _shown(value: str) -> str:
    # An argument echoed in an error: redacted and short (an agent may send a megabyte).
    return repr(redact(value)[:80])


def _ask(call: Any) -> Any:
    """Run a memory call; what the user can fix comes back as a ToolError with the reason."""
    try:
        return call()
    except InvalidInput as exc:
        raise ToolError(str(exc)[:500]) from exc
    except OncallMemoryError as exc:
        raise ToolError(f"the memory cannot answer now: {str(exc)[:500]}") from exc


def _alert(text: str, **facts: Any) -> Alert:
    try:
        return Alert(text=text, **facts)
    except ValueError as exc:
        raise ToolError(str(exc)[:500]) from exc


def _filters(**given: Any) -> Filters:
    since = given.pop("since")
    return Filters(**given, since=datetime.combine(since, datetime.min.time()) if since else None)


def _incident(n: Neighbour) -> PastIncident:
    return PastIncident(
        id=n.id,
        title=n.title,
        confidence=n.confidence,
        similarity=n.similarity,
        score=n.score,
        age=n.age,
        service=n.service,
        env=n.env,
        root_cause=n.root_cause,
        fixes_worked=n.fixes_worked,
        fixes_failed=n.fixes_failed,
        fixes=[Fix(**f.model_dump()) for f in n.fixes],
        reasons=n.reasons,
        url=n.url,
        resolution_minutes=n.resolution_minutes,
    )


def _answer(lookup: Lookup) -> Answer:
    low = lookup.confidence == "low"
    note = "; ".join(x for x in (lookup.degraded, NOTHING_CLOSE if low and lookup.neighbours else None) if x)
    return Answer(
        confidence=lookup.confidence,
        nothing_close=low,
        note=note or None,
        incidents=[_incident(n) for n in lookup.neighbours],
    )


def _suggestions(lookup: Lookup) -> Suggestions:
    worked: dict[str, list[str]] = defaultdict(list)
    failed: dict[str, list[str]] = defaultdict(list)
    last: dict[str, str] = {}
    for n in lookup.neighbours:
        if n.confidence == "low":
            continue
        for f in n.fixes:
            if f.outcome in ("resolved", "mitigated"):
                worked[f.action].append(n.id)
                if f.at and f.at > last.get(f.action, ""):
                    last[f.action] = f.at
            else:
                failed[f.action].append(n.id)
    best_first = sorted(worked, key=lambda a: (len(worked[a]), last.get(a, "")), reverse=True)
    fixes = [
        SuggestedFix(action=a, worked_in=worked[a], failed_in=failed.get(a, []), last_worked=last.get(a))
        for a in best_first
    ]
    return Suggestions(confidence=lookup.confidence, nothing_close=lookup.confidence == "low", fixes=fixes)


def _refuse_unknown_arguments(server: MCPServer) -> None:
    """An argument the tool does not take is refused, not silently dropped: an agent learns of its typo. And
    every refused argument is told in plain words: which argument, what is wrong, what the tool takes (not
    pydantic's report with its links and model names)."""
    for tool in server._tool_manager.list_tools():
        model = tool.fn_metadata.arg_model
        model.model_config["extra"] = "forbid"
        # A refused argument is named, never echoed: it may be a megabyte, or hold a secret.
        model.model_config["hide_input_in_errors"] = True
        model.model_rebuild(force=True)
        tool.parameters = model.model_json_schema(by_alias=True)
        object.__setattr__(tool, "run", _in_plain_words(tool.run, tool.name, sorted(model.model_fields)))


def _in_plain_words(run: Any, name: str, takes: list[str]) -> Any:
    async def plain(*args: Any, **kwargs: Any) -> Any:
        try:
            return await run(*args, **kwargs)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(f"{name}: {argument_problems(exc.__cause__, takes)}") from None
            raise

    return plain


def argument_problems(exc: ValidationError, takes: list[str]) -> str:
    """`limit: Input should be less than or equal to 20; lmit is not an argument (it takes: limit, text)`."""
    problems = []
    for error in exc.errors(include_input=False, include_url=False):
        field = ".".join(str(p) for p in error["loc"]) or "arguments"
        if error["type"] == "missing":
            problems.append(f"{field} is required")
        elif error["type"] == "extra_forbidden":
            problems.append(f"{field} is not an argument (it takes: {', '.join(takes)})")
        else:
            problems.append(f"{field}: {error['msg']}")
    return "; ".join(problems)
