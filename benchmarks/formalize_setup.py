"""The formalize benchmarks' one setup (`formalize_throughput.py`, `scale_ray.py --job
formalize`): the fake model server's script — a generation that writes a theorem named after the
item and a judgement that accepts it, so every item passes in round 1 —, the settings that point
the formalize role at it and at the fake REPL, the input file, the model row and the options."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from math2.config import LeanSettings, LLMSettings, Settings
from math2.llm import add_model
from math2.llm.testing import Rule, Script
from math2.roles.formalize import FormalizeOptions
from math2.store import Store

GENERATOR = "translate mathematical statements"
JUDGE = "check whether a Lean 4 statement"


def model_script(latency_s: float) -> Script:
    """Every call answers after `latency_s`: the generation with a theorem named after the item,
    the judgement consistent."""
    code = r"```lean\ntheorem t_\g<id> (n : ℕ) : n + 0 = n := by sorry\n```"
    return Script(
        latency_s=latency_s,
        models=["gen"],
        rules=[
            Rule(system=GENERATOR, user=r"item (?P<id>\w+)", reply=code, expand=True),
            Rule(system=JUDGE, json={"consistent": True, "defects": []}),
        ],
    )


def settings(
    db_url: str,
    base_url: str,
    concurrency: int,
    workers: int,
    check_delay: float,
    project_dir: Path,
    header_delay: float | None = None,
) -> Settings:
    """The fake model server with `concurrency` slots, `workers` fake REPLs taking `check_delay`
    s a check (and `header_delay` s a header when given)."""
    repl = [sys.executable, "-m", "math2.lean.testing.fake_repl"]
    if header_delay is not None:
        repl += ["--header-delay", str(header_delay)]
    repl += ["--check-delay", str(check_delay)]
    return Settings(
        db_url=db_url,
        llm=LLMSettings(base_url=base_url, concurrency=concurrency),
        lean=LeanSettings(project_dir=project_dir, repl_command=repl, workers=workers),
    )


def write_items(path: Path, n: int, tag: str) -> None:
    """`n` statements the script answers, with ids `tag0`, `tag1`, …"""
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"{tag}{i}", "statement": f"item {tag}{i}: n + 0 = n."}))
            fh.write("\n")


def add_fake_model(store: Store) -> None:
    """The model row the runs name (`gen`, served by the fake server)."""
    with store.session() as s:
        add_model(s, "gen", provider="fake")


def options() -> FormalizeOptions:
    """Generator and judge the fake model, retrieval off."""
    return FormalizeOptions(model="gen", judge="gen", retrieval=False, max_rounds=3)


@dataclass
class FakeSetup:
    """A fake model server's URL and slots, and a folder for inputs (and the REPL's project)."""

    base_url: str
    concurrency: int
    folder: Path

    def settings(
        self, db_url: str, workers: int, check_delay: float, header_delay: float | None = None
    ) -> Settings:
        return settings(
            db_url, self.base_url, self.concurrency, workers, check_delay, self.folder, header_delay
        )

    def items(self, n: int, tag: str | None = None) -> Path:
        """An input of `n` statements in the folder (a fresh tag unless given)."""
        tag = tag or f"i{time.monotonic_ns()}"
        path = self.folder / f"{tag}.jsonl"
        write_items(path, n, tag)
        return path
