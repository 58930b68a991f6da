"""An alias's text in the index: what its target says.

`alias mul_pos := Left.mul_pos` declares a constant with its target's type, but the source
scan records no statement for it (the command has none), so 5,974 of Mathlib's 279,221 indexed
declarations — `mul_pos`, `pow_two_nonneg`, many a name users know — were documents of two or
three name words. For the index only (never the corpus: the mention keeps what its source says),
an alias is given its target's statement, and its docstring where it has none of its own.
`alias ⟨foo, bar⟩ := foo_iff` names the two directions of an iff: `foo` gets `lhs → rhs` and
`bar` `rhs → lhs` of the target's statement (the importer records which, `alias_direction`);
a direction whose target states no top-level `↔` gets nothing. In a store imported before the
direction was recorded, such an alias gets the whole iff.
"""

from __future__ import annotations

from math2.retrieval.aids import NameIndex


def one_direction(statement: str, direction: str) -> str | None:
    """An iff statement's `mp` (`lhs → rhs`) or `mpr` (`rhs → lhs`) form, binders kept; None
    where its type has no `↔` outside brackets."""
    from math2.retrieval.shape import _groups, _lex, _split_colon

    binders, typ = _split_colon(_lex(statement))
    for group in _groups(typ):
        if len(group) == 1 and group[0].text == "↔":
            start, at = typ[0].offset, group[0].offset
            lhs = statement[start:at].strip()
            rhs = statement[at + len("↔") :].strip()
            head = statement[:start].rstrip()
            body = f"{lhs} → {rhs}" if direction == "mp" else f"{rhs} → {lhs}"
            return f"{head} {body}" if binders else body
    return None


def borrow(
    names: list[str],
    statements: list[str | None],
    docstrings: list[str | None],
    targets: dict[int, tuple[str, str | None]],
    hidden: set[int] | frozenset[int] = frozenset(),
) -> tuple[list[str | None], list[str | None], int]:
    """(statements, docstrings, how many aliases borrowed) with each alias at position `i`
    (its target written as `targets[i][0]`, its direction of an iff `targets[i][1]`) given its
    target's statement, and its target's docstring where it has none. `docstrings` are those
    the index may use (held-out ones already None), so a hidden docstring is never borrowed,
    and an alias at a position in `hidden` (its own docstring held out) borrows none."""
    index = NameIndex(names)
    stmts, docs, n = list(statements), list(docstrings), 0
    for i, (target, direction) in targets.items():
        j = index.resolve(target, scope=names[i].rpartition(".")[0])
        target_statement = statements[j] if j is not None and j != i else None
        if j is None or not target_statement:
            continue
        text = one_direction(target_statement, direction) if direction else target_statement
        if text is None:
            continue
        stmts[i] = stmts[i] or text
        if i not in hidden:
            docs[i] = docs[i] or docstrings[j]
        n += 1
    return stmts, docs, n
