"""PagerDuty, all of it in one place: the REST API v2 client with its limits (`api.py`), PagerDuty as an
incident source (`source.py`), its Webhooks v3 (`webhook.py`), the answer as a note (`notes.py`) and the
memory learning as incidents resolve (`learner.py`)."""

from .api import MAX_RANGE, PagerDutyAPI

__all__ = ["MAX_RANGE", "PagerDutyAPI"]
