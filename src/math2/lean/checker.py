"""Judging Lean code: hygiene first (nothing hostile is ever run), then a backend, then a verdict.

Modes: `statement` (autoformalized statement: one theorem, `sorry` as its only proof, standard
axioms plus `sorryAx`), `proof` (a complete proof: no errors, no `sorry`, standard axioms only),
`plain` (any file: no errors).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel

from math2.lean.backends import LeanBackend, RawOutcome
from math2.lean.commands import SplitCode, split_code
from math2.lean.compiled import (
    PREAMBLE_LINES,
    STANDARD_AXIOMS,
    parse_axioms,
    prepare,
)
from math2.lean.diagnostics import Diagnostic, Kind, diagnostics
from math2.lean.hygiene import check_statement
from math2.lean.identity import LeanIdentity
from math2.lean.library import LibraryTables
from math2.lean.limits import DEFAULT_LIMITS, Limits, precheck
from math2.lean.names import NAME, axioms_subject, same, source
from math2.lean.names import parts as name_parts
from math2.lean.protocol import CommandResponse, Pos, ReplError
from math2.lean.rules import COMPILER_AXIOMS, FORBIDDEN_ROOTS
from math2.lean.targets import Strictness
from math2.lean.terms import Violation
from math2.lean.trust import ContextTrust


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
    # Who wrote the context: a model (the strict default) or people (a benchmark's context).
    trust: ContextTrust = ContextTrust.GENERATED
    parts: list[str] = []  # the targets of a multi-part item, each its own theorem
    # Constants whose type the build should report (`#check @NAME` after the body): a binding's
    # type hash comes from the pinned build (K6.4). Names only; anything else is refused.
    show_types: list[str] = []


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
    # What a benchmark's context does that may change the statement's meaning (not refusals).
    flags: list[Violation] = []
    backend: str = ""
    # The Lean that produced the verdict, as it reported itself (empty: nothing was compiled).
    compiled_by: str = ""
    # The types the build reported for `CheckItem.show_types`, as Lean pretty-printed them.
    types: dict[str, str] = {}


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
        allow_compiled: bool = False,
        limits: Limits = DEFAULT_LIMITS,
        known_name: LibraryTables | None = None,
    ):
        self.backend = backend
        # Whether the pinned library declares a name (the store's Mathlib names): a benchmark's
        # context that declares one is flagged `shadowing`.
        self.known_name = known_name
        self.cache = cache
        self.header = header
        self.timeout_s = timeout_s
        self.allowed_imports = allowed_imports
        # Proofs that trust compiled code (`native_decide`, `bv_decide`, Lean.ofReduceBool):
        # refused unless the caller says so here; nothing in an item can.
        self.allow_compiled = allow_compiled
        self.limits = limits
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
                reported = await self.backend.identity(self.header)
                # the library's tables judge as much as Lean does: they key the cache too
                self.identity = reported.with_tables(self.known_name)
        return self.identity

    def _compiled(self, item: CheckItem, code: SplitCode) -> _Plan:
        """What to compile for an item, or the hygiene violations that refuse it.

        Every mode applies the rules against code that runs while elaborating; PLAIN (only
        ever chosen by the caller, never by the data) relaxes the one-theorem and `sorry` rules.
        """
        caps = precheck(item.code, self.limits)  # the whole item, before anything is read
        if caps:
            return _Plan(violations=caps)
        if bad := [n for n in item.show_types if not _constant(n)]:
            refusal = Violation(rule="show_types", line=None, detail=_bad_names(bad))
            return _Plan(violations=[refusal])
        header, body = code.header, code.body
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
            line_offset=code.body_line - 1,  # lines of the whole item
            trust=item.trust,
            parts=item.parts,
            allow_compiled=self.allow_compiled,
            limits=self.limits,
            known_name=self.known_name,
        )
        if not report.ok:
            return _Plan(name=report.full_name, violations=report.violations, flags=report.flags)
        name = report.full_name
        for offset, length, value in sorted(report.clamps, reverse=True):
            body = body[:offset] + value + body[offset + length :]
        plan = _Plan(
            name=name,
            flags=report.flags,
            targets=report.targets,
            anonymous_target=report.anonymous_target,
        )
        if item.mode is Mode.PLAIN or not (name or report.anonymous_target):
            plan.text = prepare(body)
            return plan
        # The axioms of the whole environment the item builds, not only of the target: a
        # context declaration may trust compiled code that the target never mentions.
        names = [*[d for d in report.declared if d not in report.targets], *report.targets]
        axioms = "".join(f"\n#print axioms {source(n)}" for n in names) + "\n"
        types = "".join(f"#check @{source(n)}\n" for n in item.show_types)
        plan.text = prepare(body) + axioms + types
        return plan

    async def check(self, item: CheckItem) -> CheckResult:
        """Check one item; hostile or malformed code is rejected without running anything."""
        code = split_code(item.code)  # the item is split once: header, body, where the body starts
        header = code.header
        plan = self._compiled(item, code)
        compiled, violations, flags = plan.text, plan.violations, plan.flags
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
        # The verdict also depends on which axioms the caller accepts.
        judged = compiled + item.mode + (" +compiled" if self.allow_compiled else "")
        key = cache_key(identity, header, judged) if cache is not None else ""
        hit = await asyncio.to_thread(cache.get, key) if cache is not None else None
        if hit is not None:
            return hit.model_copy(update={"id": item.id, "cached": True, "flags": flags})
        raw = await self.backend.run(header, compiled, self.timeout_s)
        result = self._verdict(item, plan, raw)
        result.compiled_by = identity.label()
        if cache is not None and result.status in _CACHEABLE:
            await asyncio.to_thread(cache.put, key, result, identity)  # stored before it is used
        return result.model_copy(update={"flags": flags}) if flags else result

    @property
    def _standard(self) -> frozenset[str]:
        return STANDARD_AXIOMS | (COMPILER_AXIOMS if self.allow_compiled else frozenset())

    def _environment_axioms(
        self, answers: dict[str, set[str]], targets: list[str], proof: bool = False
    ) -> list[Violation]:
        """Axioms beyond the allowed ones in any declaration of the item (`sorryAx` only in the
        targets of a statement: every part of a multi-part item may end in `sorry`)."""
        out = []
        for subject, found in answers.items():
            target = any(same(subject, t) for t in targets)
            allowed = self._standard | ({"sorryAx"} if target and not proof else set())
            if bad := sorted(found - allowed):
                out.append(
                    Violation(rule="axioms", line=None, detail=_axiom_detail(subject, bad, target))
                )
        return out

    async def check_many(
        self, items: Iterable[CheckItem], concurrency: int = 8
    ) -> AsyncIterator[CheckResult]:
        """Check many items with bounded concurrency; results come as they finish. A check that
        raises stops the iteration with its exception (the other checks are cancelled): the
        caller is never left waiting for a result that will not come."""
        queue: asyncio.Queue[CheckResult | BaseException] = asyncio.Queue()
        sem = asyncio.Semaphore(concurrency)

        async def one(it: CheckItem) -> None:
            async with sem:
                try:
                    res: CheckResult | BaseException = await self.check(it)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # handed to the consumer, which raises it
                    res = exc
                await queue.put(res)

        async def take() -> CheckResult:
            got = await queue.get()
            if isinstance(got, BaseException):
                raise got
            return got

        tasks: list[asyncio.Task[None]] = []
        pending = 0
        try:
            for it in items:
                # Start at most `concurrency` tasks ahead of what has been consumed.
                while pending >= concurrency:
                    yield await take()
                    pending -= 1
                tasks.append(asyncio.create_task(one(it)))
                pending += 1
            while pending:
                yield await take()
                pending -= 1
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def _verdict(self, item: CheckItem, plan: _Plan, raw: RawOutcome) -> CheckResult:
        name = plan.name
        targets = plan.targets or ([name] if name else [])
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
        answers: dict[str, set[str]] = {}  # every `#print axioms` answer, by its constant
        kept: list[Diagnostic] = []
        types: dict[str, str] = {}
        for d in diags:
            found = parse_axioms(d.message) if d.kind is Kind.OUTPUT else None
            if found is not None:
                axioms, subject = found, axioms_subject(d.message)
                answers[subject or ""] = found
                continue
            shown = _CHECK_ANSWER.match(d.message) if d.kind is Kind.OUTPUT else None
            asked = shown is not None and next(
                (n for n in item.show_types if same(n, shown.group("name"))), None
            )
            if shown is not None and asked:
                types[asked] = shown.group("type").strip()
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
            if axioms is None and not (plan.anonymous_target and not plan.targets):
                extra.append(
                    Violation(rule="axioms", line=None, detail=f"no `#print axioms {name}` answer")
                )
            else:
                extra += self._environment_axioms(answers, targets)
                if name and not same(subject, name):
                    extra.append(_not_declared(name, subject))
                for part in targets:
                    if not same(part, name) and not any(same(a, part) for a in answers):
                        extra.append(_not_declared(part, None))
            passed = not extra
        elif item.mode is Mode.PROOF and not errs:
            if sorry:
                passed, reason = False, "the proof uses sorry"
            elif axioms is not None and (bad := self._environment_axioms(answers, targets, True)):
                passed, reason = False, "; ".join(b.detail for b in bad)
            elif axioms is not None and (beyond := sorted(axioms - self._standard)):
                passed, reason = False, f"depends on {', '.join(beyond)}"
            elif axioms is not None and name and not same(subject, name):
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
            types=types,
            **base,
        )


@dataclass
class _Plan:
    """What the checker compiles for an item (`text`), or why it refuses it (`violations`)."""

    text: str = ""
    name: str | None = None  # the (last) target's full name, as Lean prints it
    violations: list[Violation] = field(default_factory=list)
    flags: list[Violation] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)  # every named target's full name
    anonymous_target: bool = False  # an anonymous instance: no name to ask its axioms of


def _constant(name: str) -> bool:
    """Whether `show_types` may ask for a name: one constant (components written bare or in
    «…», never holding a quote, a newline or `»`), under no root that reaches IO or Lean."""
    if not name or any(c in name for c in '\n\r"`$@#;') or name.count("«") != name.count("»"):
        return False
    parts = name_parts(name)
    if any(not p or "»" in p or "«" in p for p in parts):
        return False
    return not FORBIDDEN_ROOTS.match(".".join(p for p in parts if p != "_root_"))


_CHECK_ANSWER = re.compile(r"^@?(?P<name>" + NAME + r") :\s(?P<type>.*)$", re.S)


def _bad_names(names: list[str]) -> str:
    return f"not a constant name for `#check`: {', '.join(repr(n[:80]) for n in names)}"


def _axiom_detail(subject: str, extra: list[str], target: bool) -> str:
    who = "" if target else f"the context declaration {subject} "
    return f"{who}depends on {', '.join(extra)}"


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
