"""The retrieval dev sets written for math2 (`benchmarks/devsets/*.yaml`, in a wheel
`math2/_data/devsets/`; their README says how they were written): queries shaped like users'
with the declarations that answer them. The learned ranker is trained on them (`ranker.py`)
and `benchmarks/` measures on them; no held-out set is ever among them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from math2.errors import InputError

# A declaration's kind as the source scan records it → the target kind a dev set reports by.
# An alias is counted with the theorems (nearly every alias in Mathlib names a theorem).
TARGET_KIND = {
    "theorem": "theorem", "lemma": "theorem", "alias": "theorem", "structure": "structure",
    "class": "class", "class inductive": "class", "def": "def", "abbrev": "def",
    "irreducible_def": "def", "opaque": "def", "instance": "instance",
    "inductive": "inductive", "coinductive": "inductive", "field": "field",
}  # fmt: skip
TARGET_KINDS = ("theorem", "structure", "class", "def", "instance", "inductive", "field")


def kind_of(scanned: str | None) -> str:
    """The target kind of a declaration the source scan recorded as `scanned`."""
    return TARGET_KIND.get(scanned or "", "other")


def devsets_dir() -> Path:
    """The dev sets of the checkout math2 runs from (`math2/_data/devsets` in a wheel)."""
    packaged = Path(__file__).resolve().parents[1] / "_data" / "devsets"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "benchmarks" / "devsets"


@dataclass(frozen=True)
class DevItem:
    """One query of a dev set: its style (the set's name), the answers an index holds, and
    the target kind (the item's `kind`, else the kind of its first answer)."""

    style: str
    query: str
    answers: frozenset[str]
    kind: str


class DevSetError(InputError):
    """A dev set file that cannot be read as one."""


def _items(folder: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Each item of `folder/*.yaml`, in the sets' order, with its file; a file that is no dev
    set, or an item without a query `q` and answers `a`, is a DevSetError naming the file."""
    for f in sorted(folder.glob("*.yaml")):
        try:
            items = yaml.safe_load(f.read_text(encoding="utf-8")) or []
        except OSError as exc:
            raise DevSetError(f, None, f"cannot read it: {exc}") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            raise DevSetError(f, line, f"not YAML ({getattr(exc, 'problem', exc)})") from None
        if not isinstance(items, list):
            raise DevSetError(f, None, "a dev set is a list of items")
        for i, it in enumerate(items):
            if not isinstance(it, dict) or not it.get("q") or not isinstance(it.get("a"), list):
                raise DevSetError(f, None, f"item {i + 1} needs a query `q` and answers `a`")
            yield f, it


def read_devsets(
    folder: Path, kinds: dict[str, str | None], *, every: bool = False
) -> list[DevItem]:
    """Every item of `folder/*.yaml` whose answers the index holds (`kinds`: the index's
    names → their scanned kinds); items none of whose answers it holds are left out. With
    `every`, every item is kept with all the answers it writes (a benchmark scoring a search:
    an item the index cannot answer scores 0, never dropped)."""
    out = []
    for f, it in _items(folder):
        present = list(it["a"]) if every else [a for a in it["a"] if a in kinds]
        if present:
            kind = it.get("kind") or kind_of(kinds.get(present[0]))
            out.append(DevItem(f.stem, str(it["q"]), frozenset(present), kind))
    return out


def read_answers(folder: Path) -> list[str]:
    """Every answer of every item of `folder/*.yaml`, in the sets' order (`informalize
    --from-devset`), read and checked as `read_devsets` reads them."""
    return [str(a) for _, it in _items(folder) for a in it["a"]]
