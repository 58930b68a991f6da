"""TheoremGraph's release as candidate pairs: its relational tables joined into (informal
statement, Lean declaration) rows for `matching.import_pairs`.

The format, from the release's public description (the Math-Graph dataset card and the
companion `theorem-matching` dataset): CSV tables keyed by statement ids (UUIDs), loaded a table
at a time and joined by foreign keys — `statement_informal.csv` (arXiv statements),
`statement_formal.csv` (Lean declarations of 25 projects) and the judged matches between them.
The card does not spell out every column, so the names below are ASSUMED, with the plausible
alternatives each reader accepts; a release whose columns differ fails with an error naming the
file and the columns it has (docs/align.md):

- formal table: id (`id` | `statement_id` | `formal_id`), Lean name (`name` | `decl_name` |
  `lean_name` | `declaration`), project (`project` | `repo` | `library`, optional);
- informal table: id (`id` | `statement_id` | `informal_id`), paper (`arxiv_id` | `paper_id` |
  `paper`), label (`label` | `env_label` | `number`, optional);
- matches (`matches.*` or `theorem_matching.*`, .csv/.jsonl/.parquet): informal id
  (`informal_id` | `informal_statement_id` | `src_id`), formal id (`formal_id` |
  `formal_statement_id` | `dst_id`), similarity (`similarity` | `cosine` | `score`, optional),
  the dataset's judge (`judge` | `accepted` | `verdict` | `match`, optional).

Only ids, names and numbers are read; no statement text is copied (K6.7). The dataset's own
judgement is kept as a field of the candidate, never as math2's verdict: the align role judges
every pair again.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from math2.errors import InputError

FORMAL = "statement_formal"
INFORMAL = "statement_informal"
MATCHES = ("matches", "theorem_matching")

F_ID = ("id", "statement_id", "formal_id")
F_NAME = ("name", "decl_name", "lean_name", "declaration")
F_PROJECT = ("project", "repo", "library")
I_ID = ("id", "statement_id", "informal_id")
I_PAPER = ("arxiv_id", "paper_id", "paper")
I_LABEL = ("label", "env_label", "number")
M_INFORMAL = ("informal_id", "informal_statement_id", "src_id")
M_FORMAL = ("formal_id", "formal_statement_id", "dst_id")
M_SCORE = ("similarity", "cosine", "score")
M_JUDGE = ("judge", "accepted", "verdict", "match")


def is_release(path: Path) -> bool:
    """A folder holding the release's tables (not a flat file of pairs)."""
    return path.is_dir() and _table(path, FORMAL) is not None


def _table(folder: Path, stem: str) -> Path | None:
    for suffix in (".csv", ".jsonl", ".parquet", ".tsv"):
        hits = sorted(folder.rglob(f"{stem}{suffix}"))
        if hits:
            return hits[0]
    return None


def _column(f: Path, line: int, row: dict, names: tuple[str, ...], required: bool = True):
    for n in names:
        if row.get(n) not in (None, ""):
            return str(row[n])
    if required:
        have = sorted(k for k in row if not k.startswith("__"))
        raise InputError(f, line, f"needs one of the columns {names} (it has {have})")
    return None


def _rows(f: Path) -> Iterator[tuple[int, dict]]:
    from math2.importers.matching import read_rows

    yield from read_rows(f)


def theoremgraph_rows(folder: Path, project: str | None = "mathlib") -> Iterator[tuple[int, dict]]:
    """(row number, pair row) for each match whose Lean side is in `project` (None: any):
    `{"statement_id": "<paper>#<label or id>", "lean_decl": NAME, "score": …, "judge": …}`."""
    formal_f = _table(folder, FORMAL)
    informal_f = _table(folder, INFORMAL)
    matches_f = next((t for m in MATCHES if (t := _table(folder, m)) is not None), None)
    for stem, f in ((FORMAL, formal_f), (INFORMAL, informal_f), ("matches", matches_f)):
        if f is None:
            raise InputError(folder, None, f"the TheoremGraph release has no {stem} table")
    assert formal_f and informal_f and matches_f
    formal: dict[str, tuple[str, str | None]] = {}
    for line, row in _rows(formal_f):
        proj = _column(formal_f, line, row, F_PROJECT, required=False)
        formal[_column(formal_f, line, row, F_ID)] = (_column(formal_f, line, row, F_NAME), proj)
    informal: dict[str, str] = {}
    for line, row in _rows(informal_f):
        sid = _column(informal_f, line, row, I_ID)
        paper = _column(informal_f, line, row, I_PAPER)
        label = _column(informal_f, line, row, I_LABEL, required=False)
        informal[sid] = f"{paper}#{label or sid}"
    for line, row in _rows(matches_f):
        iid = _column(matches_f, line, row, M_INFORMAL)
        fid = _column(matches_f, line, row, M_FORMAL)
        if iid not in informal:
            raise InputError(matches_f, line, f"informal statement {iid!r} is not in {informal_f}")
        if fid not in formal:
            raise InputError(matches_f, line, f"formal statement {fid!r} is not in {formal_f}")
        name, proj = formal[fid]
        if project is not None and proj is not None and proj.lower() != project:
            continue
        out = {"statement_id": informal[iid], "lean_decl": name, "__file": str(matches_f)}
        if (score := _column(matches_f, line, row, M_SCORE, required=False)) is not None:
            out["score"] = score
        if (judge := _column(matches_f, line, row, M_JUDGE, required=False)) is not None:
            out["judge"] = judge
        yield line, out
