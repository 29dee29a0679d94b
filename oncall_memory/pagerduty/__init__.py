"""PagerDuty, all of it in one place: the REST API v2 client with its limits (`api.py`) and PagerDuty
as an incident source, with how an incident and its notes become an `Incident` (`source.py`). What its
webhooks send is read in `pagers.py`, beside Alertmanager's and Opsgenie's."""

from .api import FIRST_YEAR, MAX_RANGE, PagerDutyAPI, error_message, wait_hint

__all__ = ["FIRST_YEAR", "MAX_RANGE", "PagerDutyAPI", "error_message", "wait_hint"]
