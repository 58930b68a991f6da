"""Judging Lean code: hygiene first (nothing hostile is ever run), then a backend, then a verdict.

Modes: `statement` (autoformalized statement: one theorem, `sorry` as its only proof, standard
axioms plus `sorryAx`), `proof` (a complete proof: no errors, no `sorry`, standard axioms only),
`plain` (any file: no errors).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Iterable
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel

from math2.lean.backends import LeanBackend, RawOutcome
from math2.lean.commands import split_code
from math2.lean.compiled import (
    PREAMBLE_LINES,
    STANDARD_AXIOMS,
    axiom_violations,
    axioms_subject,
    parse_axioms,
    prepare,
)
from math2.lean.diagnostics import Diagnostic, Kind, diagnostics
from math2.lean.hygiene import (
    Strictness,
    Violation,
    check_statement,
    split_header,
)
from math2.lean.identity import LeanIdentity
from math2.lean.protocol import CommandResponse, Pos, ReplError


class Mode(StrEnum):
    """What a check must show."""

    STATEMENT = "statement"
    PROOF = "proof"
    PLAIN = "plain"


class Status(StrEnum):
    """The outcome of one check."""

    OK = "ok"  # compiles, no sorry
    SORRY = "sorry"  # compiles, sorry only
    ERROR = "error"  # Lean reported errors
    REJECTED = "rejected"  # hygiene refused it before any compile
    TIMEOUT = "timeout"
    CRASH = "crash"
    REPL_ERROR = "repl_error"
    HEADER_ERROR = "header_error"
    BACKEND_ERROR = "backend_error"


class CheckItem(BaseModel):
    """One thing to check."""

    id: str
    code: str
    name: str | None = None
    mode: Mode = Mode.STATEMENT


class CheckResult(BaseModel):
    """The verdict on one item, with everything that led to it."""

    id: str
    status: Status
    passed: bool
    reason: str
    diagnostics: list[Diagnostic] = []
    axioms: list[str] | None = None
    violations: list[Violation] = []
    time_s: float = 0.0
    cached: bool = False
    backend: str = ""
    # The Lean that produced the verdict, as it reported itself (empty: nothing was compiled).
    compiled_by: str = ""


# Outcomes that depend only on the code (and the Lean that ran it), so they may be cached.
_CACHEABLE = {Status.OK, Status.SORRY, Status.ERROR, Status.REPL_ERROR}


def cache_key(identity: LeanIdentity, header: str, code: str) -> str:
    """The cache key of a compile: the Lean as it reported itself, the header and the code."""
    h = hashlib.sha256()
    for part in (identity.cache_part(), header, code):
        h.update(part.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


class ResultCacheProtocol(Protocol):
    """What the checker needs of a cache (math2.lean.cache.ResultCache is the real one)."""

    def get(self, key: str) -> CheckResult | None:
        """A cached result, or None."""
        ...

    def put(self, key: str, result: CheckResult, identity: LeanIdentity) -> None:
        """Remember a result (with the Lean that produced it)."""
        ...


class LeanChecker:
    """Hygiene, cache, backend, verdict."""

    def __init__(
        self,
        backend: LeanBackend,
        *,
        cache: ResultCacheProtocol | None = None,
        header: str = "import Mathlib",
        timeout_s: float = 60.0,
        allowed_imports: frozenset[str] | None = None,
    ):
        self.backend = backend
        self.cache = cache
        self.header = header
        self.timeout_s = timeout_s
        self.allowed_imports = allowed_imports
        self.identity: LeanIdentity | None = None
        self._identity_lock: asyncio.Lock | None = None

    async def ensure_identity(self) -> LeanIdentity:
        """Ask the backend which Lean it is (once); every verdict and cache key names it."""
        if self.identity is not None:
            return self.identity
        if self._identity_lock is None:
            self._identity_lock = asyncio.Lock()
        async with self._identity_lock:
            if self.identity is None:
                self.identity = await self.backend.identity(self.header)
        return self.identity

    def _compiled(self, item: CheckItem, body: str) -> tuple[str, str | None, list[Violation]]:
        """(text to compile, the theorem's full name, hygiene violations).

        Every mode applies the rules against code that runs while elaborating; PLAIN (only
        ever chosen by the caller, never by the data) relaxes the one-theorem and `sorry` rules.
        """
        header, _ = split_header(item.code)
        strict = {
            Mode.STATEMENT: Strictness.STATEMENT,
            Mode.PROOF: Strictness.PROOF,
            Mode.PLAIN: Strictness.RELAXED,
        }[item.mode]
        report = check_statement(
            body,
            name=item.name,
            header=header,
            allowed_imports=self.allowed_imports,
            strictness=strict,
            line_offset=split_code(item.code).body_line - 1,  # lines of the whole item
        )
        if not report.ok:
            return "", report.full_name, report.violations
        name = report.full_name
        axioms = f"\n#print axioms {name}\n" if name and item.mode is not Mode.PLAIN else ""
        return prepare(body) + axioms, name, []

    async def check(self, item: CheckItem) -> CheckResult:
        """Check one item; hostile or malformed code is rejected without running anything."""
        header, body = split_header(item.code)
        compiled, name, violations = self._compiled(item, body)
        if violations:
            return CheckResult(
                id=item.id,
                status=Status.REJECTED,
                passed=False,
                reason="; ".join(
                    f"{v.rule} ({v.where()}): {v.detail}" if v.line else f"{v.rule}: {v.detail}"
                    for v in violations
                ),
                violations=violations,
                backend=self.backend.name,
            )
        identity = await self.ensure_identity()
        # An identity the backend did not report in full never keys the cache.
        cache = self.cache if identity.complete else None
        key = cache_key(identity, header, compiled + item.mode) if cache is not None else ""
        hit = await asyncio.to_thread(cache.get, key) if cache is not None else None
        if hit is not None:
            return hit.model_copy(update={"id": item.id, "cached": True})
        raw = await self.backend.run(header, compiled, self.timeout_s)
        result = self._verdict(item, name, raw)
        result.compiled_by = identity.label()
        if cache is not None and result.status in _CACHEABLE:
            await asyncio.to_thread(cache.put, key, result, identity)  # stored before it is used
        return result

    async def check_many(
        self, items: Iterable[CheckItem], concurrency: int = 8
    ) -> AsyncIterator[CheckResult]:
        """Check many items with bounded concurrency; results come as they finish."""
        queue: asyncio.Queue[CheckResult] = asyncio.Queue()
        sem = asyncio.Semaphore(concurrency)

        async def one(it: CheckItem) -> None:
            async with sem:
                await queue.put(await self.check(it))

        tasks: list[asyncio.Task] = []
        pending = 0
        for it in items:
            # Start at most `concurrency` tasks ahead of what has been consumed (back-pressure).
            while pending >= concurrency:
                yield await queue.get()
                pending -= 1
            tasks.append(asyncio.create_task(one(it)))
            pending += 1
        while pending:
            yield await queue.get()
            pending -= 1
        await asyncio.gather(*tasks)

    def _verdict(self, item: CheckItem, name: str | None, raw: RawOutcome) -> CheckResult:
        base = dict(id=item.id, time_s=raw.time_s, backend=self.backend.name)
        if raw.failure is not None:
            status = {
                "timeout": Status.TIMEOUT,
                "crash": Status.CRASH,
                "header": Status.HEADER_ERROR,
            }.get(raw.failure, Status.BACKEND_ERROR)
            return CheckResult(status=status, passed=False, reason=raw.detail, **base)
        resp = raw.response
        assert resp is not None
        diags = diagnostics(resp)
        if isinstance(resp, ReplError):
            return CheckResult(
                status=Status.REPL_ERROR,
                passed=False,
                reason=resp.message,
                diagnostics=diags,
                **base,
            )
        offset = raw.line_offset + (PREAMBLE_LINES if item.mode is not Mode.PLAIN else 0)
        axioms: set[str] | None = None
        subject: str | None = None
        kept: list[Diagnostic] = []
        for d in diags:
            found = parse_axioms(d.message) if d.kind is Kind.OUTPUT else None
            if found is not None:
                axioms, subject = found, axioms_subject(d.message)
                continue
            kept.append(_shift(d, offset))
        errs = [d for d in kept if d.is_error]
        sorry = any(d.kind is Kind.SORRY for d in kept)
        if isinstance(resp, CommandResponse) and resp.sorries:
            sorry = True
        status = Status.ERROR if errs else Status.SORRY if sorry else Status.OK
        reason = "; ".join(f"{d.kind.value}: {d.message.splitlines()[0]}" for d in errs[:3])
        passed = not errs
        extra: list[Violation] = []
        if item.mode is Mode.STATEMENT and not errs:
            if axioms is None:
                extra.append(
                    Violation(rule="axioms", line=None, detail=f"no `#print axioms {name}` answer")
                )
            else:
                extra += axiom_violations(axioms)
                if name and subject != name:
                    extra.append(_not_declared(name, subject))
            passed = not extra
        elif item.mode is Mode.PROOF and not errs:
            if sorry:
                passed, reason = False, "the proof uses sorry"
            elif axioms is not None and (bad := sorted(axioms - STANDARD_AXIOMS)):
                passed, reason = False, f"depends on {', '.join(bad)}"
            elif axioms is not None and name and subject != name:
                extra.append(_not_declared(name, subject))
                passed = False
        if extra:
            reason = "; ".join(v.detail for v in extra)
        return CheckResult(
            status=status,
            passed=passed,
            reason=reason or status.value,
            diagnostics=kept,
            axioms=sorted(axioms) if axioms is not None else None,
            violations=extra,
            **base,
        )


def _not_declared(name: str, subject: str | None) -> Violation:
    """The compiled environment did not answer for the expected theorem."""
    return Violation(
        rule="target",
        line=None,
        detail=f"the compiled environment answers for {subject!r}, not the expected {name!r}",
    )


def _shift(d: Diagnostic, offset: int) -> Diagnostic:
    if not offset or d.pos is None:
        return d
    pos = Pos(line=d.pos.line - offset, column=d.pos.column)
    end = Pos(line=d.end_pos.line - offset, column=d.end_pos.column) if d.end_pos else None
    return d.model_copy(update={"pos": pos, "end_pos": end})
