"""Retrieval quality and latency over the FULL Mathlib index, on dev sets built from human data.

    python benchmarks/retrieval.py --db sqlite:///m.db --work .math2/bench-retrieval \
        --crosswalk /path/to/crosswalk --mathlib /path/to/mathlib4 [--benchmarks DIR]

Dev sets (`retrieval_sets.py`; none is MathlibQR/MathlibMPR or a file of MathForm's harness):
- `titles`: a seeded half of the theorem lists' titles → their Mathlib declarations (Mathlib's
  docs/100.yaml and docs/1000.yaml, the 1000+ theorems pages under `--crosswalk`). The list
  titles of every target of this half are held out of the search aids; the other half's titles
  stay in as aids and are not measured;
- `natural`, `lean`, `latex`, `slogans`, `nicknames`, `special`: queries written for issue 24
  from the mathematics (`benchmarks/devsets/*.yaml`), 93 % of them for theorems;
- `users-*`: the same six styles written for issue 33, 79 % of them for structures, classes,
  defs, instances and inductives, each with its target kind;
- `docstrings`: a seeded held-out split of Mathlib docstrings: the docstring is the query, its
  declaration the one relevant document, and that docstring is left out of every index built
  here (and of the aids);
- `premises` (with `--benchmarks`): a miniF2F / ProofNet informal statement → the Mathlib
  constants its formal statement uses.

Every configuration is an index over every active, completable Mathlib declaration (never a
pool). The baseline is plain BM25 as before issue 24 (index text v3: words + phrases), measured
in the same run beside v4 (Snowball stems) with and without the search aids (module-doc main
results and list titles from `--mathlib` and the store; the enclosing declarations'
docstrings). Reported per set and configuration: nDCG@10 and its ratio to the baseline,
Recall@10, Recall@50, MRR (binary relevance), and p50/p95 latency of one query; then every
figure per query style and per target kind (`retrieval_report.py`), p50/p95 of the command
line's own call (`Searcher.search`, names not preloaded) at k = 10 and k = 100 on the default
path, and the run's CPU time and load average beside its wall time.

The learned ranker (issue 45 §3) against the fusion, per target kind and query style, with
its feature groups left out one at a time and the CPU per query with and without it, is
`retrieval_ranker.py`: it reads one index `math2 index build` built and the same written dev
sets (`math2.retrieval.devsets`), cross-validated by target so that no figure is on a query
its model was trained on; the query-side levers on and off on that default path, each with a
ranker cross-validated without it, are `retrieval_default.py`.

With `--dense ENCODER` the v4 index also gets its dense part (every declaration embedded, an
HNSW graph at this size; resumable), timed, and the fused configurations are measured beside the
others. `--compare-encoders` measures the two encoders on equal terms without embedding
everything twice: each reorders the v4 BM25 top `--rerank-top` of the full index by fusing its
cosine rank with the BM25 rank.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import time
from pathlib import Path

import numpy as np
import retrieval_levers
from check_devsets import declarations
from retrieval_report import RunClock, Scores, cli_latency, mean, print_breakdowns, score
from retrieval_sets import (
    Item,
    docstring_split,
    kinds,
    lists,
    premises,
    split_lists,
    written,
)
from sqlalchemy import select

from math2.retrieval.encoder import ENCODERS, load_encoder
from math2.retrieval.index import (
    RRF_K,
    W_AIDS,
    W_DENSE,
    W_PARENTS,
    W_SHAPE,
    W_SYNONYMS,
    W_TRANSLATED,
    SearchIndex,
    build_index,
)
from math2.retrieval.text import TEXT_VERSION, document_text
from math2.store import Mention, Source, Store


def item_scores(ix: SearchIndex, items: list[Item], parts, **kw) -> list[dict[str, float]]:
    """Each item's nDCG@10, Recall@10, Recall@50 and reciprocal rank (`retrieval_report.score`)."""
    out = []
    for start in range(0, len(items), 64):
        chunk = items[start : start + 64]
        batch = ix.search_batch([q for _, q, _ in chunk], k=50, pool=100, parts=parts, **kw)
        for hits, (_, _, rel) in zip(batch, chunk, strict=True):
            out.append(score([h.name for h in hits], rel))
    return out


def metrics(ix: SearchIndex, items: list[Item], parts, **kw) -> dict[str, float]:
    return mean(item_scores(ix, items, parts, **kw))


def _score(names: list[str], rel: set[str], tot: dict[str, float]) -> None:
    for key, value in score(names, rel).items():
        tot[key] += value


def compare_encoders(
    store: Store, ix: SearchIndex, hidden: set[int], sets: dict, top: int
) -> dict[tuple[str, str], dict[str, float]]:
    """Each encoder reorders the same BM25 top `top` (over the full v3 index): RRF of the BM25
    rank and the encoder's cosine rank. Documents are embedded as the index would embed them
    (v3 text, the docstring split hidden), each once per encoder."""
    from math2.retrieval.dense import MAX_TOKENS

    wanted = {int(i) for i in ix.ids}
    with store.session() as s:
        rows = {
            r[0]: r
            for r in s.execute(
                select(Mention.id, Mention.name, Mention.statement, Mention.docstring,
                       Mention.module)
            )
            if r[0] in wanted
        }  # fmt: skip
    ranked = {name: ix.rank_bm25([q for _, q, _ in items], top) for name, items in sets.items()}
    need = sorted({int(p) for lists_ in ranked.values() for r in lists_ for p in r})
    texts = []
    for p in need:
        r = rows[int(ix.ids[p])]
        texts.append(document_text(r[1], r[2], None if r[0] in hidden else r[3], r[4]))
    out = {}
    for enc_name in ENCODERS:
        enc = load_encoder(enc_name, MAX_TOKENS[enc_name])
        t0 = time.perf_counter()
        vecs = dict(zip(need, enc.encode(texts), strict=True))
        print(f"  {enc_name}: {len(texts)} candidate documents embedded in "
              f"{time.perf_counter() - t0:.0f} s")  # fmt: skip
        for set_name, items in sets.items():
            q = enc.encode_queries([q for _, q, _ in items])
            tot = dict.fromkeys(("nDCG@10", "R@10", "R@50", "MRR"), 0.0)
            for qi, (cand, (_, _, rel)) in enumerate(zip(ranked[set_name], items, strict=True)):
                if len(cand) == 0:
                    _score([], rel, tot)
                    continue
                sims = np.stack([vecs[int(p)] for p in cand]) @ q[qi]
                dense_rank = np.empty(len(cand), dtype=np.int64)
                dense_rank[np.argsort(-sims, kind="stable")] = np.arange(len(cand))
                fused = 1 / (RRF_K + np.arange(len(cand)) + 1) + 1 / (RRF_K + dense_rank + 1)
                order = np.argsort(-fused, kind="stable")
                _score([ix.names[int(cand[i])] for i in order], rel, tot)
            out[(enc_name, set_name)] = {k: v / max(1, len(items)) for k, v in tot.items()}
    return out


def latency(ix: SearchIndex, queries: list[str], parts, **kw) -> tuple[float, float]:
    ix.search("warm up", parts=parts, **kw)
    ts = []
    for q in queries:
        t0 = time.perf_counter()
        ix.search(q, k=10, parts=parts, **kw)
        ts.append((time.perf_counter() - t0) * 1000)
    ts.sort()
    return statistics.median(ts), ts[int(0.95 * (len(ts) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default="sqlite:///math2.db")
    ap.add_argument("--work", type=Path, default=Path(".math2/bench-retrieval"))
    ap.add_argument("--benchmarks", type=Path, help="miniF2F/ProofNet jsonl (premises set)")
    ap.add_argument(
        "--crosswalk",
        type=Path,
        help="theorem lists (titles set; default: the data sets' crosswalk/, math2.data)",
    )
    ap.add_argument("--mathlib", type=Path, help="Mathlib checkout (main-result aids)")
    ap.add_argument("--devsets", type=Path, default=Path(__file__).parent / "devsets")
    ap.add_argument("--docstrings", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--latency-queries", type=int, default=200)
    ap.add_argument("--aids-weights", type=float, nargs="*", default=[])
    ap.add_argument("--parents-weights", type=float, nargs="*", default=[])
    ap.add_argument(
        "--synonym-weights",
        type=float,
        nargs="*",
        default=[],
        help="weights of the Mathlib words of the query's English to measure",
    )
    ap.add_argument(
        "--translated-weights",
        type=float,
        nargs="*",
        default=[],
        help="with --synonym-weights: weights of the English words they translate",
    )
    ap.add_argument(
        "--shape-weights",
        type=float,
        nargs="*",
        default=[],
        help="weights of the formula-shape part to measure on top of the default path",
    )
    ap.add_argument("--dense", choices=ENCODERS, help="also embed the v4 index with this encoder")
    ap.add_argument("--dense-weights", type=float, nargs="*", default=[])
    ap.add_argument("--compare-encoders", action="store_true")
    ap.add_argument("--rerank-top", type=int, default=30)
    ap.add_argument(
        "--only", nargs="*", default=[], help="only configurations whose label has one of these"
    )
    ap.add_argument("--reuse", action="store_true", help="reuse indexes already under --work")
    ap.add_argument(
        "--levers",
        action="store_true",
        help="issue 33's levers, each alone and together (retrieval_levers.py)",
    )
    ap.add_argument("--namesake-weights", type=float, nargs="*", default=[])
    ap.add_argument("--body-weights", type=float, nargs="*", default=[])
    ap.add_argument("--vocabulary-weights", type=float, nargs="*", default=[])
    args = ap.parse_args()
    if args.crosswalk is None:
        from math2.config import load_settings
        from math2.data import locate

        args.crosswalk = locate(load_settings(), "1000-plus").parent
    clock = RunClock()
    store = Store(args.db)
    doc_items, hidden = docstring_split(args.db, args.docstrings, args.seed)
    with store.session() as s:
        src = s.scalar(select(Source).where(Source.name == "mathlib"))
        all_names = set(
            s.scalars(
                select(Mention.name).where(
                    Mention.source_id == src.id,
                    Mention.status == "active",
                    Mention.allow_completion.is_(True),
                )
            )
        )
    title_dev, held_out = split_lists(lists(args.crosswalk, all_names), args.seed)
    indexes: dict[int | str, SearchIndex] = {}
    # Key 4 (the "v4" of the labels): the index of the current text version (stems and since).
    for key, version in ((3, 3), (4, TEXT_VERSION)):
        folder = args.work / f"v{version}"
        dense = bool(args.dense) and version == TEXT_VERSION  # embedded in the same build
        t0 = time.perf_counter()
        meta = folder / "meta.json"
        whole = meta.exists() and (not dense or json.loads(meta.read_text()).get("dense"))
        if not (args.reuse and whole):
            build_index(
                store, folder, dense=dense, hide_docstrings=hidden, text_version=version,
                progress=lambda m: print(f"  {m}", flush=True), mathlib_dir=args.mathlib,
                hold_out_aids=held_out, encoder=args.dense if dense else None,
            )  # fmt: skip
        took = f"index text v{version}: built in {time.perf_counter() - t0:.0f} s"
        if dense:
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            took += f" with its dense part ({args.dense}); peak RSS of this process {rss:.0f} MiB"
        print(took, flush=True)
        indexes[key] = SearchIndex(folder)
    if args.levers:
        t0 = time.perf_counter()
        indexes |= retrieval_levers.build(
            store, args.work, args.reuse, lambda m: print(m, flush=True),
            hide_docstrings=hidden, mathlib_dir=args.mathlib, hold_out_aids=held_out,
        )  # fmt: skip
        print(f"lever indexes: built in {time.perf_counter() - t0:.0f} s", flush=True)
    names = set(indexes[4].names)
    sets = {"titles": [it for it in title_dev if it[2] & names]}
    sets |= written(args.devsets, names)
    sets["docstrings"] = doc_items
    if args.benchmarks:
        sets["premises"] = premises(args.benchmarks, names)
    decl_kinds = {name: d[0] for name, d in declarations(args.db).items()}
    target_kinds = kinds(sets, args.devsets, names, decl_kinds)
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    print(f"machine: {machine} (shared with other jobs: timings are upper bounds)")
    print(f"full index: {len(indexes[4])} declarations; aids: {indexes[4].meta.get('aids')} "
          f"declarations with titles/main results, {indexes[4].meta.get('parents')} with a "
          f"parent docstring; {len(held_out)} dev targets' list titles held out")  # fmt: skip
    for k, v in sets.items():
        rel = sum(len(r) for _, _, r in v) / max(1, len(v))
        print(f"set {k}: {len(v)} queries, {rel:.2f} relevant each")
    base = "plain BM25 (v3: words + phrases, before issue 24)"
    aw, sw, tw = W_AIDS, W_SYNONYMS, W_TRANSLATED
    # (label, index text version, parts, aids weight, parents weight, Mathlib words weight,
    #  weight of the English words they translate, [dense weight, [shape weight]])
    configs = [
        (base, 3, ("bm25",), 0.0, 0.0, 0.0, 1.0),
        ("+ stems (v4)", 4, ("bm25",), 0.0, 0.0, 0.0, 1.0),
        (f"+ stems + aids {aw} (default before search2)", 4, ("bm25", "aids"), aw, 0.0, 0.0, 1.0),
        (f"+ stems + aids {aw} + Mathlib words {sw}, translated English {tw} (default before "
         "shape)", 4, ("bm25", "aids"), aw, 0.0, sw, tw),
        (f"+ stems + aids {aw} + Mathlib words {sw}, translated English {tw} + shape "
         f"{W_SHAPE} (default without the dense part)", 4, ("bm25", "aids"), aw, 0.0, sw, tw,
         1.0, W_SHAPE),
        ("+ stems + parents 0.1", 4, ("bm25", "parents"), 0.0, 0.1, 0.0, 1.0),
        (f"+ stems + aids {aw} + parents 0.1", 4, ("bm25", "aids", "parents"), aw, 0.1, 0.0, 1.0),
        *((f"+ stems + aids {w}", 4, ("bm25", "aids"), w, 0.0, 0.0, 1.0)
          for w in args.aids_weights),
        *((f"+ stems + parents {w}", 4, ("bm25", "parents"), 0.0, w, 0.0, 1.0)
          for w in args.parents_weights),
        *((f"+ stems + aids {aw} + Mathlib words {w}, translated English {t}", 4,
           ("bm25", "aids"), aw, 0.0, w, t)
          for w in args.synonym_weights for t in args.translated_weights or [tw]),
        *((f"default before shape + shape {w}", 4, ("bm25", "aids"), aw, 0.0, sw, tw, 1.0, w)
          for w in args.shape_weights),
    ]  # fmt: skip
    if args.dense:
        d = f"dense ({args.dense}, HNSW)"
        p = ("bm25", "aids", "parents")
        configs += [
            (f"v{TEXT_VERSION} {d} alone", 4, ("dense",), 0.0, 0.0, 0.0, 1.0),
            (f"v{TEXT_VERSION} default + {d} (default)", 4, (*p, "dense"), aw, W_PARENTS, sw,
             tw, W_DENSE, W_SHAPE),
            *((f"v{TEXT_VERSION} default + {d} weight {w}", 4, (*p, "dense"), aw, W_PARENTS,
               sw, tw, w, W_SHAPE)
              for w in args.dense_weights),
        ]  # fmt: skip
    settings: dict[str, dict] = {}
    if args.levers:
        lever_configs = retrieval_levers.configs(
            args.namesake_weights, args.body_weights, args.vocabulary_weights
        )
        for label, key, lever_kw in lever_configs:
            configs.append((label, int(key) if key.isdigit() else key, ("bm25", "aids"), aw,
                            0.0, sw, tw, 1.0, W_SHAPE))  # fmt: skip
            settings[label] = lever_kw
    configs = [
        c for c in configs if not args.only or any(o in c[0] for o in args.only) or c[0] == base
    ]
    qs = [q for v in sets.values() for _, q, _ in v][
        :: max(1, sum(map(len, sets.values())) // args.latency_queries)
    ]
    print("\n| configuration | set | nDCG@10 | ratio to plain BM25 | R@10 | R@50 | MRR |")
    print("|---|---|---|---|---|---|---|")
    lat = {}
    baseline: dict[str, float] = {}
    per_item: dict[str, Scores] = {}
    for label, version, parts, aids_w, parents_w, syn_w, tr_w, *dw in configs:
        ix = indexes[version]
        ix.aids_weight, ix.parents_weight = aids_w, parents_w
        ix.synonym_weight, ix.translated_weight = syn_w, tr_w
        ix.shape_weight = dw[1] if len(dw) > 1 else 0.0
        for attr, value in {**retrieval_levers.OFF, **settings.get(label, {})}.items():
            setattr(ix, attr, value)  # issue 33's query-side levers: off unless measured
        kw = {"prior_weight": 0.0, **({"dense_weight": dw[0]} if dw else {})}
        per_item[label] = {}
        for name, items in sets.items():
            per_item[label][name] = item_scores(ix, items, parts, **kw)
            m = mean(per_item[label][name])
            baseline.setdefault(name, m["nDCG@10"])
            ratio = m["nDCG@10"] / baseline[name] if baseline[name] else float("nan")
            print(
                f"| {label} | {name} | {m['nDCG@10']:.3f} | {ratio:.2f} | {m['R@10']:.3f} "
                f"| {m['R@50']:.3f} | {m['MRR']:.3f} |",
                flush=True,
            )
        lat[label] = latency(ix, qs, parts, **kw)
    print(f"\n| configuration | p50 ms | p95 ms |  ({len(qs)} queries, one at a time)")
    print("|---|---|---|")
    for label, (p50, p95) in lat.items():
        print(f"| {label} | {p50:.1f} | {p95:.1f} |")
    print("\nPer query style (a set's name less `users-`) and per target kind; sets: new = "
          "users-*, old = the issue-24 sets and titles; held-out mix = nDCG@10 weighted by the "
          "held-out benchmark's kinds (theorem 37 %, structure 20 %, class 15 %, def 14 %, "
          "instance 12 %, inductive 3 %)")  # fmt: skip
    print("| table | configuration | style or kind | sets | n | nDCG@10 (ratio) | R@10 | R@50 "
          "| MRR |\n|---|---|---|---|---|---|---|---|---|")  # fmt: skip
    cell_base: dict = {}
    for label, scores in per_item.items():
        print_breakdowns(label, scores, target_kinds, cell_base)
    default = f"v{TEXT_VERSION}"
    print(
        f"\nThe command line's own call on the default path: Searcher({args.work}).search(q, "
        f"{default!r}, k), no store, names not preloaded; {len(qs)} queries, one at a time"
    )
    print("| k | wall p50 ms | wall p95 ms | CPU p50 ms | CPU p95 ms | CPU mean ms |")
    print("|---|---|---|---|---|---|")
    for k in (10, 100):
        c = cli_latency(args.work, default, qs, k)
        print(f"| {k} | {c['wall p50']:.1f} | {c['wall p95']:.1f} | {c['cpu p50']:.1f} "
              f"| {c['cpu p95']:.1f} | {c['cpu mean']:.1f} |", flush=True)  # fmt: skip
    if args.compare_encoders:
        print(f"\nencoders reordering the v4 BM25 top {args.rerank_top} (full index):")
        res = compare_encoders(store, indexes[4], hidden, sets, args.rerank_top)
        print("| encoder | set | nDCG@10 | R@10 | R@50 | MRR |")
        print("|---|---|---|---|---|---|")
        for (enc, set_name), m in res.items():
            print(f"| {enc} | {set_name} | {m['nDCG@10']:.3f} | {m['R@10']:.3f} "
                  f"| {m['R@50']:.3f} | {m['MRR']:.3f} |")  # fmt: skip
    print(f"\n{clock.summary()}")


if __name__ == "__main__":
    main()
