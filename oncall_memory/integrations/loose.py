"""How a vendor's payload is read: leniently (`Loose`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Loose(BaseModel):
    """A vendor's payload, read leniently: vendors add fields over time; we read what we need. Blank text is
    no text."""

    model_config = ConfigDict(extra="allow", str_strip_whitespace=True)
