"""Whether a host is this machine: the service binds open only there, and the CLI sends a query unredacted
only there (or inside TLS). One rule for both."""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """`localhost` or a loopback address (127.0.0.0/8, ::1); a name that is not an address is not."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
