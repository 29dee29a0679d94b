"""Where a post-mortem can be read on the web: its page in the git host at the commit that last changed it.

Three git calls per folder, whatever the number of files (the last commit of every file comes from one
`git log`). A folder outside git, without a remote, or a git that fails gives no links: the path is used.
Credentials in a remote URL (`https://user:token@host/...`) never reach a link.
"""

from __future__ import annotations

import logging
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

_SCP = re.compile(r"^(?:[\w.-]+@)?(?P<host>[\w.-]+):(?P<path>[^/].*)$")  # git@github.com:org/repo.git
_URL = re.compile(r"^(?:https?|ssh|git)://(?:[^@/]*@)?(?P<host>[^/:]+)(?::\d+)?/(?P<path>.+)$")
TIMEOUT = 60.0


@dataclass(frozen=True)
class Repository:
    top: Path  # the work tree's top folder
    web: str | None  # https://host/owner/repo, when the remote is on a web host
    commits: dict[str, str]  # path relative to `top` -> the commit that last changed it

    def relative(self, path: Path) -> str:
        return path.resolve().relative_to(self.top).as_posix()

    def link(self, path: Path) -> str | None:
        relative = self.relative(path)
        commit = self.commits.get(relative)
        if self.web is None or commit is None:
            return None  # untracked, or no web remote
        return f"{self.web}{_blob(self.web)}{commit}/{relative}"


def repository(folder: Path) -> Repository | None:
    """The git repository `folder` is in, with the last commit of each of its files; None outside git."""
    top = _git(folder, "rev-parse", "--show-toplevel")
    if top is None:
        return None
    remote = _git(folder, "config", "--get", "remote.origin.url") or _first_remote(folder)
    history = _git(folder, "log", "--format=%x01%H", "--name-only", "--no-renames", "--", ".") or ""
    commits: dict[str, str] = {}
    commit = ""
    for line in history.splitlines():
        if line.startswith("\x01"):
            commit = line[1:]
        elif line and commit:
            commits.setdefault(line, commit)  # newest first: the first commit seen is the last change
    return Repository(Path(top).resolve(), web_url(remote) if remote else None, commits)


def web_url(remote: str) -> str | None:
    """A remote's web address, credentials dropped: git@github.com:org/repo.git -> https://github.com/org/repo."""
    remote = remote.strip()
    match = _URL.match(remote) or _SCP.match(remote)
    if match is None:
        return None  # a local path remote: no web page
    path = match["path"].strip("/").removesuffix(".git")
    return f"https://{match['host']}/{path}"


def _blob(web: str) -> str:
    """How the host names a file at a commit (GitLab and Bitbucket differ from GitHub, Gitea and the rest)."""
    host = web.split("/")[2]
    if "gitlab" in host:
        return "/-/blob/"
    if "bitbucket" in host:
        return "/src/"
    return "/blob/"


def _first_remote(folder: Path) -> str | None:
    names = (_git(folder, "remote") or "").split()
    return _git(folder, "remote", "get-url", names[0]) if names else None


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-c", "core.quotepath=false", "-C", str(folder), *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.info("git %s in %s: %s; post-mortems keep their paths as links", args[0], folder, exc)
        return None
    return done.stdout.strip() if done.returncode == 0 else None
