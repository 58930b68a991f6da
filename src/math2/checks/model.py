"""Checks that call a model or Lean, always through `math2.runs.ItemContext` (cached, recorded).

- `compile`: statement hygiene, then the Lean backend (`math2.lean`), on the pair's formal side
  with its header; pass when it compiles (with `sorry` only).
- `consistency`: MathForm's judge (`formalize/judge`, the six defect kinds, each with the
  clause it concerns); option `judge` names the model. Several judges run side by side as
  separate `consistency` checks, told apart by their checker.
- `backtranslation`: Herald's check: a model (`translator`) writes the formal statement back in
  natural language without seeing the text (`checks/backtranslate`), and a second call (`nli`)
  compares that with the original text (`checks/nli`); pass when they are equivalent.

A reply that cannot be read after the bounded retries of `math2.llm.structured` is verdict
`error` with the reason, never a pass. Clients and the Lean checker are the run's
`math2.services.RoleServices` (`client(model)`, `checker`, `header`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from math2.checks.base import Check, CheckEnv, Outcome, Pair, register
from math2.judging import judge_in_run
from math2.lean import CheckItem, Mode, Status
from math2.llm import load_template
from math2.store.work import Verdict

__all__ = ["BackTranslation", "Compile", "Consistency", "NLIVerdict"]


class NLIVerdict(BaseModel):
    """The NLI comparison of the text and the back-translation."""

    equivalent: bool
    differences: list[str] = Field(default_factory=list)


class _ModelCheck(Check):
    needs_context = True

    def _ctx(self, env: CheckEnv):
        if env.ctx is None:
            raise RuntimeError(f"check {self.name} needs a run context (math2.runs)")
        return env.ctx

    def _client(self, env: CheckEnv, model: str):
        client = env.client(model)
        if client is None:
            raise RuntimeError(f"check {self.name}: no client for model {model!r}")
        return client

    def stage(self, part: str = "") -> str:
        return f"check:{self.label}:{self.checker}" + (f":{part}" if part else "")


def _lean_code(pair: Pair) -> str:
    body = pair.formal.strip()
    return (pair.header.strip() + "\n\n" + body) if pair.header.strip() else body


@register("compile")
class Compile(_ModelCheck):
    @property
    def checker(self) -> str:
        return "lean"

    async def run(self, pair: Pair, env: CheckEnv) -> Outcome:
        ctx = self._ctx(env)
        checker = env.services.checker if env.services is not None else None
        if checker is None:
            raise RuntimeError("check compile: no Lean checker")
        code = _lean_code(pair)
        if "import " not in code:
            code = env.services.header + "\n\n" + code
        result, aid = await ctx.lean(
            checker,
            CheckItem(id=f"{pair.id}/compile", code=code, mode=Mode.STATEMENT),
            stage=self.stage(),
        )
        evidence = {"status": result.status.value, "reason": result.reason}
        if result.compiled_by:  # the Lean that produced the verdict (a double says so)
            evidence["compiled_by"] = result.compiled_by
        if result.diagnostics:
            evidence["diagnostics"] = [d.model_dump(mode="json") for d in result.diagnostics[:5]]
        if result.passed:
            verdict = Verdict.PASS
        elif result.status in {Status.ERROR, Status.REJECTED, Status.HEADER_ERROR}:
            verdict = Verdict.FAIL  # the code is at fault
        else:
            verdict = Verdict.ERROR  # timeout, crash, backend down: undecided
        return self.outcome(verdict, evidence=evidence, attempt_id=aid)


@register("consistency")
class Consistency(_ModelCheck):
    @property
    def checker(self) -> str:
        return str(self.options["judge"])

    async def run(self, pair: Pair, env: CheckEnv) -> Outcome:
        ctx = self._ctx(env)
        client = self._client(env, self.checker)
        out, aid = await judge_in_run(
            ctx,
            client,
            pair.informal,
            pair.formal,
            stage=self.stage(),
            max_tokens=int(self.options.get("max_tokens", 1024)),
        )
        if not out.ok or out.value is None:
            return self.outcome(Verdict.ERROR, evidence={"reason": out.error}, attempt_id=aid)
        v = out.value
        evidence = {
            "consistent": v.consistent,
            "defects": [d.model_dump(mode="json") for d in v.defects],
        }
        verdict = Verdict.PASS if v.passed() else Verdict.FAIL
        return self.outcome(verdict, evidence=evidence, attempt_id=aid)


@register("backtranslation")
class BackTranslation(_ModelCheck):
    @property
    def checker(self) -> str:
        return f"{self.options['translator']}+{self.options.get('nli', self.options['translator'])}"

    async def run(self, pair: Pair, env: CheckEnv) -> Outcome:
        ctx = self._ctx(env)
        translator = str(self.options["translator"])
        nli = str(self.options.get("nli", translator))
        reply, back_aid = await ctx.chat(
            self._client(env, translator),
            load_template("checks/backtranslate"),
            {"lean": pair.formal},
            stage=self.stage("back"),
            temperature=0.0,
            max_tokens=int(self.options.get("max_tokens", 512)),
        )
        back = reply.content.strip()
        if not back:
            return self.outcome(
                Verdict.ERROR,
                evidence={"reason": "the back-translation is empty"},
                attempt_id=back_aid,
            )
        out, aid = await ctx.structured(
            self._client(env, nli),
            load_template("checks/nli"),
            {"original": pair.informal, "back": back},
            NLIVerdict,
            stage=self.stage("nli"),
            temperature=0.0,
            max_tokens=int(self.options.get("max_tokens", 512)),
        )
        evidence: dict[str, Any] = {"back_translation": back, "back_attempt_id": back_aid}
        if not out.ok or out.value is None:
            evidence["reason"] = out.error
            return self.outcome(Verdict.ERROR, evidence=evidence, attempt_id=aid)
        evidence["differences"] = out.value.differences
        # equivalent only with no difference listed (as the judge: a hedge is not a pass)
        verdict = (
            Verdict.PASS if out.value.equivalent and not out.value.differences else Verdict.FAIL
        )
        return self.outcome(verdict, evidence=evidence, attempt_id=aid)
