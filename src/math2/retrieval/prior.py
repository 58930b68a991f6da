"""The index's prior: each declaration's PageRank in the graph of "uses" edges, as a percentile
(0…1) in index order (`prior.npy`; how a search weighs it: `index.py`). The edges are the
store's recorded dependencies (`ConstDep`), else the constants a statement names as the Lean
lexer reads them, resolved in the declaration's scope.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from math2.lean.syntax import Scope, constants_of
from math2.util.progress import track

if TYPE_CHECKING:
    from math2.retrieval.corpus import Row


def pagerank(
    edges_src: np.ndarray,
    edges_dst: np.ndarray,
    n: int,
    damping: float = 0.85,
    iters: int = 50,
    label: str = "PageRank",
) -> np.ndarray:
    """PageRank by power iteration on a sparse graph (dangling mass spread evenly); each
    iteration counted as a stage named `label`."""
    from scipy.sparse import csr_matrix

    if n == 0:
        return np.zeros(0)
    out_deg = np.bincount(edges_src, minlength=n).astype(np.float64)
    w = np.ones(len(edges_src)) / np.maximum(out_deg[edges_src], 1)
    m = csr_matrix((w, (edges_dst, edges_src)), shape=(n, n))
    r = np.full(n, 1.0 / n)
    dangling = out_deg == 0
    for _ in track(range(iters), label, unit="iterations"):
        r_new = damping * (m @ r + r[dangling].sum() / n) + (1 - damping) / n
        if np.abs(r_new - r).sum() < 1e-10:
            r = r_new
            break
        r = r_new
    return r


def percentile(x: np.ndarray) -> np.ndarray:
    """Each value's rank among all, scaled to 0…1 (ties in index order)."""
    if len(x) == 0:
        return x
    order = np.argsort(x, kind="stable")
    p = np.empty(len(x))
    p[order] = np.arange(len(x)) / max(1, len(x) - 1)
    return p


def dependency_prior(
    rows: list[Row], deps: dict[int, list[str]], tag: str
) -> tuple[np.ndarray, int]:
    """(the prior of each row as float32 percentiles, how many edges the graph has)."""
    from math2.retrieval.parts import each

    names = [r.name for r in rows]
    pos = {n: i for i, n in enumerate(names)}
    src_e, dst_e = [], []
    by_short: dict[str, list[str]] = {}
    for n in names:
        by_short.setdefault(n.rsplit(".", 1)[-1], []).append(n)
    for i, r in each(list(enumerate(rows)), f"{tag}: prior's edges"):
        used = deps.get(r.id)
        if used is None:
            used = constants_of(r.statement, Scope.of(names[i], pos, short=by_short))
        for t in set(used):
            j = pos.get(t)
            if j is not None and j != i:
                src_e.append(i)
                dst_e.append(j)
    pr = pagerank(
        np.array(src_e, dtype=np.int64),
        np.array(dst_e, dtype=np.int64),
        len(names),
        label=f"{tag}: PageRank prior",
    )
    return percentile(pr).astype(np.float32), len(src_e)
