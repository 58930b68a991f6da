"""Git repositories and manifests of external data written for the tests of math2.data."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import yaml

GIT = ["-c", "user.email=t@example.org", "-c", "user.name=t", "-c", "commit.gpgsign=false"]


def git(repo: Path, *args: str) -> str:
    res = subprocess.run(
        ["git", "-C", str(repo), *GIT, *args], capture_output=True, text=True, check=True
    )
    return res.stdout.strip()


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    """Write `files` into `repo` (made on first use), commit them; the commit."""
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        git(repo, "init", "-q")
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


def sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def manifest(path: Path, sets: list[dict]) -> Path:
    """A manifest of external data in data/external.yaml's format."""
    path.write_text(yaml.safe_dump({"sets": sets}, sort_keys=False, allow_unicode=True))
    return path


# A small set: two theorem pages, at `lists/` in the repository, `thm/` in the data folder.
PAGES = {
    "lists/one.md": "---\n# One\nwikidata: Q1\n---\n",
    "lists/two.md": "---\n# Two\nwikidata: Q2\n---\n",
}


def pages_set(url: str, pin: str, **extra) -> dict:
    return {
        "name": "pages",
        "title": "two pages written for the tests",
        "repository": url,
        "commit": pin,
        "licence": "CC0-1.0",
        "folder": "thm/pages",
        "fetch": "git",
        "files": {
            p.removeprefix("lists/"): {"sha256": sha(t), "from": p} for p, t in PAGES.items()
        },
        **extra,
    }
