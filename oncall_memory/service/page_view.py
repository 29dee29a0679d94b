"""What the search page shows, made from a lookup and the memory: each result's fixes by what they did and its
other reasons, the facts read from a pasted alert, hints for a fact the memory has never seen, the status
panel, and times and long alerts as people read them; rendered with the page's headers (`HEADERS`)."""

from __future__ import annotations

import difflib
from datetime import UTC, datetime
from functools import cache
from typing import Any
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, select_autoescape

from ..answer.ranking import AGE, FIX_KINDS, Neighbour, human_age
from ..answer.retrieve import Lookup
from ..domain import payload as P
from ..domain.incident import worked
from ..domain.pasted import pasted_facts
from ..errors import OncallMemoryError
from ..links import web_link
from ..memory import Memory
from ..redact import redact
from .deps import outbox_of
from .outbox import FAILED, NEW, PENDING, SENDING

# One same-origin script (Enter submits) and nothing else; nothing linked learns what was searched.
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    # Nothing of the page's address to another site (a link to the pager), while the page's own forms keep
    # their true `Origin`: under "no-referrer" a browser sends `Origin: null` on a same-origin POST, which is
    # also what a cross-site page can make its forms send.
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


@cache
def templates() -> Environment:
    env = Environment(
        loader=PackageLoader("oncall_memory.service", "templates"),
        autoescape=select_autoescape(default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["web_link"] = web_link
    env.filters["incident_path"] = lambda incident_id: "/incidents/" + quote(incident_id, safe="")
    env.filters["when"] = when
    env.filters["fold"] = fold
    env.filters["isotime"] = lambda stamp: datetime.fromtimestamp(stamp, UTC).isoformat()
    env.filters["clock"] = lambda stamp: datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d %H:%M UTC")
    return env


def fold(text: str, width: int) -> str:
    """A pasted alert on one line for a heading: its lines joined, cut at a word within `width` with an
    ellipsis (tapping the folded search opens the box with the whole alert)."""
    line = " ".join(text.split())
    if len(line) <= width:
        return line
    cut = line[: width - 1]
    if " " in cut[width // 2 :]:  # a word boundary in the second half; a single long token is cut anyway
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:") + "…"


def when(value: Any) -> dict[str, str] | None:
    """A stored time as people read it ("3 days ago"), with the exact time for a hover and a machine."""
    if not value:
        return None
    try:
        at = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return {"human": str(value), "exact": str(value), "iso": ""}
    at = at if at.tzinfo else at.replace(tzinfo=UTC)
    return {"human": ago(at), "exact": at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC"), "iso": at.isoformat()}


def render(name: str, code: int = 200, **context: Any) -> HTMLResponse:
    return HTMLResponse(templates().get_template(name).render(**context), status_code=code, headers=HEADERS)


def derive_facts(
    form: dict[str, Any], known_values: dict[str, list[str]], mapping: dict[str, list[str]]
) -> dict[str, str]:
    """Fill the facts the responder left empty from the pasted alert (as the webhooks read them), in
    place; returns fact -> where it came from, for the page to say so."""
    if not form["q"].strip():
        return {}
    derived = {}
    for fact, (value, source) in pasted_facts(form["q"], known_values, mapping).items():
        if not form.get(fact):
            form[fact] = value
            derived[fact] = source
    return derived


def typo_hints(form: dict[str, Any], known_values: dict[str, list[str]]) -> list[dict[str, Any]]:
    """For a service, env or flavor the memory has never seen: the nearest it knows, as one-click fixes."""
    hints = []
    for fact in ("service", "env", "flavor"):
        value, candidates = form.get(fact), known_values.get(fact) or []
        if not value or not candidates or value in candidates:
            continue
        near = difflib.get_close_matches(value, candidates, n=3, cutoff=0.6)
        hints.append({"fact": fact, "value": value, "near": near})
    return hints


def clip_said(said: str) -> str:
    return redact(said)[:200]


def results(lookup: Lookup | None) -> list[dict[str, Any]]:
    return [result(n) for n in lookup.neighbours] if lookup else []


def result(n: Neighbour) -> dict[str, Any]:
    """One neighbour as the page shows it: fixes by what they did, then the other reasons."""
    worked_: list[str] = []
    no_effect: list[str] = []
    worse: list[str] = []
    for fix in n.fixes:
        line = fix.action + (f" ({fix.history})" if fix.history else "")
        (worked_ if worked(fix.outcome) else worse if fix.outcome == "worsened" else no_effect).append(line)
    if not n.fixes:  # a neighbour without the fix views (older payloads): the two lists it always has
        worked_, no_effect = list(n.fixes_worked), list(n.fixes_failed)
    return {
        "n": n,
        "worked": worked_,
        "no_effect": no_effect,
        "worse": worse,
        "why": n.reasons_except(AGE, *FIX_KINDS) if n.boosts else n.reasons,
    }


def known(memory: Memory) -> dict[str, list[str]]:
    """The services, envs and flavors the memory holds, offered as suggestions in the form."""
    try:
        values = memory.known_values()
    except OncallMemoryError:
        return {}
    return {field: sorted(values.get(field, ())) for field in (P.SERVICE, P.ENV, P.FLAVOR)}


def panel(request: Request, memory: Memory) -> dict[str, Any]:
    """The status panel: how much the memory holds, with which model, how fresh, and what is undelivered."""
    try:
        count: int | None = memory.stats()["count"]
    except OncallMemoryError:
        count = None
    depth = outbox_of(request).depth()
    last = memory.last_ingest
    return {
        "count": count,
        "model": memory.embedder.model,
        "last_ingest": last,
        "last_ingest_ago": ago(last.at) if last else None,
        "pending": sum(n for (_, state), n in depth.items() if state in (NEW, PENDING, SENDING)),
        "failed": sum(n for (_, state), n in depth.items() if state == FAILED),
    }


def ago(at: datetime) -> str:
    """`ranking.human_age`, the one rule for ages, of a moment."""
    return human_age((datetime.now(UTC) - at).total_seconds() / 86400)
