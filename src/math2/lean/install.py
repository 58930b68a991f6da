"""`math2 lean setup`: toolchain, Mathlib (with its build cache) and the REPL, with the
ecosystem's own tools (elan, lake, `lake exe cache get`), on a machine that has a network."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

ELAN_INIT = "https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh"
REPL_GIT = "https://github.com/leanprover-community/repl"
MATHLIB_GIT = "https://github.com/leanprover-community/mathlib4"


class Step(BaseModel):
    """One setup step: done already, or the command that does it."""

    name: str
    done: bool
    detail: str
    command: list[str] | None = None
    cwd: str | None = None
    # what a person installs or supplies when the step cannot run here (the error's last words)
    needs: str = "it needs a network connection to GitHub and the Lean release servers"


def _elan_bin() -> Path:
    return Path.home() / ".elan" / "bin"


def _tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    elan_bin = _elan_bin() / name
    return str(elan_bin) if elan_bin.exists() else None


ELAN_NEEDS = (
    f"install elan, Lean's toolchain manager (`curl -sSfL {ELAN_INIT} | sh`, on a machine with a "
    "network; https://lean-lang.org/install), then run `math2 lean setup` again"
)


def plan(project_dir: Path, toolchain: str, mathlib_commit: str) -> list[Step]:
    """What is needed, in order, and what of it is already here."""
    lake = _tool("lake") or "lake"
    repl_dir = project_dir.parent / "repl"
    tag = toolchain.rsplit(":", 1)[-1]
    steps = [
        Step(
            name="elan (Lean toolchain manager)",
            done=_tool("elan") is not None,
            detail=_tool("elan") or "not found on PATH or in ~/.elan/bin",
            # downloaded to a file first: in `curl … | sh` a failed download is masked by sh's
            # exit 0 on empty input (issue 46 §3)
            command=[
                "sh",
                "-c",
                f'f=$(mktemp) && curl -sSfL {ELAN_INIT} -o "$f" '
                f'&& sh "$f" -y --default-toolchain none; rc=$?; rm -f "$f"; exit $rc',
            ],
            needs=ELAN_NEEDS,
        ),
        Step(
            name=f"toolchain {toolchain}",
            done=_has_toolchain(toolchain),
            detail="installed" if _has_toolchain(toolchain) else "not installed",
            command=[_tool("elan") or "elan", "toolchain", "install", toolchain],
        ),
        Step(
            name=f"Lake project with Mathlib at {mathlib_commit[:12]}",
            done=(project_dir / "lakefile.toml").exists(),
            detail=str(project_dir),
            command=None,  # written by `write_project`
            cwd=str(project_dir),
        ),
        Step(
            name="Mathlib sources and build cache (lake exe cache get)",
            done=(project_dir / ".lake" / "packages" / "mathlib" / ".lake" / "build").exists(),
            detail=str(project_dir / ".lake" / "packages" / "mathlib"),
            command=["sh", "-c", f"{lake} update && {lake} exe cache get"],
            cwd=str(project_dir),
        ),
        Step(
            name=f"Lean REPL at {tag}",
            done=(repl_dir / ".lake" / "build" / "bin" / "repl").exists(),
            detail=str(repl_dir),
            command=[
                "sh",
                "-c",
                f"(test -d {repl_dir} || git clone --depth 1 --branch {tag} {REPL_GIT} {repl_dir})"
                f" && cd {repl_dir} && {lake} build",
            ],
        ),
    ]
    return steps


def _has_toolchain(toolchain: str) -> bool:
    elan = _tool("elan")
    if not elan:
        return False
    try:
        out = subprocess.run(
            [elan, "toolchain", "list"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    short = toolchain.replace("leanprover/lean4:", "")
    return any(short in line for line in out.splitlines())


def write_project(project_dir: Path, toolchain: str, mathlib_commit: str) -> None:
    """A minimal Lake project that requires Mathlib at the pinned commit."""
    project_dir.mkdir(parents=True, exist_ok=True)
    (project_dir / "lean-toolchain").write_text(toolchain + "\n")
    (project_dir / "lakefile.toml").write_text(
        'name = "math2check"\n\n[[require]]\nname = "mathlib"\n'
        f'git = "{MATHLIB_GIT}"\nrev = "{mathlib_commit}"\n'
    )


class SetupFailed(RuntimeError):
    """A step failed; the message says which, with the tail of its output."""


def run(
    steps: list[Step],
    project_dir: Path,
    toolchain: str,
    mathlib_commit: str,
    echo: Callable[[str], object] = print,
) -> None:
    """Run every step that is not done, in order; stop at the first failure with one line that
    names the step, what it printed last and what to install (`SetupFailed`), never a
    traceback: a missing program (curl, elan, lake, git) or a download without a network ends
    the same way."""
    env = dict(os.environ)
    # elan installs into ~/.elan/bin, which a fresh shell's PATH may lack: later steps find it
    env["PATH"] = os.pathsep.join([str(_elan_bin()), env.get("PATH", "")])
    for step in steps:
        if step.done:
            echo(f"ok       {step.name}: {step.detail}")
            continue
        echo(f"running  {step.name}")
        if step.command is None:
            write_project(project_dir, toolchain, mathlib_commit)
            continue
        if step.needs == ELAN_NEEDS and shutil.which("curl", path=env["PATH"]) is None:
            raise SetupFailed(
                f"step '{step.name}': curl is not installed to fetch elan; {ELAN_NEEDS}"
            )
        if step.cwd:
            Path(step.cwd).mkdir(parents=True, exist_ok=True)
        try:
            proc = subprocess.run(
                step.command, cwd=step.cwd, capture_output=True, text=True, env=env
            )
        except OSError as exc:  # the program itself is missing (elan before elan is installed)
            raise SetupFailed(
                f"step '{step.name}' could not start {step.command[0]!r} ({exc.strerror}); "
                f"{ELAN_NEEDS if _tool('elan') is None else step.needs}"
            ) from exc
        if proc.returncode != 0:
            lines = (proc.stderr or proc.stdout or "").strip().splitlines()
            said = f": {lines[-1].strip()}" if lines else ""
            raise SetupFailed(
                f"step '{step.name}' failed (exit {proc.returncode}){said}; {step.needs}"
            )
        if step.needs == ELAN_NEEDS and _tool("elan") is None:
            raise SetupFailed(f"step '{step.name}' ended but elan is not there; {ELAN_NEEDS}")
