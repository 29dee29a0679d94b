"""What the routes take from the running service, one provider each (FastAPI's `Depends`): no route reads
`request.app.state` itself, and a test can override any one of them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Request

from ..memory import Memory
from ..settings import Settings

if TYPE_CHECKING:
    from .outbox import Outbox
    from .worker import Dispatcher


def settings_of(request: Request) -> Settings:
    return request.app.state.settings


def memory_of(request: Request) -> Memory:
    return request.app.state.memory


def outbox_of(request: Request) -> Outbox:
    return request.app.state.outbox


def dispatcher_of(request: Request) -> Dispatcher:
    return request.app.state.dispatcher


def learning_of(request: Request) -> bool:
    """Are resolved and annotated incidents learnt (PagerDuty's REST API is configured)?"""
    return bool(request.app.state.learning)


SettingsDep = Annotated[Settings, Depends(settings_of)]
MemoryDep = Annotated[Memory, Depends(memory_of)]
OutboxDep = Annotated["Outbox", Depends(outbox_of)]
DispatcherDep = Annotated["Dispatcher", Depends(dispatcher_of)]
LearningDep = Annotated[bool, Depends(learning_of)]
