"""Judging Lean code: hygiene first (nothing hostile is ever run), then a backend, then a verdict.

Modes: `statement` (autoformalized statement: one theorem, `sorry` as its only proof, standard
axioms plus `sorryAx`), `proof` (a complete proof: no errors, no `sorry`, standard axioms only),
`plain` (any file: no errors).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from math2.lean.backends import LeanBackend, RawOutcome
from math2.lean.commands import SplitCode, split_code
from math2.lean.compiled import (
    CHECK_ANSWER,
    PREAMBLE_LINES,
    STANDARD_AXIOMS,
    axiom_detail,
    bad_names,
    not_declared,
    parse_axioms,
    prepare,
    shift,
    show_constant,
)
from math2.lean.diagnostics import Diagnostic, Kind, diagnostics
from math2.lean.elaborated import ELABORATED_RULE, Answer, commands_for, judge, take
from math2.lean.hygiene import check_statement
from math2.lean.identity import LeanIdentity
from math2.lean.library import LibraryTables
from math2.lean.limits import DEFAULT_LIMITS, Limits, precheck
from math2.lean.names import axioms_subject, rooted, same
from math2.lean.outcomes import CheckItem, CheckResult, Mode, Status
from math2.lean.protocol import CommandResponse, ReplError
from math2.lean.rules import COMPILER_AXIOMS
from math2.lean.targets import Strictness
from math2.lean.terms import Violation

# The item and verdict types live in `math2.lean.outcomes`; they are the checker's vocabulary.
__all__ = ["CheckItem", "CheckResult", "LeanChecker", "Mode", "Status", "cache_key"]


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
        if bad := [n for n in item.show_types if not show_constant(n)]:
            refusal = Violation(rule="show_types", line=None, detail=bad_names(bad))
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
            declared=report.declared,
        )
        if item.mode is Mode.PLAIN or not (name or report.anonymous_target):
            plan.text = prepare(body)
            return plan
        # The axioms of the whole environment the item builds, not only of the target: a
        # context declaration may trust compiled code that the target never mentions.
        names = [*[d for d in report.declared if d not in report.targets], *report.targets]
        axioms = "".join(f"\n#print axioms {rooted(n)}" for n in names) + "\n"
        types = "".join(f"#check @{rooted(n)}\n" for n in item.show_types)
        text = prepare(body) + axioms + types
        line = text.count("\n") + 1  # the line the next command starts on
        for target in report.targets:
            for command in commands_for(target):
                plan.asked[line] = target
                text, line = text + command + "\n", line + 1
        plan.text = text
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
        judged += f" {item.trust} {ELABORATED_RULE}"  # the rule's version and level
        key = cache_key(identity, header, judged) if cache is not None else ""
        hit = await asyncio.to_thread(cache.get, key) if cache is not None else None
        if hit is not None:
            flags = flags + [f for f in hit.flags if f.rule == "elaborated"]
            return hit.model_copy(update={"id": item.id, "cached": True, "flags": flags})
        raw = await self.backend.run(header, compiled, self.timeout_s)
        result = self._verdict(item, plan, raw)
        result.compiled_by = identity.label()
        if cache is not None and result.status in _CACHEABLE:
            await asyncio.to_thread(cache.put, key, result, identity)  # stored before it is used
        flags = flags + result.flags  # the elaborated flags come with the verdict
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
                    Violation(rule="axioms", line=None, detail=axiom_detail(subject, bad, target))
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
        answers_of: dict[str, Answer] = {t: Answer() for t in plan.asked.values()}
        for d in diags:
            at = d.pos.line - raw.line_offset if d.pos is not None else None
            if at is not None and at in plan.asked:
                take(answers_of[plan.asked[at]], d)
                continue
            found = parse_axioms(d.message) if d.kind is Kind.OUTPUT else None
            if found is not None:
                axioms, subject = found, axioms_subject(d.message)
                answers[subject or ""] = found
                continue
            shown = CHECK_ANSWER.match(d.message) if d.kind is Kind.OUTPUT else None
            asked = shown is not None and next(
                (n for n in item.show_types if same(n, shown.group("name"))), None
            )
            if shown is not None and asked:
                types[asked] = shown.group("type").strip()
                continue
            kept.append(shift(d, offset))
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
                    extra.append(not_declared(name, subject))
                for part in targets:
                    if not same(part, name) and not any(same(a, part) for a in answers):
                        extra.append(not_declared(part, None))
            passed = not extra
        elif item.mode is Mode.PROOF and not errs:
            if sorry:
                passed, reason = False, "the proof uses sorry"
            elif axioms is not None and (bad := self._environment_axioms(answers, targets, True)):
                passed, reason = False, "; ".join(b.detail for b in bad)
            elif axioms is not None and (beyond := sorted(axioms - self._standard)):
                passed, reason = False, f"depends on {', '.join(beyond)}"
            elif axioms is not None and name and not same(subject, name):
                extra.append(not_declared(name, subject))
                passed = False
        elab_flags: list[Violation] = []
        if item.mode is not Mode.PLAIN and not errs:
            notation = self.identity is not None and self.identity.is_fake
            for target, answer in answers_of.items():
                r = judge(
                    target, answer, declared=plan.declared, trust=item.trust, notation=notation
                )
                extra += r.refusals
                elab_flags += r.flags
            passed = passed and not extra
        if extra:
            reason = "; ".join(v.detail for v in extra)
        return CheckResult(
            flags=elab_flags,
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
    # The lines of math2's own elaborated-type commands (`math2.lean.elaborated`), by target.
    asked: dict[int, str] = field(default_factory=dict)
    declared: list[str] = field(default_factory=list)  # every declaration of the block
