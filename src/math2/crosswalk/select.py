"""Which Mathlib declarations become nodes (K6.4), by four signals in order:

1. a human mention in the same row;
2. the named-theorem lists (100, 1000+) and the main results that module docs name;
3. a declaration that a node already uses (its binding) or that a person asks for;
4. a definition that the statement of a selected theorem uses.

Signals 1 and 2 (lists) arrive through the clustering pass; this module records them and adds
module-doc main results, requests and statement dependencies as nodes of their own.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.crosswalk.nodes import NodeIndex
from math2.lean.syntax import Scope, constants_of, identifiers
from math2.store.models import Binding, ConstDep, Mention, Node, Source

DEF_KINDS = {
    "def",
    "abbrev",
    "structure",
    "class",
    "inductive",
    "class inductive",
    "irreducible_def",
    "opaque",
    "coinductive",
}
THEOREM_KINDS = {"theorem", "lemma", None}
LIST_SOURCES = {"1000-plus", "mathlib-theorem-lists", "wiedijk-100"}


class SelectionReport(BaseModel):
    """How many declarations each signal selected (measured, not guessed)."""

    human_mention: int = 0
    theorem_lists: int = 0
    module_doc_main_results: int = 0
    requested_or_bound: int = 0
    statement_definitions: int = 0
    not_found_requests: list[str] = []

    @property
    def total(self) -> int:
        """Selected declarations in all."""
        return (
            self.human_mention
            + self.theorem_lists
            + self.module_doc_main_results
            + self.requested_or_bound
            + self.statement_definitions
        )


def select_nodes(
    session: Session, source: str = "mathlib", requests: Iterable[str] = ()
) -> SelectionReport:
    """Apply the signals to the active mentions of `source`; idempotent."""
    rep = SelectionReport()
    src = session.scalar(select(Source).where(Source.name == source))
    if src is None:
        return rep
    mentions = {
        m.name: m
        for m in session.scalars(
            select(Mention).where(Mention.source_id == src.id, Mention.status == "active")
        )
    }
    nodes = {n.id: n for n in session.scalars(select(Node))}
    index = NodeIndex(session)

    def make_node(m: Mention, signal: str) -> None:
        node = index.node(f"decl:{source}:{m.name}", selected_by=signal, title=m.name)
        m.node_id, m.outcome = node.id, "node"

    # 1 and 2 (lists): what the clustering pass already joined.
    for m in mentions.values():
        if m.node_id is None:
            continue
        selected_by = nodes[m.node_id].selected_by if m.node_id in nodes else None
        if selected_by in LIST_SOURCES:
            rep.theorem_lists += 1
        elif selected_by is not None and not selected_by.startswith(
            ("module-doc", "request", "statement")
        ):
            rep.human_mention += 1
    # 2 (module docs): main results a module's documentation names.
    for m in mentions.values():
        if m.node_id is None and (m.extra or {}).get("main_result"):
            make_node(m, "module-doc main result")
            rep.module_doc_main_results += 1
    # 3: requested by a person, or the declaration of a binding.
    bound = {mid for (mid,) in session.execute(select(Binding.mention_id))}
    for name in requests:
        m = mentions.get(name)
        if m is None:
            rep.not_found_requests.append(name)
        elif m.node_id is None:
            make_node(m, "request")
            rep.requested_or_bound += 1
    for m in mentions.values():
        if m.id in bound and m.node_id is None:
            make_node(m, "request")
            rep.requested_or_bound += 1
    # 4: definitions in the statements of selected theorems.
    session.flush()
    deps = {mid: d for mid, d in session.execute(select(ConstDep.mention_id, ConstDep.deps))}
    by_short: dict[str, list[str]] = defaultdict(list)
    for name, m in mentions.items():
        if m.kind in DEF_KINDS or m.kind is None:
            by_short[name.rsplit(".", 1)[-1]].append(name)
    chosen: set[str] = set()
    for m in list(mentions.values()):
        if m.node_id is None or m.kind not in THEOREM_KINDS or not m.statement:
            continue
        for name in _statement_constants(m, mentions, by_short, deps.get(m.id)):
            d = mentions[name]
            if d.node_id is None and name not in chosen and (d.kind in DEF_KINDS or d.kind is None):
                chosen.add(name)
    for name in sorted(chosen):
        make_node(mentions[name], "statement dependency")
    rep.statement_definitions = len(chosen)
    session.flush()
    return rep


def _statement_constants(
    m: Mention, mentions: dict[str, Mention], by_short: dict[str, list[str]], deps: list[str] | None
) -> set[str]:
    """Constants the statement of `m` names, resolved the way Lean would, as far as text allows.

    With lean_scout's const_dep the candidates are the dependencies that the (elaborated) type
    names; from a source scan, `math2.lean.syntax.constants_of` inside the namespaces enclosing
    the declaration, then as a unique short name.
    """
    text = m.statement or ""
    if deps is not None:
        tokens = set(identifiers(text))
        return {
            d for d in deps if d in mentions and (d in tokens or d.rsplit(".", 1)[-1] in tokens)
        }
    return set(constants_of(text, Scope.of(m.name, mentions, short=by_short)))
