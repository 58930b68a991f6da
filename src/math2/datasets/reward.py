"""The RL reward r(x, y) = 1 iff compile(y) ∧ consistent(x, y), batched and cached.

x is the informal statement, y the policy's answer (its last ```lean block is taken, as the
formalize role does). compile(y) is `math2.lean` in statement mode (hygiene first: hostile code
is refused and scores 0 without reaching Lean); consistent(x, y) is the formalize role's judge
template (six defect kinds) asked of a registered judge model. An unreadable verdict scores 0.
Three caches: the Lean result cache and the LLM response cache in the store (shared with every
other role, so a rerun repeats nothing), and an in-process memo per (x, y), bounded (LRU,
`memo_size` entries).

A reward holds, per worker process, one event loop (in a daemon thread), one Lean checker (its
worker pool), one store writer (`AsyncStore`) and one HTTP client to the judge, made on first
use and kept for every later call (verl calls the reward once per sample or batch, thousands of
times); a forked worker makes its own on its first call. `close()` releases them.

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
import atexit
import hashlib
import os
import threading
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from cachetools import LRUCache

from math2.config import Settings
from math2.judging import judge, passed
from math2.lean import CheckItem, Mode
from math2.lean.trust import ContextTrust
from math2.roles.formalize import extract_lean
from math2.services import ServiceSpec, build_services, resolve_spec
from math2.store import Store
from math2.store.aio import AsyncStore

__all__ = [
    "FormalizationReward",
    "compute_score",
    "compute_score_batch",
    "configure",
    "reward_func",
]


T = TypeVar("T")

#: The longest informal statement and answer the reward reads (characters); a longer one scores
#: 0 without reaching Lean or the judge (model output is untrusted).
MAX_INFORMAL = 20_000
MAX_ANSWER = 200_000


def _key(x: str, y: str) -> str:
    return hashlib.sha256(f"{len(x)}:{x}{y}".encode()).hexdigest()


class _Services:
    """What one worker process holds for every call: a loop thread, the checker (Lean pool),
    the store writer and the judge's HTTP client."""

    def __init__(self, reward: FormalizationReward) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="math2-reward-loop", daemon=True
        )
        self.thread.start()
        self.astore = AsyncStore(reward.store)
        self.services = build_services(
            reward.settings, reward.spec, store=reward.store, writer=self.astore
        )
        self.checker = self.services.checker
        self.client = self.services.judge

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    async def _aclose(self) -> None:
        await self.services.aclose()
        await self.astore.aclose()

    def close(self) -> None:
        if self.pid == os.getpid() and self.loop.is_running():
            try:
                self.run(self._aclose())
            finally:
                self.loop.call_soon_threadsafe(self.loop.stop)
                self.thread.join(timeout=10)


class FormalizationReward:
    """r(x, y) over batches; see the module docstring."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        judge: str,
        *,
        lean_backend: str | None = None,
        memo_size: int = 100_000,
    ) -> None:
        self.spec = resolve_spec(
            settings,
            store,
            ServiceSpec(judges=(judge,), lean=True, lean_backend=lean_backend),
        )
        self.settings = settings
        self.store = store
        self.judge = judge
        self.lean_backend = lean_backend
        self.memo: LRUCache[str, float] = LRUCache(maxsize=memo_size)
        self.details: LRUCache[str, dict[str, Any]] = LRUCache(maxsize=memo_size)
        self._services: _Services | None = None
        self._lock = threading.Lock()
        atexit.register(self.close)

    def _held(self) -> _Services:
        """This process's services, made on first use (again after a fork)."""
        with self._lock:
            if self._services is None or self._services.pid != os.getpid():
                self._services = _Services(self)
            return self._services

    def close(self) -> None:
        """Release the Lean pool, the store writer and the HTTP client (idempotent)."""
        with self._lock:
            svc, self._services = self._services, None
        if svc is not None:
            svc.close()

    async def _score(self, svc: _Services, pairs: Sequence[tuple[str, str]]) -> list[float]:
        results: dict[str, float] = {}
        todo = {}
        for x, y in pairs:
            k = _key(x, y)
            hit = self.memo.get(k)
            if hit is None:
                todo[k] = (x, y)
            else:
                results[k] = hit
        if todo:
            header = self.settings.lean.header

            async def one(key: str, x: str, y: str) -> None:
                too_long = len(x) > MAX_INFORMAL or len(y) > MAX_ANSWER
                lean, _ = (None, []) if too_long else extract_lean(y)
                info: dict[str, Any] = {"lean": lean, "compiled": False, "consistent": None}
                if too_long:
                    info["refused"] = (
                        f"too long: informal {len(x):,} (limit {MAX_INFORMAL:,}), "
                        f"answer {len(y):,} (limit {MAX_ANSWER:,}) characters"
                    )
                if lean is not None:
                    res = await svc.checker.check(
                        CheckItem(
                            id=key[:16],
                            code=header + "\n\n" + lean,
                            mode=Mode.STATEMENT,
                            trust=ContextTrust.GENERATED,
                        )
                    )
                    info["compiled"] = res.passed
                    info["status"] = res.status.value
                    info["compiled_by"] = res.compiled_by  # the Lean that judged it
                    if not res.passed:
                        info["reason"] = res.reason  # why it scores 0 (a refusal's rule too)
                    if res.passed:
                        info["consistent"] = passed(await judge(svc.client, x, lean))
                self.details[key] = info
                value = float(bool(info["compiled"] and info["consistent"] is True))
                self.memo[key] = value
                results[key] = value

            await asyncio.gather(*(one(k, x, y) for k, (x, y) in todo.items()))
        return [results[_key(x, y)] for x, y in pairs]

    def score_batch(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Rewards for (informal, answer) pairs, in order (1.0 or 0.0)."""
        svc = self._held()
        return svc.run(self._score(svc, pairs))

    async def ascore_batch(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """As `score_batch`, from inside an event loop (the work runs on the reward's loop)."""
        svc = self._held()
        fut = asyncio.run_coroutine_threadsafe(self._score(svc, pairs), svc.loop)
        return await asyncio.wrap_future(fut)


_REWARD: FormalizationReward | None = None


def configure(reward: FormalizationReward | None) -> None:
    """Set (or clear) the reward the trainer-facing functions use (a replaced one is closed)."""
    global _REWARD
    if _REWARD is not None and _REWARD is not reward:
        _REWARD.close()
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
