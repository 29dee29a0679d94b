"""How log lines are written (issue 84): every line with its time, in UTC; `ONCALL_MEMORY_LOG_FORMAT=json`
writes one JSON object a line for a log shipper (time, level, logger, message, and the traceback when there
is one). The same two formats for the CLI's own loggers and for uvicorn's (`serve`), whose default lines
("INFO:     ...") carried no time."""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Literal

LogFormat = Literal["text", "json"]
TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class UtcText(logging.Formatter):
    """`2026-12-08T00:15:17.833Z INFO oncall_memory.service.worker: ...`"""

    default_time_format = "%Y-%m-%dT%H:%M:%S"
    default_msec_format = "%s.%03dZ"

    def __init__(self, fmt: str = TEXT, *args: Any, **kwargs: Any) -> None:
        super().__init__(fmt)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802 - logging's name
        return time.strftime(self.default_time_format, time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"


class JsonLines(logging.Formatter):
    """One JSON object a line: `time`, `level`, `logger`, `message` (and `exception`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        return json.dumps(line, ensure_ascii=False)


def formatter(fmt: LogFormat) -> logging.Formatter:
    return JsonLines() if fmt == "json" else UtcText()


def configure(fmt: LogFormat) -> None:
    """Every handler the root logger has writes in `fmt` (the CLI set them up before settings were read)."""
    for handler in logging.getLogger().handlers:
        handler.setFormatter(formatter(fmt))


def uvicorn_config(fmt: LogFormat) -> dict[str, Any]:
    """Uvicorn's `log_config`: its loggers (the server's and the access log) write in `fmt` too."""
    cls = f"{__name__}.{'JsonLines' if fmt == 'json' else 'UtcText'}"
    handler = {"class": "logging.StreamHandler", "formatter": "line", "stream": "ext://sys.stderr"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"line": {"()": cls}},
        "handlers": {"line": handler},
        "loggers": {
            "uvicorn": {"handlers": ["line"], "level": "INFO", "propagate": False},
            "uvicorn.error": {"level": "INFO"},
            "uvicorn.access": {"handlers": ["line"], "level": "INFO", "propagate": False},
        },
    }
