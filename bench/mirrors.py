"""Where the lab finds the public repositories it reads (runbooks, alert rules, secret catalogues, logs):
bare mirrors under /work/.mirror (`fetch`), or any checkout given with `--mirrors`."""

from __future__ import annotations

import subprocess
from pathlib import Path

MIRRORS = Path("/work/.mirror")


class Tree:
    """Files of a repository, from a checkout (a folder) or a bare mirror (a git dir)."""

    def __init__(self, path: Path):
        self.path = path
        self.bare = not (path / ".git").exists() and (path / "HEAD").exists()

    def files(self, under: str) -> list[str]:
        if self.bare:
            out = subprocess.run(
                ["git", "--git-dir", str(self.path), "ls-tree", "-r", "--name-only", "HEAD", under],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            return out.split()
        return [str(p.relative_to(self.path)) for p in (self.path / under).rglob("*") if p.is_file()]

    def read(self, name: str) -> str:
        if self.bare:
            return subprocess.run(
                ["git", "--git-dir", str(self.path), "show", f"HEAD:{name}"], check=True, capture_output=True, text=True
            ).stdout
        return (self.path / name).read_text(encoding="utf-8")


def tree(mirrors: Path, repo: str) -> Tree:
    for candidate in (mirrors / repo.replace("/", "+") / "repo", mirrors / repo.split("/")[1], mirrors / repo):
        if candidate.exists():
            return Tree(candidate)
    raise SystemExit(f"no copy of {repo} under {mirrors}: git clone https://github.com/{repo} there")
