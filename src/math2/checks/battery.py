"""A battery: a configured list of checks, run on each pair, results stored per pair.

    battery = Battery.from_config({"checks": [
        {"check": "lint.trivial_goal"},
        {"check": "consistency", "options": {"judge": "qwq-32b"}},
        {"check": "consistency", "options": {"judge": "other-judge"}},   # side by side
        {"check": "backtranslation", "options": {"translator": "m1", "nli": "m2"}},
        {"check": "copy", "options": {"index": ".math2/ngrams/openwebmath"}},
    ]})
    outcomes = await battery.run(pair, CheckEnv(ctx=ctx))

A check that raises is recorded as verdict `error` with the exception, never as a pass — except
`math2.llm.EndpointDown` (a model endpoint that cannot be reached any more), which says nothing
about the pair: it propagates, so the run stops early and the pair is checked on resume.
`overall(outcomes)` is pass only when every check that applied passed; any error makes it
error, any fail (without error) fail.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.checks.base import Check, CheckEnv, Outcome, Pair, make_check
from math2.checks.lints import LINTS
from math2.errors import InputError
from math2.llm.types import EndpointDown
from math2.store.work import CheckResultRow, Verdict

__all__ = [
    "Battery",
    "BatteryConfig",
    "CheckSpec",
    "default_config",
    "load_config",
    "overall",
    "record_outcomes",
    "stored_outcomes",
]


class CheckSpec(BaseModel):
    """One check of a battery: its registered name and its options."""

    check: str
    options: dict[str, Any] = Field(default_factory=dict)


class BatteryConfig(BaseModel):
    checks: list[CheckSpec]


def default_config(
    *,
    judges: list[str] = (),  # type: ignore[assignment]
    translator: str | None = None,
    nli: str | None = None,
    compile: bool = False,
    references: list[str] = (),  # type: ignore[assignment]
    max_tokens: int | None = None,
) -> BatteryConfig:
    """The lints, then whatever models and references are given."""
    specs = [CheckSpec(check=name) for name in LINTS]
    if compile:
        specs.append(CheckSpec(check="compile"))
    limit = {"max_tokens": max_tokens} if max_tokens else {}
    specs += [CheckSpec(check="consistency", options={"judge": j, **limit}) for j in judges]
    if translator:
        specs.append(
            CheckSpec(
                check="backtranslation",
                options={"translator": translator, "nli": nli or translator, **limit},
            )
        )
    if references:
        specs.append(CheckSpec(check="copy", options={"index": list(references)}))
    return BatteryConfig(checks=specs)


def load_config(path: Path) -> BatteryConfig:
    """A battery from a YAML or JSON file (`checks: [{check: …, options: {…}}]`)."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(path, None, f"cannot read the battery: {e}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise InputError(path, mark.line + 1 if mark else None, f"not YAML: {e}") from None
    try:
        return BatteryConfig.model_validate(data)
    except ValidationError as e:
        raise InputError(path, None, f"not a battery: {e.errors()[0]['msg']}") from None


class Battery:
    def __init__(self, checks: list[Check]):
        labels = [(c.label, c.checker) for c in checks]
        if len(set(labels)) != len(labels):
            raise ValueError("a battery holds the same check with the same checker twice")
        self.checks = checks

    @classmethod
    def from_config(cls, config: BatteryConfig | dict[str, Any]) -> Battery:
        if isinstance(config, dict):
            config = BatteryConfig.model_validate(config)
        return cls([make_check(s.check, **s.options) for s in config.checks])

    @property
    def models(self) -> set[str]:
        """Every model a check of the battery names (each must be registered)."""
        out: set[str] = set()
        for c in self.checks:
            for key in ("judge", "translator", "nli"):
                if key in c.options:
                    out.add(str(c.options[key]))
        return out

    @property
    def needs_lean(self) -> bool:
        return any(c.name == "compile" for c in self.checks)

    async def run(self, pair: Pair, env: CheckEnv) -> list[Outcome]:
        outcomes = []
        for check in self.checks:
            if check.needs_context and env.ctx is None:
                outcomes.append(
                    check.outcome(Verdict.SKIP, evidence={"reason": "no model or Lean context"})
                )
                continue
            try:
                outcomes.append(await check.run(pair, env))
            except EndpointDown:
                raise  # not this pair's verdict: the run stops, the pair waits for a resume
            except Exception as e:  # a broken check decides nothing: error, never pass
                outcomes.append(
                    check.outcome(Verdict.ERROR, evidence={"reason": f"{type(e).__name__}: {e}"})
                )
        return outcomes


def overall(outcomes: list[Outcome]) -> Verdict:
    """error > fail > pass over the checks that applied; a lint's `fail` that only warns (its
    precision on the dev set is under the bar) does not fail the pair."""
    applied = [
        Verdict.PASS if o.verdict is Verdict.FAIL and o.evidence.get("warn") else o.verdict
        for o in outcomes
        if o.verdict is not Verdict.SKIP
    ]
    if not applied:
        return Verdict.SKIP
    if Verdict.ERROR in applied:
        return Verdict.ERROR
    if Verdict.FAIL in applied:
        return Verdict.FAIL
    return Verdict.PASS


def record_outcomes(
    s: Session,
    pair: Pair,
    outcomes: list[Outcome],
    *,
    run_id: int | None = None,
    agent_text_id: int | None = None,
) -> None:
    """Store each outcome in `check_results` (one row per pair, check and checker; a rerun
    replaces the verdict it had)."""
    key = pair.key
    for o in outcomes:
        row = s.scalar(
            select(CheckResultRow).where(
                CheckResultRow.pair_key == key,
                CheckResultRow.check == o.check,
                CheckResultRow.checker == o.checker,
            )
        )
        if row is None:
            row = CheckResultRow(pair_key=key, check=o.check, checker=o.checker)
            s.add(row)
        row.verdict = o.verdict.value
        row.score = o.score
        row.evidence = o.evidence
        row.run_id = run_id
        row.attempt_id = o.attempt_id
        row.agent_text_id = agent_text_id
    s.flush()


def stored_outcomes(s: Session, pair_key: str) -> list[Outcome]:
    """The stored outcomes of one pair."""
    rows = s.scalars(
        select(CheckResultRow)
        .where(CheckResultRow.pair_key == pair_key)
        .order_by(CheckResultRow.id)
    )
    return [
        Outcome(
            check=r.check,
            checker=r.checker,
            verdict=Verdict(r.verdict),
            score=r.score,
            evidence=r.evidence or {},
            attempt_id=r.attempt_id,
        )
        for r in rows
    ]
