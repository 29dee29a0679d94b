"""The maintained catalogue: MongoDB's Kingfisher (PyPI `kingfisher-secret-scanner`), its bundled rules
(Betterleaks, the gitleaks successor, and Google's Veles: about 490 vendor token rules) compiled for
Vectorscan and confirmed by Rust's `regex`, both linear in their input, in process.

Loaded on first use (0.4 s with Kingfisher's compiled-rule cache, about 3 s the first time on a machine),
then shared. Its base64 layer finds a known token inside base64 too.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from functools import cache
from importlib.metadata import version
from typing import Any, Final

from .base import Detector, Span

# Rules that find what names or locates a credential rather than the credential itself (an account or
# client id, a host, a URL, a public key): kept, since ids and links are what a responder needs to read.
_IDENTIFIER_RULE = re.compile(
    r"(?:client-id|app-id|application-id|account-id|tenant-id|cloud-name|account-name|token-name|username|domain|"
    r"host|instance-url|jfrog-url|project-url|rest-url|address|repository|public-key|pub-key|pub-api-key|"
    r"project-api-key|public-api-token|planetscale-id|messagebird-client-id)(?:\.\d+)?$"
)
# "low" loads the whole catalogue; a rule's own confidence decides nothing here, since a false alarm costs a
# word and a miss costs a credential.
CONFIDENCE: Final = "low"
_lock = threading.Lock()


def catalogue_version() -> str:
    return version("kingfisher-secret-scanner")


@cache
def _scanner() -> Any:
    from kingfisher_sdk import Rules, Scanner

    return Scanner(Rules(confidence=CONFIDENCE), base64=True)


def rule_count() -> int:
    return len(loaded().rules)


def loaded() -> Any:
    with _lock:  # one compile, even when the first lookups arrive together
        return _scanner()


def _char_offsets(text: str, data: bytes) -> list[int] | None:
    """Byte offset -> character offset, or None when they are the same (ASCII, the usual case)."""
    if len(data) == len(text):
        return None
    offsets = [0] * (len(data) + 1)
    at = 0
    for i, ch in enumerate(text):
        width = len(ch.encode("utf-8", "surrogatepass"))
        for b in range(width):
            offsets[at + b] = i
        at += width
    offsets[at] = len(text)
    return offsets


def _find(text: str) -> Iterator[Span]:
    data = text.encode("utf-8", "surrogatepass")
    findings = loaded().scan(data)
    if not findings:
        return
    offsets = _char_offsets(text, data)
    for finding in findings:
        if _IDENTIFIER_RULE.search(finding.rule_id):
            continue
        start, end = finding.location["start_offset"], finding.location["end_offset"]
        if offsets is not None:
            start, end = offsets[start], offsets[min(end, len(data))]
        if start < end:
            yield start, end


CATALOGUE = Detector("Kingfisher catalogue", _find)
