"""What an HTTP answer from a vendor says, in words: how long it asks us to wait, and why it refused.

Shared by everything that reads or posts to a vendor (the PagerDuty client and notes, the trackers read as
sources, Slack): one reading of `Retry-After` / `ratelimit-reset`, one of an error body, whatever its shape.
"""

from __future__ import annotations

import time

import httpx

EPOCH_FLOOR = 1_000_000_000.0  # September 2001 as a Unix time; as a wait, 31 years


def wait_hint(response: httpx.Response, *, cap: float) -> float | None:
    """Seconds the server asked us to wait (`ratelimit-reset`, else `Retry-After`), at most `cap`.

    `ratelimit-reset` is seconds to wait at PagerDuty and a Unix time at GitLab: a value past `EPOCH_FLOOR`
    (no server asks for a wait of decades) is read as the moment the quota resets."""
    for header in ("ratelimit-reset", "retry-after"):
        value = response.headers.get(header)
        if value is not None:
            try:
                seconds = float(value)
            except ValueError:
                continue
            if seconds > EPOCH_FLOOR:
                seconds -= time.time()
            return min(cap, max(0.0, seconds))
    return None


def error_message(response: httpx.Response) -> str:
    """The vendor's own words for a refused request, whatever its shape: PagerDuty's `error.message` and its
    `errors` list, ServiceNow's `error.message` and `detail`, Jira's `errorMessages` and `errors`, GitHub's
    `message`; else whatever the body says (a proxy's page, `{"error": "down"}`, nothing)."""
    try:
        body = response.json()
    except ValueError:
        return " ".join(response.text.split())[:200]
    if not isinstance(body, dict):
        return str(body)[:200]
    error = body.get("error")
    if isinstance(error, dict):
        errors, detail = error.get("errors"), error.get("detail")
        parts = [str(error.get("message") or "")] + [
            str(e) for e in (errors if isinstance(errors, list) else [errors or ""])
        ]
        parts += [str(detail)] if detail else []
        return ": ".join(p for p in parts if p)[:500] or response.text[:200]
    if error is not None:
        return str(error)[:200]
    messages = body.get("errorMessages")
    parts = [str(m) for m in messages] if isinstance(messages, list) else []
    errors = body.get("errors")
    if isinstance(errors, dict):
        parts += [f"{k}: {v}" for k, v in errors.items()]
    elif isinstance(errors, list):  # JSON:API (Rootly): [{"title": ..., "detail": ...}]
        parts += [str(e.get("detail") or e.get("title") or "") if isinstance(e, dict) else str(e) for e in errors]
    if body.get("message"):
        parts.append(str(body["message"]))
    return "; ".join(p for p in parts if p)[:500] or str(body)[:200]
