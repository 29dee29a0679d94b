"""The one rule for a link taken from outside (a stored incident's url, an alert's runbook): only http(s),
only one whole token. Applied wherever a link is shown or posted: the page, Slack, PagerDuty notes.

A `javascript:` or `data:` URL must never become clickable, and a URL with white space or Slack's control
characters (`<`, `>`, `|`) could be read as something else in a chat message.
"""

from __future__ import annotations

import re

_WEB = re.compile(r"https?://[^\s<>|\x00-\x1f\x7f]+\Z", re.I)


def web_link(url: object) -> str | None:
    """`url` (its surrounding white space stripped) when it is a plain http(s) link, else None."""
    if not isinstance(url, str):
        return None
    url = url.strip()
    return url if _WEB.match(url) else None
