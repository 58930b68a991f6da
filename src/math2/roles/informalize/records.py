"""What flows through the informalize job: a declaration in, its informal statement out."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class Decl(BaseModel):
    """One declaration to informalize, with what its prompt needs."""

    id: str  # the full name (the run item)
    name: str
    kind: str  # theorem, lemma, def, …
    module: str = ""
    statement: str  # binders and type, as the scanner or lean_scout gives it
    docstring: str | None = None
    deps: list[str] = Field(default_factory=list)  # full names it uses
    # the deps that are items of the same run: the item waits for their text (set by the job)
    waits_for: list[str] = Field(default_factory=list)
    context: list[str] = Field(default_factory=list)  # nearby declarations of its module
    library: str = "mathlib"
    mention_id: int | None = None
    origin: str = "declaration"  # or "tactic_state" (Herald's tactic augmentation)

    @classmethod
    def of_mention(cls, m: Any, deps: list[str] | None, library: str) -> Decl:
        """A store mention (a `math2.store.Mention` row) as a declaration to informalize."""
        return cls(
            id=m.name,
            name=m.name,
            kind=m.kind or "theorem",
            module=m.module or "",
            statement=" ".join(m.statement.split()),
            docstring=m.docstring,
            deps=list(deps or []),
            library=library,
            mention_id=m.id,
        )

    @property
    def lean(self) -> str:
        """The declaration as Lean text (for the model and for the checks)."""
        short = self.name.rsplit(".", 1)[-1]
        kw = "theorem" if self.kind in {"theorem", "lemma"} else self.kind
        return f"{kw} {short} {self.statement.strip()}".rstrip()


class InformalizeResult(BaseModel):
    """The informal statement of one declaration and how the battery judged it."""

    id: str
    informal: str | None = None
    verdict: str = "error"  # the battery's overall verdict (pass accepts)
    accepted: bool = False
    failed_checks: list[str] = Field(default_factory=list)
    attempt_id: int | None = None
    agent_text_id: int | None = None
    augmentations: dict[str, str] = Field(default_factory=dict)
