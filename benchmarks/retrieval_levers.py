"""Issue 33's levers, each alone and all together, for `benchmarks/retrieval.py --levers`.

The document-side levers change what is indexed, so each gets an index of its own, built in the
same run over the same store (`build_index(levers=…)`, index text v9):

- `v8`: the default path before issue 33 (index text v8), the baseline of this table;
- `body`: v9 with what a definition says (lever 1);
- `notation`: v9 with the library's notation table (lever 3);
- `names`: v9 with the name keys, kinds, renames (levers 2 and 5) and the vocabulary (lever 4),
  which are read at query time: each is measured alone by turning the other two off;
- the key-4 index of `retrieval.py` (`v9`): every lever, measured with the default path's
  weights (the vocabulary off: `W_VOCABULARY` = 0) and with the vocabulary on.

Every v9 index also reads a name with its `«»` quotes dropped (lever 5, documents).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from math2.retrieval.index import (
    W_BODY,
    W_NAMESAKE,
    W_VOCABULARY,
    W_VOCABULARY_MEASURED,
    SearchIndex,
    build_index,
)

# index key → (text version, document-side levers)
INDEXES: dict[str, tuple[int, frozenset[str]]] = {
    "v8": (8, frozenset()),
    "body": (9, frozenset({"body"})),
    "notation": (9, frozenset({"notation"})),
    "names": (9, frozenset({"names", "vocabulary"})),
}
OFF = {
    "namesake_weight": 0.0,
    "vocabulary_weight": 0.0,
    "renames": False,
    "notation": False,
    "body_weight": 0.0,
}
ON = {
    "namesake_weight": W_NAMESAKE,
    "vocabulary_weight": W_VOCABULARY,
    "renames": True,
    "notation": True,
    "body_weight": W_BODY,
}


def build(
    store: Any, work: Path, reuse: bool, say: Callable[[str], None], **kw: Any
) -> dict[str, SearchIndex]:
    """The lever indexes under `work` (built unless `reuse` finds them whole); `kw` go to
    `build_index` (the held-out docstrings and aids, the Mathlib checkout)."""
    out = {}
    for key, (version, levers) in INDEXES.items():
        folder = work / f"lever-{key}"
        if not (reuse and (folder / "meta.json").exists()):
            build_index(store, folder, dense=False, text_version=version, levers=levers,
                        progress=lambda m: say(f"  {m}"), **kw)  # fmt: skip
        out[key] = SearchIndex(folder)
    return out


def configs(
    namesake_weights: list[float], body_weights: list[float], vocabulary_weights: list[float]
) -> list[tuple[str, str, dict[str, Any]]]:
    """(label, index key, SearchIndex settings) of each lever configuration; key 4 is the
    default path's index of `retrieval.py` (v9, every lever), measured with the defaults and
    with the weights given."""
    return [
        ("v8 default path (before issue 33)", "v8", OFF),
        ("lever 1 alone: what a definition says (v9 body)", "body",
         {**OFF, "body_weight": W_BODY}),
        *((f"lever 1 alone, body words weight {w}", "body", {**OFF, "body_weight": w})
          for w in body_weights),
        ("lever 2 alone: namesake prior", "names",
         {**OFF, "namesake_weight": W_NAMESAKE}),
        ("lever 3 alone: notation read from Mathlib", "notation", {**OFF, "notation": True}),
        ("lever 4 alone: vocabulary from Mathlib's prose", "names",
         {**OFF, "vocabulary_weight": W_VOCABULARY_MEASURED}),
        ("lever 5 alone: names without «», renames", "names", {**OFF, "renames": True}),
        ("v9 default path: levers 1, 2, 3, 5 (vocabulary off)", "4", ON),
        ("all levers, vocabulary on", "4", {**ON, "vocabulary_weight": W_VOCABULARY_MEASURED}),
        *((f"lever 4 alone, vocabulary weight {w}", "names", {**OFF, "vocabulary_weight": w})
          for w in vocabulary_weights),
        *((f"all levers, namesake weight {w}", "4", {**ON, "namesake_weight": w})
          for w in namesake_weights),
        *((f"all levers, body words weight {w}", "4", {**ON, "body_weight": w})
          for w in body_weights),
        *((f"all levers, vocabulary weight {w}", "4", {**ON, "vocabulary_weight": w})
          for w in vocabulary_weights),
    ]  # fmt: skip
