"""What the routes take from the running service, one provider each (FastAPI's `Depends`): no route reads
`request.app.state` itself, and a test can override any one of them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, TypeVar

from fastapi import Depends, HTTPException, Request

from ..memory import Memory
from ..settings import Settings

if TYPE_CHECKING:
    from ..chat import ChatApp
    from .accounts import Accounts
    from .answer_log import AnswerLog
    from .free_space import Room
    from .outbox import Outbox
    from .sessions import Attempts, Sessions
    from .worker import Dispatcher

T = TypeVar("T")


def settings_of(request: Request) -> Settings:
    return request.app.state.settings


def local_token_of(request: Request) -> str | None:
    """The token the service shares with the CLI on its machine (`local_token.py`), once it has started."""
    return getattr(request.app.state, "local_token", None)


def answer_log_of(request: Request) -> AnswerLog:
    """What every alert was answered (`answer_log.py`)."""
    return request.app.state.answer_log


def memory_of(request: Request) -> Memory:
    return request.app.state.memory


def outbox_of(request: Request) -> Outbox:
    return request.app.state.outbox


def room_of(request: Request) -> Room:
    """The data dir's room to write (free space, the last refused write)."""
    return request.app.state.room


def dispatcher_of(request: Request) -> Dispatcher:
    return request.app.state.dispatcher


def learning_of(request: Request) -> frozenset[str]:
    """Whose closed incidents are learnt as they close: "pagerduty", "jira" (each needs its REST API)."""
    return frozenset(request.app.state.learning)


def pagers_of(request: Request) -> tuple[str, ...]:
    """The webhooks mounted, by name: whose job keys (`<name>:<incident id>`) name a pager's incident."""
    return getattr(request.app.state, "pagers", ())


def sessions_of(request: Request) -> Sessions:
    """The search page's logins."""
    return request.app.state.sessions


def accounts_of(request: Request) -> Accounts:
    """People's own logins (`oncall-memory user add`)."""
    return request.app.state.accounts


def attempts_of(request: Request) -> Attempts:
    """Failed logins per client (the throttle)."""
    return request.app.state.login_attempts


def page_secret_of(request: Request) -> bytes:
    """This process's secret for the page's CSRF token when there is no API token (and so no session)."""
    secret: bytes = request.app.state.page_secret
    return secret


def chat_provider(chat: type[ChatApp]) -> Callable[[Request], Awaitable[ChatApp]]:
    """The chat app of this kind the service built at start; its routes answer 404 while it is off."""

    def chat_of(request: Request) -> ChatApp:
        built: ChatApp | None = getattr(request.app.state, "chats", {}).get(chat.name)
        if built is None:
            raise HTTPException(404, f"the {chat.title} app is off: set {chat.variable}")
        return built

    return provider(chat_of)


def provider(read: Callable[[Request], T]) -> Callable[[Request], Awaitable[T]]:
    """`read` as a dependency run on the event loop. FastAPI runs a plain `def` dependency on its thread
    pool: a hop each, per request, for what is an attribute read (measured: 0.9 ms of a lookup's 3.5 ms
    of service path went to resolving two such dependencies)."""

    async def provide(request: Request) -> T:
        return read(request)

    provide.__name__ = provide.__qualname__ = read.__name__
    return provide


SettingsDep = Annotated[Settings, Depends(provider(settings_of))]
memory_provider = provider(memory_of)  # also for routes that take it as a default (the page)
MemoryDep = Annotated[Memory, Depends(memory_provider)]
OutboxDep = Annotated["Outbox", Depends(provider(outbox_of))]
AnswerLogDep = Annotated["AnswerLog", Depends(provider(answer_log_of))]
DispatcherDep = Annotated["Dispatcher", Depends(provider(dispatcher_of))]
RoomDep = Annotated["Room", Depends(provider(room_of))]
LearningDep = Annotated[frozenset[str], Depends(provider(learning_of))]
PagersDep = Annotated[tuple[str, ...], Depends(provider(pagers_of))]
