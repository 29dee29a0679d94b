"""The enrichment service: pager webhooks in, similar past incidents posted back."""

from .app import create_app

__all__ = ["create_app"]
