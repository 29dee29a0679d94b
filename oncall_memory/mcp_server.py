"""The memory for AI on-call agents: an MCP server (the official `mcp` SDK), over stdio
(`oncall-memory mcp`) and streamable HTTP under the service at `/mcp` (with the service's API token).

The tools answer with the same JSON as `oncall-memory similar --json`: fixes that worked and did not,
what changed over time, reasons, age and link, so an agent can act on it and say why.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from . import payload as P
from .alert import Alert, Filters
from .errors import InvalidInput
from .memory import Memory
from .redact import redact

INSTRUCTIONS = (
    "oncall-memory holds a team's past incidents: what broke, why, and what fixed it. When an alert fires, "
    "call similar_incidents with the alert's text (and its service/env when you know them) before "
    "investigating: it returns past incidents by meaning, each with the fixes that worked, the fixes that "
    "did not (try those last), and why it ranked where it did. Use get_incident for one incident's whole "
    "record. When a suggestion turned out right or wrong, call record_feedback: it moves that suggestion "
    "for the next alert like this one."
)
# Internals of the stored record an agent has no use for.
HIDDEN = {*P.INTERNAL, P.SIGNATURE_KEY, P.HAS_WORKING_FIX, P.TEXT}


def build_server(memory: Memory) -> MCPServer:
    server = MCPServer("oncall-memory", instructions=INSTRUCTIONS)

    @server.tool()
    def similar_incidents(
        text: Annotated[str, Field(description="The alert as it fired: its title, summary or error message.")],
        service: Annotated[
            str | None, Field(description="The service alerting, if known (ranks its incidents first).")
        ] = None,
        env: Annotated[
            str | None, Field(description="The environment or cluster, if known (ranks its incidents first).")
        ] = None,
        flavor: Annotated[
            str | None, Field(description="The platform: eks, aks, gke, onprem ... (a preference).")
        ] = None,
        tags: Annotated[
            list[str] | None, Field(description="Component tags such as dns, database (a preference).")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=20, description="How many past incidents to return.")] = 5,
        only_env: Annotated[str | None, Field(description="Return only incidents of this env (a hard filter).")] = None,
    ) -> list[dict[str, Any]]:
        """Past incidents most like this alert, best first. Each has: id, title, url, age, fixes_worked
        (try these first), fixes_failed (tried before without effect, or made it worse), fixes (each action's
        latest outcome with its history when it changed), root_cause, and reasons (why it ranked here).
        Call this first when an alert fires."""
        alert = Alert(text=text, service=service, env=env, flavor=flavor, component_tags=tags or [])
        lookup = memory.similar(alert, filters=Filters(env=only_env), limit=limit)
        return [n.model_dump(mode="json") for n in lookup.neighbours]

    @server.tool()
    def get_incident(
        incident_id: Annotated[str, Field(description="An incident id from similar_incidents, e.g. INC-1042.")],
    ) -> dict[str, Any]:
        """One past incident's whole record: title, root cause, error signature, on-call note, every fix
        tried with its outcome, service, env, times and link; and its own nearest past incidents."""
        record = memory.incident(incident_id)
        if record is None:
            raise InvalidInput(f"no incident {redact(incident_id)[:200]!r} in the memory")
        neighbours = memory.neighbours_of(record, limit=3).neighbours
        return {
            **{k: v for k, v in record.items() if k not in HIDDEN},
            "similar": [{"id": n.id, "title": n.title, "reasons": n.reasons} for n in neighbours],
        }

    @server.tool()
    def record_feedback(
        alert_text: Annotated[
            str, Field(description="The alert the suggestion was made for, as given to similar_incidents.")
        ],
        suggested: Annotated[str, Field(description="The suggested incident's id.")],
        verdict: Annotated[
            Literal["helped", "not related"], Field(description="Did that past incident help with this alert?")
        ],
        who: Annotated[str, Field(description="Who is giving the verdict (the agent or the responder).")] = "agent",
    ) -> dict[str, Any]:
        """Tell the memory whether a suggestion helped. "not related" pushes it down and "helped" up, for
        the next alert that reads the same; it is shown among the reasons."""
        recorded = memory.record_feedback(Alert(text=alert_text), suggested, verdict, who=who, ref="mcp")
        return {"recorded": recorded, "suggested": redact(suggested), "verdict": verdict}

    @server.resource("oncall-memory://stats", mime_type="application/json")
    def stats() -> dict[str, Any]:
        """How many incidents the memory holds, the embedding model and dimension, where it lives."""
        return memory.stats()

    return server
