"""The verdict on the elaborated statement: what Lean made of a target's type, not how the block
spelled it (docs/lean.md, "The elaborated statement").

After a block compiles, math2 appends its own commands (never taken from the item) for every
target: a `#check @NAME` under printing options that show every implicit and instance argument
(each instance argument as an ascription `(term : Class args)`, `math2.lean.elab_terms`), and
an `#eval` that asks Lean which constants of the type are instances (`Lean.Meta.isInstance`,
the instance attribute's own table: the printed type does not say which constants are
instances, and a hand list would guess). The answer is read with the one lexer:

- every instance argument is a variable of an instance binder `[…]` of the statement, an
  application of a global instance constant, a projection of those, or a lambda whose body is
  one (a family of instances, as `Pi.instAdd` takes) — a structure literal,
  anonymous constructor, lambda, `let`, literal, `sorry` or a constant of the block in instance
  position is refused for a model's block and flagged for a person's context;
- no constant declared by the block other than the target occurs in a model's type;
- `sorryAx`/`sorry` never occurs in the type (a statement's proof may be `sorry`; its type not);
- fail closed: an answer that is missing or that math2 cannot read is "not verified".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from math2.lean.diagnostics import Diagnostic
from math2.lean.elab_terms import Binder, Term, Unreadable, read_signature
from math2.lean.names import canonical, parts, rooted, same, source
from math2.lean.terms import Violation
from math2.lean.trust import ContextTrust

# Part of the checker's cache key: no verdict cached before this rule (or under another
# version of it) answers after it.
ELABORATED_RULE = "elaborated-statement-1"

# Printing options set for math2's `#check` only (`set_option … in`), each named so that no
# option the item sets can turn one off: full applications, instance arguments shown with their
# class (`pp.instanceTypes`), proofs shown, no notation, field notation or structure instances,
# full names, no elision of deep terms.
PP_OPTIONS = (
    ("pp.all", "true"),
    ("pp.explicit", "true"),
    ("pp.instances", "true"),
    ("pp.instanceTypes", "true"),
    ("pp.proofs", "true"),
    ("pp.notation", "false"),
    ("pp.fieldNotation", "false"),
    ("pp.structureInstances", "false"),
    ("pp.fullNames", "true"),
    ("pp.coercions", "false"),
    ("pp.deepTerms", "true"),
    ("pp.funBinderTypes", "true"),
    ("pp.piBinderTypes", "true"),
)
_PREFIX = "".join(f"set_option {k} {v} in " for k, v in PP_OPTIONS)
INSTANCES_MARK = "math2-instances"


def commands_for(name: str) -> list[str]:
    """The commands math2 appends for one target (one line each, so an answer's line says
    which command gave it). Every name math2 writes is under `_root_` (`names.rooted`): a
    namespace the block leaves open cannot redirect it; in the `#eval` the target is a quoted
    name (no resolution)."""
    s = source(canonical(name))
    ask = (
        "#eval show _root_.Lean.CoreM _root_.Unit from do "
        "let e ← _root_.Lean.getEnv; "
        f"let cs := ((e.find? `{s}).map (·.type.getUsedConstants)).getD #[]; "
        "let found ← cs.filterM _root_.Lean.Meta.isInstance; "
        "_root_.Lean.logInfo (_root_.Lean.MessageData.ofFormat (_root_.Std.Format.text "
        f'("{INSTANCES_MARK} " ++ _root_.ToString.toString `{s} ++ ":" ++ '
        '_root_.String.join (found.toList.map (" " ++ _root_.ToString.toString ·)))))'
    )
    return [f"{_PREFIX}#check @{rooted(name)}", ask]


@dataclass
class Answer:
    """What Lean answered for one target: the `#check` text and the instance constants."""

    check: str | None = None
    instances: set[str] | None = None
    error: str | None = None  # what Lean said instead of answering


def take(answer: Answer, d: Diagnostic) -> None:
    """File one message of math2's commands for a target into its answer."""
    if d.is_error:
        first = d.message.splitlines()[0] if d.message.strip() else "an error without text"
        answer.error = answer.error or first
        return
    if d.severity != "info":
        return
    found = instances_answer(d.message)
    if found is not None:
        answer.instances = found[1]
    elif answer.check is None:
        answer.check = d.message


@dataclass
class Reading:
    """The elaborated verdict on one target: refusals (a model's block), flags (a person's
    context), and why the answer could not be read (fail closed)."""

    refusals: list[Violation] = field(default_factory=list)
    flags: list[Violation] = field(default_factory=list)


def instances_answer(message: str) -> tuple[str, set[str]] | None:
    """`math2-instances NAME: a b c` → (NAME, {a, b, c}); None if the message is not one."""
    if not message.startswith(INSTANCES_MARK + " "):
        return None
    head, sep, rest = message[len(INSTANCES_MARK) + 1 :].partition(":")
    if not sep:
        return None
    return canonical(head.strip()), {canonical(x) for x in rest.split()}


def judge(
    target: str,
    answer: Answer,
    *,
    declared: Iterable[str],
    trust: ContextTrust,
    notation: bool = False,
) -> Reading:
    """The elaborated verdict on `target` from Lean's answer. `declared`: the block's
    declarations; `notation`: the answer came from a test double (it prints notation)."""
    out = Reading()

    def unverified(why: str) -> Reading:
        out.refusals.append(_v(f"not verified: the elaborated type of {target} {why}"))
        return out

    if answer.error is not None:
        return unverified(f"was not answered: Lean said {answer.error!r}")
    if answer.check is None:
        return unverified("was not answered (no `#check` answer)")
    if answer.instances is None:
        return unverified("was answered without the instance table (no `#eval` answer)")
    try:
        name, binders, body = read_signature(answer.check, notation=notation)
    except Unreadable as exc:
        return unverified(f"cannot be read: {exc}")
    if not same(name, target):
        return unverified(f"was answered for {name!r}")
    own = {canonical(d) for d in declared if not same(d, target)}
    walker = _Walker(answer.instances, own)
    bound: dict[str, str] = {}
    walker.binders(binders, bound)
    walker.term(body, bound)
    if walker.sorry:
        out.refusals.append(_v(f"the type of {target} is built on `sorry` ({walker.sorry})"))
    for why in walker.instance_faults:
        v = _v(f"an instance argument of {target}'s type is {why}")
        (out.refusals if trust is ContextTrust.GENERATED else out.flags).append(v)
    if trust is ContextTrust.GENERATED:
        for c in sorted(walker.own_used):
            out.refusals.append(_v(f"the type of {target} uses {c}, declared by the block"))
    return out


def _v(detail: str) -> Violation:
    return Violation(rule="elaborated", line=None, detail=detail)


class _Walker:
    """Walks a printed type: bound names with their bracket, the faults found."""

    def __init__(self, instances: set[str], own: set[str]):
        self.instances = instances
        self.own = own
        self.own_used: set[str] = set()
        self.instance_faults: list[str] = []
        self.sorry = ""

    def binders(self, groups: list[Binder], bound: dict[str, str]) -> None:
        for g in groups:
            if g.type is not None:
                self.term(g.type, bound)
            for n in g.names:
                bound[n] = g.bracket

    def term(self, t: Term, bound: dict[str, str]) -> None:
        if t.kind == "name":
            self.name(t.text, bound)
        elif t.kind == "asc":
            self.instance_arg(t.args[0], bound)
            for a in t.args:
                self.term(a, bound)
        elif t.kind in ("bind", "let"):
            inner = dict(bound)
            if t.kind == "let":
                self.term(t.args[0], bound)
            self.binders(t.binders, inner)
            self.term(t.args[-1], inner)
        else:
            for a in t.args:
                self.term(a, bound)

    def name(self, text: str, bound: dict[str, str]) -> None:
        if _local(text, bound):
            return
        full = canonical(text)
        if full in ("sorryAx", "sorry") and not self.sorry:
            self.sorry = f"`{full}`"
        if full in self.own:
            self.own_used.add(full)

    def instance_arg(self, t: Term, bound: dict[str, str]) -> None:
        why = self.instance_fault(t, bound)
        if why:
            self.instance_faults.append(why)

    def instance_fault(self, t: Term, bound: dict[str, str]) -> str:
        """Why `t` may not stand in instance position ('' if it may)."""
        while t.kind in ("paren", "asc"):  # `((t : C))` is t
            t = t.args[0]
        if t.kind == "proj":
            return self.instance_fault(t.args[0], bound)
        if t.kind == "bind" and t.text in ("fun", "λ"):
            # a family of instances (`Pi.instAdd`'s `fun i => Real.instAdd`): its body must be
            # one; a lambda can never stand for an instance of a class that is not a function
            inner = dict(bound)
            for g in t.binders:
                inner.update(dict.fromkeys(g.names, g.bracket or "("))
            why = self.instance_fault(t.args[-1], inner)
            return f"a lambda whose body is {why}" if why else ""
        head = t.args[0] if t.kind == "app" else t
        while head.kind == "paren":
            head = head.args[0]
        if head.kind == "proj":
            return self.instance_fault(head, bound)
        if head.kind != "name":
            return _DESCRIBED.get(head.kind, f"not a constant ({head.kind})")
        first = parts(head.text)[0]
        if _local(head.text, bound):
            if bound[first] == "[":
                return ""
            return f"the variable {first}, not an instance binder of the statement"
        full = canonical(head.text)
        if full in ("sorryAx", "sorry"):
            return "`sorry`"
        if full in self.own:
            return f"{full}, a constant of the block"
        if full in self.instances:
            return ""
        return f"{full}, which is not an instance"


_DESCRIBED = {
    "anon": "an anonymous constructor ⟨…⟩",
    "struct": "a structure literal { … }",
    "bind": "a lambda",
    "let": "a `let`",
    "lit": "a literal",
    "hole": "a hole `_`",
    "asc": "an ascription",
    "op": "a term built by notation",
}


def _local(text: str, bound: dict[str, str]) -> bool:
    """Whether a printed name is a bound variable (or a raw projection of one, `x.1.2`): its
    first part bound and every later part a projection's index. A binder named like a namespace
    (`[Preorder : Inhabited ℕ]`) does not make `Preorder.lift` a variable: under
    `pp.fieldNotation false` a variable's field prints as an application, never as `x.f`."""
    first, *rest = parts(text)
    return first in bound and all(p.isdigit() for p in rest)
