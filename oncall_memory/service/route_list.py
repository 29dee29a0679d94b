"""Every route the app serves, flattened: FastAPI 0.150 keeps an included router as one entry of
`app.router.routes` (`_IncludedRouter`) and matches its routes lazily, so a walk of that list alone missed
`/similar`, `/ingest` and every other route of an included router (an `OPTIONS /similar` answered 405 with an
empty `Allow`; the startup's table of guards could not see them)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from starlette.routing import BaseRoute, Route


def served(routes: list[BaseRoute]) -> Iterator[BaseRoute]:
    """Each route in `routes`, an included router's own routes in its place (as Starlette matches them)."""
    for route in routes:
        contexts = getattr(route, "effective_route_contexts", None)
        if contexts is None:
            yield route
            continue
        for context in contexts():
            yield context.starlette_route or context.original_route


def paths_and_methods(app: Any) -> list[tuple[str, str]]:
    """Every (route template, method) the app serves, HEAD left out (Starlette serves it with GET)."""
    found = []
    for route in served(app.router.routes):
        path, methods = getattr(route, "path", None), getattr(route, "methods", None) or set()
        found += [(path, m) for m in sorted(methods) if path and m != "HEAD"]
    return found


def http_routes(app: Any) -> list[Route]:
    return [r for r in served(app.router.routes) if isinstance(r, Route)]
