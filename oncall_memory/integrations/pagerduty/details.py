"""A PagerDuty incident's custom details: what the event that triggered it carried beside its summary
(Events API v2 `payload.custom_details`; Alertmanager's PagerDuty receiver puts the firing alerts'
annotations there). Webhooks v3 leave them out of the incident, so a triggered incident's are read from its
first alert over the REST API before it is looked up, when the memory can read PagerDuty.
"""

from __future__ import annotations

import logging
from typing import Any

from ...domain.alert import Alert
from ...domain.alert_list import listed_texts
from ...errors import OncallMemoryError
from ...jobs import Item, Job
from ...settings import Settings
from .api import PagerDutyAPI

log = logging.getLogger(__name__)
DETAILS_TIMEOUT = 5.0  # seconds; then the incident is looked up by its title alone


def custom_details(alert: dict[str, Any] | None) -> Any:
    """An alert's custom details as the REST API gives them (`body.details`, else `body.cef_details.details`):
    a mapping, a string, or None."""
    body = (alert or {}).get("body") or {}
    if not isinstance(body, dict):
        return None
    details = body.get("details")
    if details in (None, {}, ""):
        details = (body.get("cef_details") or {}).get("details") if isinstance(body.get("cef_details"), dict) else None
    return details


def details_texts(alert: dict[str, Any] | None, skip: list[str]) -> tuple[list[str], list[str]]:
    """The texts among an alert's custom details (`annotations.texts`; a string is one text), and the metrics
    its rule watches: Alertmanager's receiver lists the firing alerts in `firing`, each with its
    annotations and its rule's link, read back as its webhook carries them (`alert_list`)."""
    details = custom_details(alert)
    if isinstance(details, str):
        details = {"details": details}
    return listed_texts(details, skip=skip) if isinstance(details, dict) and details else ([], [])


class CustomDetails:
    """Before a triggered incident is looked up, its custom details are added to what is looked up (and to
    the item's detail line). PagerDuty unreachable or refusing: looked up by its title alone, and logged."""

    def __init__(self, api: PagerDutyAPI):
        self._api = api

    @classmethod
    def from_settings(cls, settings: Settings) -> CustomDetails:
        """Asked once, briefly: a page waits for this read, and PagerDuty being slow must not hold it up."""
        assert settings.pagerduty.token is not None
        api = PagerDutyAPI(
            settings.pagerduty.token,
            base_url=settings.pagerduty.url,
            per_minute=settings.pagerduty.requests_per_minute,
            max_retries=0,
            timeout=DETAILS_TIMEOUT,
        )
        return cls(api)

    def close(self) -> None:
        self._api.close()

    def __call__(self, job: Job) -> Job:
        incident = job.record_of("pagerduty")
        if job.kind != "lookup" or not incident or len(job.items) != 1:
            return job
        item = job.items[0]
        try:
            first = self._api.oldest_alert(incident)
        except OncallMemoryError as exc:
            log.warning("%s: custom details not read (%s); looked up by its title", job.key, exc)
            return job
        extra, metrics = details_texts(first, skip=[item.alert.text])
        if not extra and not metrics:
            return job
        # Built afresh, so the details are redacted where they enter (the title was when the webhook came).
        alert = Alert.model_validate(
            {**item.alert.model_dump(), "text": " - ".join([item.alert.text, *extra]), "metrics": metrics}
        )
        detail = " — ".join(extra) if item.detail is None else item.detail
        richer = Item.model_validate({**item.model_dump(), "alert": alert.model_dump(), "detail": detail})
        return job.model_copy(update={"items": [richer]})
