"""A repository at its pinned commit, fetched by git into a cache folder (a library's source
for `math2 build`, an external data set for `math2 data fetch`).

`fetch_pinned` makes a shallow fetch of exactly the pinned commit (no branch, no history; with
`depth=None` the commit's whole history, for a set mined from it; with `sparse`, only those
paths are checked out and only their contents fetched), checks the commit out, verifies that
HEAD is that commit, and only then moves the folder to its final name, so a fetch killed at any
point leaves either nothing or a complete, verified checkout; the next call removes half-done
folders and starts again. Each phase of git's progress is a stage of `math2.util.progress`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from math2.errors import Math2Error
from math2.util.progress import Stage, stage

_FULL_SHA = re.compile(r"[0-9a-f]{40}")
_PROGRESS = re.compile(r"^(?:remote: )?([A-Za-z ]+):\s+(\d+)%(?:\s+\((\d+)/(\d+)\))?(.*)")
_PARTIAL = ".partial-"


class FetchError(Math2Error):
    """The pinned source could not be fetched or verified."""


def head_commit(root: Path) -> str | None:
    """The commit a git checkout is at, or None when `root` is not one (or git is missing)."""
    if not (root / ".git").exists():
        return None
    try:
        res = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    sha = res.stdout.strip()
    return sha if res.returncode == 0 and _FULL_SHA.fullmatch(sha) else None


def cached_checkout(cache: Path, name: str, commit: str) -> Path | None:
    """The verified checkout of `name` at `commit` under `cache`, when a fetch finished."""
    final = cache / f"{name}-{commit}"
    if final.is_dir() and (head := head_commit(final)) is not None and head.startswith(commit):
        return final
    return None


def _git(
    args: list[str],
    cwd: Path,
    timeout_s: float,
    say: Callable[[str], None],
    stdin: str | None = None,
) -> None:
    """Run git, passing its progress lines to `say`; FetchError with git's last words."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "LC_ALL": "C"}
    proc = subprocess.Popen(
        [
            "git",
            "-c",
            "advice.detachedHead=false",
            "-c",
            "http.lowSpeedLimit=1000",
            "-c",
            "http.lowSpeedTime=60",
            *args,
        ],
        cwd=cwd,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
    )
    if stdin is not None:
        assert proc.stdin is not None
        proc.stdin.write(stdin.encode())
        proc.stdin.close()
    tail: list[str] = []
    # each phase of git's progress (Counting objects, Receiving objects, Resolving deltas, …) is
    # a stage of math2.util.progress, ended when the next begins: bars with counts and an ETA on
    # a terminal, lines otherwise
    phase: tuple[str, contextlib.ExitStack, Stage] | None = None
    assert proc.stdout is not None
    buf = b""

    def end_phase() -> None:
        nonlocal phase
        if phase is not None:
            phase[1].close()
            phase = None

    try:
        while chunk := proc.stdout.read1(4096):  # type: ignore[attr-defined]
            buf += chunk
            *lines, buf = re.split(rb"[\r\n]", buf)
            for raw in lines:
                line = raw.decode(errors="replace").strip()
                if not line:
                    continue
                tail = [*tail[-4:], line]
                if m := _PROGRESS.match(line):
                    name, pct, done, total, rest = m.groups()
                    if phase is None or phase[0] != name:
                        end_phase()
                        unit = name.split()[-1].lower() if total else "%"
                        stack = contextlib.ExitStack()
                        st = stack.enter_context(stage(f"git {args[0]}: {name.lower()}", unit=unit))
                        phase = (name, stack, st)
                    note = rest.strip(" ,").removesuffix("done.").strip(" ,")
                    if total:
                        phase[2].update(done=int(done), total=int(total), note=note)
                    else:
                        phase[2].update(done=int(pct), total=100, note=note)
                    continue
                say(line)
        rc = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        proc.kill()
        raise FetchError(f"git {args[0]} took longer than {timeout_s:.0f} s") from exc
    finally:
        end_phase()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if rc != 0:
        raise FetchError(f"git {args[0]} failed: {' / '.join(tail[-2:]) or f'exit {rc}'}")


def fetch_pinned(
    url: str,
    commit: str,
    cache: Path,
    name: str,
    progress: Callable[[str], None] | None = None,
    timeout_s: float = 3600.0,
    *,
    depth: int | None = 1,
    sparse: list[str] | None = None,
) -> Path:
    """A verified checkout of `url` at `commit` under `cache` (fetched once, then reused).

    `commit` must be the full 40-hex commit: a shallow fetch asks the server for exactly that
    object, and verification compares it with HEAD. `depth=None` fetches the commit's whole
    history; `sparse` (paths in the repository) checks out only those files, and asks the
    server for no other file's contents.
    """
    say = progress or (lambda _m: None)
    if not _FULL_SHA.fullmatch(commit):
        raise FetchError(f"the pin {commit!r} of {name} is not a full 40-hex commit")
    if shutil.which("git") is None:
        raise FetchError("git is not installed (Debian: apt-get install git)")
    if (done := cached_checkout(cache, name, commit)) is not None:
        return done
    cache.mkdir(parents=True, exist_ok=True)
    final = cache / f"{name}-{commit}"
    for stale in cache.glob(f"{name}-{commit}{_PARTIAL}*"):
        shutil.rmtree(stale, ignore_errors=True)
    if final.exists():  # there, but not at the commit: not ours to trust
        shutil.rmtree(final)
    work = cache / f"{name}-{commit}{_PARTIAL}{os.getpid()}"
    work.mkdir()
    try:
        say(f"fetching {name} at {commit[:12]} from {url} into {final}")
        _git(["init", "-q"], work, 60, say)
        _git(["remote", "add", "origin", url], work, 60, say)
        shallow = ["--depth", str(depth)] if depth is not None else []
        blobs = ["--filter=blob:none"] if sparse is not None else []
        _git(
            ["fetch", *shallow, *blobs, "--progress", "--no-tags", "origin", commit],
            work,
            timeout_s,
            say,
        )
        if sparse is not None:
            paths = "".join(f"/{p.lstrip('/')}\n" for p in sparse)
            _git(["sparse-checkout", "set", "--no-cone", "--stdin"], work, 60, say, stdin=paths)
        _git(["checkout", "-q", "--detach", "FETCH_HEAD"], work, timeout_s, say)
        head = head_commit(work)
        if head != commit:
            raise FetchError(f"fetched {name} is at {head or 'no commit'}, not the pin {commit}")
        work.rename(final)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    say(f"{name} at {commit[:12]} verified in {final}")
    return final
