"""Statement items as the formalize and eval roles build them: a trusted import header, an
untrusted context (definitions, `open`, `variable`, …) and one target theorem whose proof is
`sorry`, under an expected name. `split_item` takes such code apart; `statement_item` puts it
together as a `CheckItem`; `benchmark_code` turns a benchmark row (header + a statement ending in
`:=` or `:= by`, as provers are prompted) into checkable code."""

from __future__ import annotations

import re

from math2.lean.checker import CheckItem, Mode
from math2.lean.commands import split_code, split_commands
from math2.lean.lexer import Tok, tokenize
from math2.lean.rules import THEOREM_KEYWORDS

_OPEN_PROOF = re.compile(r":=\s*(by\s*)?$")


class NotAStatement(ValueError):
    """The code is not a header, a context and one target theorem."""


def split_item(code: str) -> tuple[str, str, str]:
    """(header, context, target): the exact import lines; everything before the target theorem
    (with its doc comment and attributes); the target theorem to the end. Raises NotAStatement
    when the body does not hold exactly one `theorem`/`lemma`, or cannot be lexed. This only
    splits: `check_statement` (through `LeanChecker.check`) still judges every part."""
    sc = split_code(code)
    try:
        toks = tokenize(sc.body)
    except ValueError as exc:
        raise NotAStatement(f"cannot read the code: {exc}") from exc
    theorems = [c for c in split_commands(toks) if c.keyword in THEOREM_KEYWORDS]
    if len(theorems) != 1:
        raise NotAStatement(f"expected exactly one theorem or lemma, found {len(theorems)}")
    target = theorems[0]
    first = target.prefixes[0] if target.prefixes else target
    start = first.tokens[0].offset
    # A doc comment directly before the theorem belongs to it.
    docs = [t for t in toks if t.kind is Tok.DOC and t.offset < start]
    if docs and not sc.body[docs[-1].offset + len(docs[-1].text) : start].strip():
        start = docs[-1].offset
    return sc.header, sc.body[:start], sc.body[start:]


def benchmark_code(header: str, formal_statement: str) -> str:
    """Header and statement as one item; a statement that ends in `:=` or `:= by` (a prover's
    prompt) gets `sorry` as its proof."""
    stmt = formal_statement.rstrip()
    if _OPEN_PROOF.search(stmt):
        stmt += " sorry"
    head = header if not header or header.endswith("\n") else header + "\n"
    return head + stmt


def statement_item(
    id: str,
    target: str,
    *,
    name: str | None = None,
    header: str = "import Mathlib",
    context: str = "",
    mode: Mode = Mode.STATEMENT,
) -> CheckItem:
    """A `CheckItem` for a target theorem (proof `sorry`, or `:=`/`:= by` to be completed with
    `sorry`) after its context, under an import header; `name` is the theorem name the compiled
    environment must declare."""
    body = context.rstrip("\n") + "\n" + target if context.strip() else target
    return CheckItem(id=id, code=benchmark_code(header, body), name=name, mode=mode)
