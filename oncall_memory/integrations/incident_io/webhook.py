"""incident.io's webhooks in, so the memory learns an incident the moment it closes (as it does from
PagerDuty and Jira).

incident.io sends its webhooks through Svix: each carries `webhook-id`, `webhook-timestamp` (Unix seconds)
and `webhook-signature`, a space-separated list of `v1,<base64 HMAC-SHA256>` over
`<id>.<timestamp>.<raw body>`, keyed by the base64 after the endpoint secret's `whsec_` prefix. A
timestamp more than `TOLERANCE` away from now is refused, so a captured delivery cannot be replayed later.

The body is `{"event_type": T, T: {...}}`: for `public_incident.incident_updated_v2` the incident itself,
for `public_incident.incident_status_updated_v2` `{"incident": {...}, ...}`; the private variants carry
only the incident's id. An event about an incident whose status category is `closed` becomes a job that
reads it back through the API and remembers it; a private one is read back to find out. Anything else is
acknowledged and ignored.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from ...credentials import same_secret
from ...jobs import Job
from ...settings import Settings
from ...webhook import Webhook
from .. import Loose

LEARN_EVENTS = (
    "public_incident.incident_updated_v2",
    "public_incident.incident_status_updated_v2",
    "private_incident.incident_updated_v2",
)
TOLERANCE = 5 * 60  # seconds either side of now (Svix's own default)
INCIDENT_ID = r"^[A-Za-z0-9_-]{1,64}$"  # it goes into a REST path


class IncidentIoEvent(Loose):
    """The envelope, for the API's documentation: the event's type, and the object named by it."""

    event_type: str


def verify_signature(secret: str, headers: Any, body: bytes, now: float | None = None) -> bool:
    msg_id, stamp, signatures = (headers.get(h, "") for h in ("webhook-id", "webhook-timestamp", "webhook-signature"))
    if not (msg_id and stamp and signatures):
        return False
    try:
        sent = int(stamp)
        key = base64.b64decode(secret.strip().removeprefix("whsec_"), validate=True)
    except (ValueError, binascii.Error):
        return False
    if abs((time.time() if now is None else now) - sent) > TOLERANCE:
        return False
    signed = msg_id.encode("utf-8", "replace") + b"." + stamp.encode() + b"." + body
    expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    # Every offered signature is compared (a secret being rotated signs twice), each in constant time.
    return sum(same_secret(offered, expected) for offered in signatures.split()[:10]) > 0


def incident_of(body: Any) -> tuple[str | None, dict[str, Any]]:
    """(the event's type, the incident it is about, as far as the body tells)."""
    if not isinstance(body, dict):
        return None, {}
    event = body.get("event_type")
    data = body.get(event) if isinstance(event, str) else None
    if isinstance(data, dict) and isinstance(data.get("incident"), dict):
        data = data["incident"]
    return (event if isinstance(event, str) else None), (data if isinstance(data, dict) else {})


def closed(incident: dict[str, Any], event: str) -> bool | None:
    """Does the body say the incident is closed? None: it cannot tell (a private incident's event)."""
    status = incident.get("incident_status")
    if isinstance(status, dict) and status.get("category"):
        return status["category"] == "closed"
    return None if event.startswith("private_incident.") else False


def learn_job(incident_id: str, delivery: str) -> Job:
    """Read the incident back and remember it; keyed by Svix's message id: each delivery once (its retries
    carry the same id), a later edit learnt again."""
    key = f"incident_io-learn:{incident_id}:{delivery[:100]}"
    return Job.learn(key, "incident closed", incident_id)


class IncidentIoRef(BaseModel):
    id: str = Field(pattern=INCIDENT_ID)


def learns(settings: Settings) -> bool:
    """incident.io incidents are learnt as they close with the webhook's signing secret and an API key."""
    return bool(settings.incident_io.webhook_secret and settings.incident_io.token)


class IncidentIoHook(Webhook):
    """`POST /webhooks/incident_io`, mounted through the `webhook` hook: Svix-signed events; an incident that
    closed is read back and remembered (learning). Off until it can learn."""

    name: ClassVar[str] = "incident_io"
    variable: ClassVar[str] = "ONCALL_MEMORY_INCIDENT_IO_WEBHOOK_SECRET"
    setting = "incident_io.webhook_secret"  # its own settings group (`config.py`)
    body: ClassVar[type[BaseModel] | None] = IncidentIoEvent
    credential: ClassVar[str | None] = "webhook-signature (Svix: webhook-id, webhook-timestamp; a stale one too)"
    challenge: ClassVar[str | None] = None
    guard: ClassVar[str | None] = "signed (Svix's webhook-signature), learning"

    def off(self, settings: Settings) -> str | None:
        if learns(settings):
            return None
        return (
            "learning from incident.io is off: set ONCALL_MEMORY_INCIDENT_IO_WEBHOOK_SECRET (the endpoint's signing "
            "secret) and ONCALL_MEMORY_INCIDENT_IO_TOKEN (to read the incident back)"
        )

    def authentic(self, secret: str, headers: Mapping[str, str], raw: bytes) -> bool:
        return verify_signature(secret, headers, raw)

    def jobs(self, body: Any, settings: Settings, known: Mapping[str, Any]) -> tuple[list[Job], int | str]:
        return self.jobs_from(body, settings, known, {})

    def jobs_from(
        self, body: Any, settings: Settings, known: Mapping[str, Any], headers: Mapping[str, str]
    ) -> tuple[list[Job], int | str]:
        event, incident = incident_of(body)
        if event not in LEARN_EVENTS or closed(incident, event) is False:
            return [], str(event)[:100]
        incident_id = IncidentIoRef.model_validate(incident).id
        return [learn_job(incident_id, headers.get("webhook-id", ""))], 0
