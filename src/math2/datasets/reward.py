"""The RL reward r(x, y) = 1 iff compile(y) ∧ consistent(x, y), batched and cached.

x is the informal statement, y the policy's answer (its last ```lean block is taken, as the
formalize role does). compile(y) is `math2.lean` in statement mode (hygiene first: hostile code
is refused and scores 0 without reaching Lean); consistent(x, y) is the formalize role's judge
template (six defect kinds) asked of a registered judge model. An unreadable verdict scores 0.
Three caches: the Lean result cache and the LLM response cache in the store (shared with every
other role, so a rerun repeats nothing), and an in-process memo per (x, y).

    reward = FormalizationReward(settings, store, judge="qwq-32b")
    scores = reward.score_batch([(x1, y1), (x2, y2)])          # [1.0, 0.0]

The two trainers' custom-reward signatures are module functions over a reward configured with
`configure(...)` (or from math2's settings and `MATH2_REWARD_JUDGE` on first use):
- verl: `compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw)` with
  `ground_truth` the informal statement; the batch form `compute_score_batch(data_sources,
  solution_strs, ground_truths, extra_infos, **kw)` returns a list.
- OpenRLHF (`--remote_rm_url reward.py`): `reward_func(queries, prompts, labels)` with `labels`
  the informal statements; returns {"rewards", "scores", "extra_logs"} (torch tensors when
  torch is installed, lists otherwise). `queries` hold prompt + response; the response is the
  text after the prompt.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Sequence
from typing import Any

from math2.config import Settings
from math2.lean import CheckItem, Mode, make_checker
from math2.llm import load_template, make_client, require_model, structured
from math2.roles.formalize import JudgeVerdict, extract_lean
from math2.store import Store
from math2.store.aio import AsyncStore

__all__ = [
    "FormalizationReward",
    "compute_score",
    "compute_score_batch",
    "configure",
    "reward_func",
]


def _key(x: str, y: str) -> str:
    return hashlib.sha256(f"{len(x)}:{x}{y}".encode()).hexdigest()


class FormalizationReward:
    """r(x, y) over batches; see the module docstring."""

    def __init__(
        self, settings: Settings, store: Store, judge: str, *, lean_backend: str | None = None
    ) -> None:
        with store.session() as s:
            require_model(s, judge)
        self.settings = settings
        self.store = store
        self.judge = judge
        self.lean_backend = lean_backend
        self.memo: dict[str, float] = {}
        self.details: dict[str, dict[str, Any]] = {}

    async def _score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        todo = {_key(x, y): (x, y) for x, y in pairs if _key(x, y) not in self.memo}
        if todo:
            checker = make_checker(self.settings, self.store, self.lean_backend)
            astore = AsyncStore(self.store)
            client = make_client(self.settings, self.judge, astore)
            judge_t = load_template("formalize/judge")
            header = self.settings.lean.header
            try:

                async def one(key: str, x: str, y: str) -> None:
                    lean, _ = extract_lean(y)
                    info: dict[str, Any] = {"lean": lean, "compiled": False, "consistent": None}
                    if lean is not None:
                        res = await checker.check(
                            CheckItem(id=key[:16], code=header + "\n\n" + lean, mode=Mode.STATEMENT)
                        )
                        info["compiled"] = res.passed
                        info["status"] = res.status.value
                        info["compiled_by"] = res.compiled_by  # the Lean that judged it
                        if res.passed:
                            v = await structured(
                                client,
                                judge_t.render(statement=x, lean=lean),
                                JudgeVerdict,
                                temperature=0.0,
                            )
                            info["consistent"] = v.value.passed() if v.ok else None
                    self.details[key] = info
                    self.memo[key] = float(bool(info["compiled"] and info["consistent"] is True))

                await asyncio.gather(*(one(k, x, y) for k, (x, y) in todo.items()))
            finally:
                await client.aclose()
                await checker.backend.close()
                await astore.aclose()
        return [self.memo[_key(x, y)] for x, y in pairs]

    def score_batch(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Rewards for (informal, answer) pairs, in order (1.0 or 0.0)."""
        return asyncio.run(self._score(pairs))

    async def ascore_batch(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """As `score_batch`, from inside an event loop."""
        return await self._score(pairs)


_REWARD: FormalizationReward | None = None


def configure(reward: FormalizationReward | None) -> None:
    """Set (or clear) the reward the trainer-facing functions use."""
    global _REWARD
    _REWARD = reward


def _reward() -> FormalizationReward:
    global _REWARD
    if _REWARD is None:
        judge = os.environ.get("MATH2_REWARD_JUDGE")
        if not judge:
            raise RuntimeError("set MATH2_REWARD_JUDGE (a registered judge model) or configure()")
        from math2.config import load_settings

        settings = load_settings()
        store = Store(settings.db_url)
        _REWARD = FormalizationReward(settings, store, judge)
    return _REWARD


def compute_score(
    data_source: str, solution_str: str, ground_truth: str, extra_info: Any = None, **kw: Any
) -> float:
    """verl's custom reward: `ground_truth` is the informal statement x."""
    return _reward().score_batch([(ground_truth, solution_str)])[0]


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[str],
    extra_infos: Sequence[Any] | None = None,
    **kw: Any,
) -> list[float]:
    """verl's batched form: one reward per solution."""
    return _reward().score_batch(list(zip(ground_truths, solution_strs, strict=True)))


def reward_func(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[str]) -> dict:
    """OpenRLHF's custom reward: response = query minus its prompt; label = informal x."""
    responses = [
        q[len(p) :] if q.startswith(p) else q for q, p in zip(queries, prompts, strict=True)
    ]
    scores = _reward().score_batch(list(zip(labels, responses, strict=True)))
    try:
        import torch

        t = torch.tensor(scores, dtype=torch.float32)
        return {"rewards": t, "scores": t, "extra_logs": {"formalization_reward": t}}
    except ImportError:
        return {"rewards": scores, "scores": scores, "extra_logs": {"formalization_reward": scores}}
