"""Issue 45 §3: the learned ranker against the hand-tuned fusion, per target kind and per query
style, on the dev sets shaped like users, over one index built by `math2 index build`.

    python benchmarks/retrieval_ranker.py --index .math2/index/mathlib [--folds 5]

The ranker is measured under cross-validation grouped by target: the dev-set items are split
into `--folds` folds by a hash of their first answer (so a target asked in two styles is never
on both sides), a model is trained on the other folds with the shipped settings
(`ranker.fit`) and orders the held fold's candidates. No figure here is on a query its model
was trained on. The shipped model (`<index>/ranker/`, trained on every item) is timed, not
scored. Configurations, all over the same first stage (`SearchIndex.rankings`, each part's
top 100, their union the candidates):

- `fusion (default before §3)`: the hand-tuned fusion (`stage.fuse`), name parts and glosses
  off, as searches ran before;
- `fusion + name parts, glosses W`: the same with them fused (tied ranks shared,
  `stage.Rankings.shared_ranks`) at `W_PARTS_MEASURED`, `W_GLOSSES_MEASURED` (2 and 1, as
  measured at 0.249 before) and at a quarter of those;
- `ranker, mix m ORDER`: every feature, the model's scores standardised plus m × a first-stage
  order's −log(1 + rank) (`ranker.mixed`, `ranker.first_ranks`: `fused`, `best`, `strict`,
  `rrf`; `--mixes 0.25:strict …`; the shipped `ranker.MIX`, `ranker.ORDER` marked);
  `--baseline` (main's 0.25 of the fused order) the mix the shipped one must not fall below,
  cross-validated on `--baseline-rows` (the rows as another math2 made them) where given;
  `ranker − X`: the features of X left out (held at 0); with `--families`, each name-part
  mapping family left out in turn (the first stage and the features recomputed without it) and
  all of them; with `--probe`, the rank of the issue's queries' answers under a model trained
  on every item (as the index build trains the shipped one);
- a verdict per cut: the shipped ranker's mean paired difference to the fusion (and to the
  baseline) against twice its standard error;
- `first stage recall`: the share of items with an answer among the candidates.

Then CPU and wall ms per query (p50, p95) of `SearchIndex.search` at k = 10 and k = 100 with the
fusion and with the shipped ranker, with the run's CPU time and load average.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from ranker_rows import RowsFileError, load_rows, save_rows
from retrieval_report import score

from math2.retrieval.devsets import DevItem, devsets_dir, read_devsets
from math2.retrieval.features import FEATURES
from math2.retrieval.index import W_GLOSSES_MEASURED, W_PARTS_MEASURED, SearchIndex
from math2.retrieval.nameparts import FAMILIES
from math2.retrieval.ranker import MIX, ORDER, ORDERS, POOL, QueryRows, fit, mixed, query_rows
from math2.retrieval.stage import fuse

# Feature groups left out one at a time (their columns held at 0 in training and testing).
GROUPS = {
    "name parts": ("parts_score", "parts_rank", "parts_coverage", "parts_precision",
                   "parts_reliable", "parts_last", "parts_groups"),
    "name parts' reliability, last component, groups": (
        "parts_reliable", "parts_last", "parts_groups"),
    "name cover": ("name_cover", "name_extra"),
    "glosses": ("gloss_score", "gloss_rank"),
    "fusion features": ("fused", "fused_rank"),
    "kind, depth, family head": (
        "kind", "depth", "name_length", "family_members", "family_member_of"),
    "query features": ("query_prose", "query_tokens", "query_mapped", "query_latex"),
    "prior": ("prior",),
}  # fmt: skip


Mix = tuple[float, str]  # the share of a first-stage order mixed in, and which order


def fold_of(item: DevItem, folds: int) -> int:
    target = min(item.answers)
    return int(hashlib.sha256(target.encode()).hexdigest(), 16) % folds


def ranked(ix: SearchIndex, scores: dict[int, float], k: int = 50) -> list[str]:
    """Names best first, renamed declarations followed as a search does."""
    scores = dict(scores)
    ix._follow_renames(scores)
    return [ix.name(p) for p, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]


def cross_validated(
    ix: SearchIndex,
    data: Sequence[QueryRows],
    folds: int,
    drop: Sequence[str] = (),
    mixes: Sequence[Mix] = ((MIX, ORDER),),
    params: dict[str, Any] | None = None,
    features: Sequence[str] = FEATURES,
) -> dict[Mix, list[list[str]]]:
    """Each item's names as ordered by a model trained on the other folds, for each mix of
    a first-stage order (`ranker.mixed`: (share, order); one model per fold serves every
    mix). Features in `drop` are held at 0 in training and
    testing, but the mix reads the rows as they are. `features`: the names the rows were made
    under (`ranker_rows.load_rows`), which `fit` checks them against."""
    cols = [list(features).index(f) for f in drop]
    out: dict[Mix, list[list[str]]] = {m: [[] for _ in data] for m in mixes}
    for k in range(folds):
        train = [d for d in data if fold_of(d.item, folds) != k]
        if cols:
            train = [QueryRows(d.item, d.positions, _without(d.rows, cols), d.labels, d.fused)
                     for d in train]  # fmt: skip
        model = fit(train, params=params, features=features)
        for i, d in enumerate(data):
            if fold_of(d.item, folds) == k and len(d.positions):
                raw = model.predict(_without(d.rows, cols))
                for m in mixes:
                    s = mixed(raw, d.rows, *m)
                    out[m][i] = ranked(ix, dict(zip(d.positions.tolist(), s.tolist(), strict=True)))
    return out


def _without(rows: np.ndarray, cols: list[int]) -> np.ndarray:
    if not cols:
        return rows
    rows = rows.copy()
    rows[:, cols] = 0.0
    return rows


def _cuts(items: Sequence[DevItem]) -> dict[str, list[int]]:
    cuts: dict[str, list[int]] = {"all": list(range(len(items)))}
    for i, it in enumerate(items):
        cuts.setdefault(f"kind {it.kind}", []).append(i)
        cuts.setdefault(f"style {it.style}", []).append(i)
    return {c: cuts[c] for c in sorted(cuts, key=lambda c: (c != "all", c))}


def per_query(names: list[list[str]], items: Sequence[DevItem]) -> list[float]:
    return [score(n, set(it.answers))["nDCG@10"] for n, it in zip(names, items, strict=True)]


def table(configs: dict[str, list[list[str]]], items: Sequence[DevItem], base: str) -> None:
    """One row per configuration, one column per cut: nDCG@10 (ratio to `base`)."""
    cuts = _cuts(items)
    print("| configuration | " + " | ".join(f"{c} ({len(v)})" for c, v in cuts.items()) + " |")
    print("|---|" + "---|" * len(cuts))
    scores = {label: per_query(names, items) for label, names in configs.items()}
    means = {label: {c: statistics.mean(v[i] for i in ix) for c, ix in cuts.items()}
             for label, v in scores.items()}  # fmt: skip
    for label, row in means.items():
        cells = []
        for c in cuts:
            b = means[base][c]
            cells.append(f"{row[c]:.3f}" + (f" ({row[c] / b:.2f})" if label != base and b else ""))
        print(f"| {label} | " + " | ".join(cells) + " |")


def verdict(
    new: list[list[str]],
    old: list[list[str]],
    items: Sequence[DevItem],
    heads: tuple[str, str] = ("fusion", "ranker"),
) -> bool:
    """Per cut: the mean paired difference new − old in nDCG@10 with twice its standard
    error (the noise of a cut of n queries); True where no cut is below by more than that."""
    a, b = per_query(new, items), per_query(old, items)
    ok = True
    print(f"| cut (queries) | {heads[0]} | {heads[1]} | difference | 2 × SE | verdict |")
    print("|---|---|---|---|---|---|")
    for c, ix in _cuts(items).items():
        d = [a[i] - b[i] for i in ix]
        mean = statistics.mean(d)
        se = statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else float("inf")
        word = "BETTER" if mean > 2 * se else "WORSE" if -mean > 2 * se else (
            "above, within noise" if mean > 0 else "level" if mean == 0 else
            "below, within noise")  # fmt: skip
        ok = ok and word != "WORSE"
        old_mean, new_mean = statistics.mean(b[i] for i in ix), statistics.mean(a[i] for i in ix)
        print(f"| {c} ({len(ix)}) | {old_mean:.3f} | {new_mean:.3f} | {mean:+.3f} | "
              f"{2 * se:.3f} | {word} |")  # fmt: skip
    return ok


def latency(ix: SearchIndex, queries: list[str], ranker: bool) -> str:
    out = []
    for k in (10, 100):
        ix.search(queries[0], k, ranker=ranker)
        wall, cpu = [], []
        for q in queries:
            w0, p0 = time.perf_counter(), time.process_time()
            ix.search(q, k, ranker=ranker)
            wall.append((time.perf_counter() - w0) * 1000)
            cpu.append((time.process_time() - p0) * 1000)
        p95 = lambda xs: sorted(xs)[int(0.95 * (len(xs) - 1))]  # noqa: E731
        out.append(f"k={k}: CPU p50 {statistics.median(cpu):.1f} ms p95 {p95(cpu):.1f} ms, "
                   f"wall p50 {statistics.median(wall):.1f} ms p95 {p95(wall):.1f} ms")  # fmt: skip
    return "; ".join(out)


# The queries over the whole library and the answer each should find in the top 3.
PROBES = {
    "derivative of a product of two functions": "deriv_mul",
    "group homomorphism": "MonoidHom",
    r"$\sum_{i=0}^{n} i = \frac{n(n+1)}{2}$": "Finset.sum_range_id_mul_two",
    "Zorn's lemma": "zorn_le",
    "Euler's identity": "Complex.exp_pi_mul_I",
}


def probe(ix: SearchIndex, data: Sequence[QueryRows], mixes: Sequence[Mix]) -> None:
    """The rank of each probe's answer under a model trained on every dev item (as the index
    build trains the shipped one), for each mix, and under the fusion."""
    model = fit(data)
    queries = list(PROBES)
    probe_rows = query_rows(ix, [DevItem("probe", q, frozenset({a}), "theorem")
                                 for q, a in PROBES.items()])  # fmt: skip
    print("| query | answer | fusion | " + " | ".join(_mix_label(m) for m in mixes) + " |")
    print("|---|---|---|" + "---|" * len(mixes))
    for q, d in zip(queries, probe_rows, strict=True):
        cells = [_rank(ranked(ix, d.fused, 1000), PROBES[q])]
        raw = model.predict(d.rows) if len(d.positions) else np.zeros(0)
        for m in mixes:
            s = mixed(raw, d.rows, *m)
            scores = dict(zip(d.positions.tolist(), s.tolist(), strict=True))
            cells.append(_rank(ranked(ix, scores, 1000), PROBES[q]))
        print(f"| {q} | `{PROBES[q]}` | " + " | ".join(cells) + " |")


def _rank(names: list[str], answer: str) -> str:
    return str(names.index(answer) + 1) if answer in names else "> " + str(len(names))


def _mix_label(m: Mix) -> str:
    return f"ranker, mix {m[0]:g} {m[1]}"


def _parse_mix(text: str) -> Mix:
    share, _, order = text.partition(":")
    order = order or ORDER
    if order not in ORDERS:
        raise argparse.ArgumentTypeError(f"{text}: the order is one of {ORDERS}")
    return float(share), order


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--sets", type=Path, default=devsets_dir())
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--pool", type=int, default=POOL, help="each part's top the first stage keeps")
    ap.add_argument("--no-ablations", action="store_true")
    ap.add_argument("--mixes", type=_parse_mix, nargs="*",
                    default=[(0.0, ORDER), (MIX, ORDER), (0.5, ORDER), (1.0, ORDER)],
                    help="SHARE[:ORDER]: a first-stage order's share mixed into the model's "
                    f"(orders {', '.join(ORDERS)}; `ranker.first_ranks`)")  # fmt: skip
    ap.add_argument(
        "--baseline",
        type=_parse_mix,
        default=(0.25, "fused"),
        help="the ranker's mix the shipped one must not fall below (main's)",
    )
    ap.add_argument(
        "--cache",
        type=Path,
        help="keep the first stage's rows in this file "
        "(`ranker_rows.py`'s; read back only if made with this math2's features)",
    )
    ap.add_argument("--baseline-rows", type=Path,
                    help="the first stage's rows as another math2 made them (`ranker_rows.py` "
                    "under its src, same index and sets; its features a prefix of this "
                    "math2's): the baseline mix is cross-validated on those, under their "
                    "own feature names")  # fmt: skip
    ap.add_argument("--no-latency", action="store_true")
    ap.add_argument(
        "--no-fusion-variants",
        action="store_true",
        help="skip the fusions with name parts and glosses (each a first stage)",
    )
    ap.add_argument(
        "--probe",
        action="store_true",
        help="the issue's queries: their answers' ranks, model trained on every item",
    )
    ap.add_argument(
        "--families",
        action="store_true",
        help="each mapping family of the name-part matching left out in turn "
        "(the first stage and features recomputed), the ranker cross-validated",
    )
    args = ap.parse_args()
    try:
        run(args)
    except RowsFileError as exc:
        raise SystemExit(f"retrieval_ranker: {exc}") from None


def run(args: argparse.Namespace) -> None:
    t0, c0 = time.perf_counter(), time.process_time()
    ix = SearchIndex(args.index, use_ranker=False)
    kinds = {n: ix.cards[i].kind for i, n in enumerate(ix.names)}
    items = read_devsets(args.sets, kinds)
    print(f"index {args.index}: {len(ix)} declarations; {len(items)} dev-set queries "
          f"answered in it; load average {os.getloadavg()}")  # fmt: skip
    queries = [it.query for it in items]
    if args.cache and args.cache.exists():
        data = load_rows(args.cache, queries).rows
    else:
        data = query_rows(ix, items, args.pool)
        if args.cache:
            save_rows(args.cache, data)
    print(f"first stage + features: {time.process_time() - c0:.0f} s CPU")
    found = sum(d.labels.any() for d in data)
    print(f"first stage recall: {found}/{len(data)} items have an answer among the candidates")
    mixes = list(dict.fromkeys([*args.mixes, args.baseline, (MIX, ORDER)]))
    if args.probe:
        probe(ix, data, mixes)
    base = "fusion (default before §3)"
    configs = {base: [ranked(ix, d.fused) for d in data]}
    for share in () if args.no_fusion_variants else (1.0, 0.25):
        wp, wg = W_PARTS_MEASURED * share, W_GLOSSES_MEASURED * share
        on = SearchIndex(args.index, use_ranker=False, parts_weight=wp, glosses_weight=wg)
        configs[f"fusion + name parts {wp:g}, glosses {wg:g}"] = [
            ranked(ix, fuse(r, on.fusion_weights(0.0, 1.0), ix.prior))
            for r in on.rankings([d.item.query for d in data])
        ]
    shipped_label = f"{_mix_label((MIX, ORDER))} (shipped)"
    old_label = f"{_mix_label(args.baseline)} (baseline)"
    for m, names in cross_validated(ix, data, args.folds, mixes=mixes).items():
        label = shipped_label if m == (MIX, ORDER) else _mix_label(m)
        configs[old_label if m == args.baseline and m != (MIX, ORDER) else label] = names
    if args.baseline_rows:
        old = load_rows(args.baseline_rows, queries, prefix=True)
        old_label = (f"{_mix_label(args.baseline)} (baseline, {args.baseline_rows.name}, "
                     f"RANKER_VERSION {old.version})")  # fmt: skip
        configs[old_label] = cross_validated(ix, old.rows, args.folds, mixes=[args.baseline],
                                             features=old.features)[args.baseline]  # fmt: skip
    if not args.no_ablations:
        for label, group in GROUPS.items():
            shipped_mix = (MIX, ORDER)
            configs[f"ranker − {label}"] = cross_validated(ix, data, args.folds, group)[shipped_mix]
    if args.families:
        for fam in sorted(FAMILIES):
            off = SearchIndex(args.index, use_ranker=False, families=FAMILIES - {fam})
            rows = query_rows(off, items)
            configs[f"ranker, family {fam} off"] = cross_validated(off, rows, args.folds)[
                (MIX, ORDER)
            ]
        none = SearchIndex(args.index, use_ranker=False, families=frozenset())
        rows = query_rows(none, items)
        configs["ranker, no family (no name-part matching)"] = cross_validated(
            none, rows, args.folds
        )[(MIX, ORDER)]
    table(configs, items, base)
    print(f"\n{shipped_label} against the fusion, per cut:")
    wins = verdict(configs[shipped_label], configs[base], items)
    print(f"the ranker {'is not below' if wins else 'is below'} the fusion beyond noise "
          f"{'on any cut' if wins else 'on some cut'}")  # fmt: skip
    if old_label in configs:
        print(f"\n{shipped_label} against {old_label}, per cut:")
        kept = verdict(configs[shipped_label], configs[old_label], items, ("baseline", "shipped"))
        print(f"the shipped ranker {'is not below' if kept else 'is below'} the baseline beyond "
              f"noise {'on any cut' if kept else 'on some cut'}")  # fmt: skip
    if args.no_latency:
        return
    shipped = SearchIndex(args.index)
    print(f"fusion: {latency(ix, queries, False)}")
    if shipped.learned is not None:
        print(f"shipped ranker: {latency(shipped, queries, True)}")
    print(f"run: wall {time.perf_counter() - t0:.0f} s, CPU {time.process_time() - c0:.0f} s, "
          f"load average {os.getloadavg()}")  # fmt: skip


if __name__ == "__main__":
    main()
