"""Tiny lean_scout datasets in both schemas, written as zstd parquet shards."""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

TYPES = [
    # name, module, type, docString, allowCompletion
    (
        "Nat.add_comm",
        "Mathlib.Algebra.Demo",
        "∀ (n m : ℕ), n + m = m + n",
        "Addition commutes.",
        True,
    ),
    ("Nat.two_eq", "Mathlib.Algebra.Demo", "2 = 1 + 1", None, True),
    ("Demo.idf", "Mathlib.Algebra.Demo", "{α : Type u_1} → α → α", "The identity.", True),
    ("Demo.idf.eq_1", "Mathlib.Algebra.Demo", "∀ (x : α), Demo.idf x = x", None, False),
    ("Lean.Internal.aux", "Init.Core", "Nat", None, False),
    ("Nat", "Init.Prelude", "Type", "The natural numbers.", True),
]
CONST_DEP = [
    ("Nat.add_comm", "Mathlib.Algebra.Demo", ["Nat", "HAdd.hAdd", "Eq"], True),
    ("Nat.two_eq", "Mathlib.Algebra.Demo", ["Nat", "OfNat.ofNat"], True),
    ("Demo.idf", "Mathlib.Algebra.Demo", [], True),
]


def write_types(folder: Path, rows=TYPES, old_schema: bool = False, shards: int = 2) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    cols = {
        "name": [r[0] for r in rows],
        "module": [r[1] for r in rows],
        "type": [r[2] for r in rows],
    }
    if not old_schema:
        cols["docString"] = [r[3] for r in rows]
        cols["allowCompletion"] = [r[4] for r in rows]
    table = pa.table(cols)
    step = max(1, len(rows) // shards)
    for i in range(0, len(rows), step):
        pq.write_table(
            table.slice(i, step), folder / f"{i // step:05d}.parquet", compression="zstd"
        )
    return folder


def write_const_dep(folder: Path, rows=CONST_DEP) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    table = pa.table(
        {
            "name": [r[0] for r in rows],
            "module": [r[1] for r in rows],
            "deps": [r[2] for r in rows],
            "allowCompletion": [r[3] for r in rows],
        }
    )
    pq.write_table(table, folder / "00000.parquet", compression="zstd")
    return folder


def write_tactics(folder: Path, old_schema: bool) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if old_schema:
        goals = [[{"pp": "⊢ 2 = 1 + 1", "usedConstants": ["Eq", "Nat"]}]]
        table = pa.table(
            {
                "goals": goals,
                "ppTac": ["rfl"],
                "elaborator": ["Lean.Elab.Tactic.rfl"],
                "kind": ["Lean.Parser.Tactic.tacticRfl"],
            }
        )
    else:
        pos = {"line": 12, "column": 2}
        goals = [
            [
                {
                    "pp": "⊢ 2 = 1 + 1",
                    "ppTerm": "?m",
                    "assigned": True,
                    "usedConstants": ["Eq", "Nat"],
                    "usedFVars": [],
                    "usedGoals": [
                        {
                            "new": False,
                            "index": None,
                            "kind": "natural",
                            "pp": "⊢ 2 = 1 + 1",
                            "ppTerm": "?m",
                        }
                    ],
                }
            ]
        ]
        table = pa.table(
            {
                "module": ["Mathlib.Algebra.Demo"],
                "startPos": [pos],
                "endPos": [pos],
                "nextStartPos": [pos],
                "goals": goals,
                "goalsAfter": [[]],
                "ppTac": ["rfl"],
                "elaborator": ["Lean.Elab.Tactic.rfl"],
                "kind": ["Lean.Parser.Tactic.tacticRfl"],
            }
        )
    pq.write_table(table, folder / "00000.parquet", compression="zstd")
    return folder


def scout(root: Path, old_schema: bool = False) -> Path:
    write_types(root / "mathlib-types", old_schema=old_schema)
    write_const_dep(root / "mathlib-const-dep")
    write_tactics(root / "mathlib-tactics", old_schema=old_schema)
    return root
