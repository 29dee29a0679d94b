"""Passwords on everyday tools' command lines and in their files: `.netrc`, `.pgpass`, `mysql -p`, `curl -u`,
`sshpass -p`, `net use`, `smbclient -U user%password`. Each rule replaces the password only."""

from __future__ import annotations

from .base import Detector, pattern

COMMAND_LINES: list[Detector] = [
    pattern(
        ".netrc entry",
        r"(?i)\bmachine\s+\S+(?:\s+login\s+\S+)?\s+password\s+(?P<s>\S+)",
        group="s",
        keywords=("machine",),
    ),
    # host:port:database:user:password (a host of three characters or more with a letter or dot: a MAC
    # address is not one).
    pattern(
        ".pgpass line",
        r"(?:^|[\s\"'`])[\w-]*[A-Za-z.][\w.-]*:(?:\d{2,5}|\*):[\w.*-]+:[\w.*-]+:"
        r"(?P<s>[^\s\"'`:]{4,})",
        group="s",
        keywords=(":",),
    ),
    pattern(
        "mysql -p",
        r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?\s-p(?P<s>[^\s\"']+)",
        group="s",
        keywords=("mysql", "mariadb"),
    ),
    pattern(
        "curl -u",
        r"\b(?:curl|wget|http)\b[^\n]*?\s(?:-u|--user|--http-user)[ \t=]+[\"']?[^\s:\"']*:"
        r"(?P<s>[^\s\"']+)",
        group="s",
        keywords=("curl", "wget", "http"),
    ),
    pattern(
        "tool -p / -a / -w",
        r"\b(?:sshpass|docker\s+login|podman\s+login|helm\s+registry\s+login|"
        r"redis-cli|ldap\w*|mongo\w*|sqlcmd|smbclient|htpasswd\s+-b\S*\s+\S+\s+\S+|nuget\s+push)\b[^\n]*?"
        r"\s(?:-p|-a|-w|-P|-k|-ApiKey)[ \t]+[\"']?(?P<s>[^\s\"']+)",
        group="s",
        keywords=("sshpass", "login", "redis-cli", "ldap", "mongo", "sqlcmd", "smbclient", "htpasswd", "nuget"),
    ),
    pattern(
        "net use password", r"(?i)\bnet\s+use\s+\S+\s+/user:\S+\s+(?P<s>[^\s/]\S*)", group="s", keywords=("net use",)
    ),
    pattern("smbclient user%password", r"\s-U\s+[^\s%]+%(?P<s>\S+)", group="s", keywords=("%",)),
]
