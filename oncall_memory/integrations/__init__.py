"""Integrations: each vendor in one package, `integrations/<name>/`, holding what the core needs of it, as
far as the vendor has each: its webhook (payload models, how an alert and its facts are read from them, the
jobs they become, its auth check), its API client, its source (the backlog), its targets (notes, messages)
and its learner (resolved -> remembered).

The core defines the ports an integration fills: `sources.Source` (a backlog), `targets.Target` (where an
answer goes; a learner is a target of the memory), and the job model (`jobs.Job`) a webhook makes. The
service routes webhooks to the integrations and runs their targets through the outbox; the CLI and the
flow find sources by name (`sources.factory`), the built-in ones and any a package declares in the
`oncall_memory.integrations` entry-point group (see `plugins`).

Integrations import the core, never the service or the CLI, and never each other.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

from pydantic import BaseModel, ConfigDict

ENTRY_POINT_GROUP = "oncall_memory.integrations"


class Loose(BaseModel):
    """A vendor's payload, read leniently: vendors add fields over time; we read what we need. Blank text is
    no text."""

    model_config = ConfigDict(extra="allow", str_strip_whitespace=True)


def plugins(taken: tuple[str, ...] = ()) -> dict[str, EntryPoint]:
    """The integrations installed packages declare, by name (a name in `taken`, a built-in's, cannot be
    taken over)."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name not in taken}
