"""Issue 45 §4: what the informal part (`retrieval/informal.py`, `desc/`) does to nDCG@10 on the
dev sets, with the informal text a real (tiny) model writes for their targets.

    python benchmarks/informal_part.py --source /tmp/ml45/store --work /tmp/inf45/ip \
        --mathlib /tmp/ml45/mathlib [--targets 40] [--others 40] [--seed 0] [--folds 5] \
        [--minutes 30] [--until names|informalize|review|index|measure]

Every step works on a throwaway copy of the store (`--work`/store, SQLite's backup API; the
source is only read) and is skipped when its output is there, so a killed run goes on:

1. **names**: a seeded sample of `--targets` dev-set answers (`benchmarks/devsets`, those the
   store holds as declarations to informalize: no fields) and `--others` declarations of the
   library that answer no dev-set query, so the part does not hold the targets alone;
2. **informalize**: llama.cpp's server with SmolLM2-135M-Instruct (`LlamaServer`, one thread),
   registered with `math2 models add`, then `math2 informalize --names names.txt` as a user runs
   it (writer, back-translation and NLI the same model, `MATH2_LLM__CONCURRENCY=2`, 48 / 64
   tokens); its CPU (math2 + server) and wall are printed;
3. **review**: a SCRIPTED REVIEW STANDING IN FOR A PERSON, for this measurement only and only in
   the throwaway copy (never in the product path): every text the role's checks accepted is
   confirmed through the review path (`web.review.decide_agent_text`, reviewer
   `informal_part.py (scripted, stands in for a person)`), every other text rejected. Which texts
   were confirmed is printed with their first line, so a reader judges them;
4. **index**: `math2 index build --library mathlib --no-dense` in the copy (the product path: it
   reads the kept texts as the `desc/` part);
5. **measure**: over that one index, every dev-set query, with the informal part and without it
   (the same index with its `descriptions` count read as 0: no `desc/` ranking, the ranker's
   `desc_rank` missing): the learned ranker cross-validated by target on each setting's own
   features (`retrieval_ranker.cross_validated`, as `retrieval_default.py` does) and the fusion;
   nDCG@10 per target kind and query style, the paired difference (± 2 SE), and the cut of the
   queries one of whose answers has a kept text.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

from retrieval_ranker import _cuts, cross_validated, per_query, ranked

MODEL = "smollm2-135m"
REVIEWER = "informal_part.py (scripted, stands in for a person)"
REASON = "benchmark only: the role's checks accepted it; no person read it"


def cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def say(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S', time.gmtime())} UTC, load "
          f"{os.getloadavg()[0]:.1f}] {msg}", flush=True)  # fmt: skip


def copy_store(source: Path, store: Path) -> None:
    store.mkdir(parents=True, exist_ok=True)
    db = store / "math2.db"
    if db.exists():
        return
    src = sqlite3.connect(f"file:{source / 'math2.db'}?mode=ro", uri=True)
    dst = sqlite3.connect(db.with_suffix(".tmp"))
    src.backup(dst)
    dst.close()
    src.close()
    db.with_suffix(".tmp").rename(db)
    say(f"copied {source / 'math2.db'} to {db}")


def pick_names(store: Path, out: Path, targets: int, others: int, seed: int) -> None:
    if out.exists():
        return
    from math2.cli.informalize import devset_answers
    from math2.roles.informalize.select import _informalizable, informalizable_names
    from math2.store import Store
    from math2.store.models import Mention, Source

    st = Store(f"sqlite:///{store / 'math2.db'}")
    answers = list(dict.fromkeys(n for _, n in devset_answers()))
    with st.session() as s:
        known = informalizable_names(s, "mathlib", answers)
        from sqlalchemy import select

        rows = s.scalars(
            select(Mention.name)
            .join(Source, Source.id == Mention.source_id)
            .where(*_informalizable("mathlib"))
        ).all()
    st.close()
    rng = random.Random(seed)
    chosen = rng.sample(sorted(n for n in answers if n in known), targets)
    pool = sorted(set(rows) - set(answers))
    rest = rng.sample(pool, others)
    out.write_text(
        f"# informal_part.py seed {seed}: {targets} dev-set targets of {len(known)}, then "
        f"{others} declarations no dev-set query asks for\n" + "\n".join(chosen + rest) + "\n",
        encoding="utf-8",
    )
    say(f"names: {targets} of {len(known)} informalizable dev-set answers + {others} others")


def informalize(store: Path, names: Path, done: Path, minutes: float) -> None:
    if done.exists():
        print(done.read_text())
        return
    import psutil

    from math2.llm.testing.llama import LlamaServer

    env = {**os.environ, "MATH2_DB_URL": f"sqlite:///{store / 'math2.db'}",
           "MATH2_LLM__CONCURRENCY": "2", "MATH2_LLM__TIMEOUT_S": "300"}  # fmt: skip
    math2 = [sys.executable, "-m", "math2"]
    with LlamaServer(model=MODEL, log_path=store.parent / "llama-server.log") as srv:
        env["MATH2_LLM__BASE_URL"] = srv.base_url
        add = [*math2, "models", "add", MODEL, "--provider", "llama.cpp", "--terms", "Apache-2.0"]
        subprocess.run(add, env=env, cwd=store, check=False, capture_output=True)
        run = [*math2, "informalize", "--model", MODEL, "--translator", MODEL, "--library",
               "mathlib", "--names", str(names), "--max-tokens", "48",
               "--check-max-tokens", "64"]  # fmt: skip
        c0, t0, l0 = cpu_children(), time.perf_counter(), os.getloadavg()[0]
        say("informalize: " + " ".join(run[2:]))
        log = store.parent / "informalize.log"
        with log.open("w") as out:
            proc = subprocess.Popen(run, env=env, cwd=store, stdout=out, stderr=subprocess.STDOUT)
            try:
                proc.wait(timeout=minutes * 60)
            except subprocess.TimeoutExpired:  # the time is up: stop it as a user would (^C)
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                say(f"informalize stopped after {minutes} minutes (the rest of the run waits)")
        wall, cpu = time.perf_counter() - t0, cpu_children() - c0
        assert srv.proc is not None
        top = psutil.Process(srv.proc.pid)
        server = sum(sum(p.cpu_times()[:2]) for p in [top, *top.children(recursive=True)])
    tail = log.read_text(errors="replace").splitlines()
    print("\n".join(tail[-8:]))
    written = written_texts(store)
    line = (
        f"informalize: {wall:.0f} s wall, CPU {cpu:.1f} s math2 + {server:.1f} s "
        f"llama-server; load {l0:.1f} -> {os.getloadavg()[0]:.1f}; exit {proc.returncode}; "
        f"{written} texts written of the {len(names.read_text().splitlines()) - 1} names"
    )
    done.write_text(line + "\n", encoding="utf-8")
    say(line)


def written_texts(store: Path) -> int:
    """How many informal texts with a declaration the store holds."""
    con = sqlite3.connect(store / "math2.db")
    try:
        return int(con.execute("select count(*) from agent_texts where mention_id is not null")
                   .fetchone()[0])  # fmt: skip
    finally:
        con.close()


def review(store: Path, done: Path) -> None:
    """The scripted review standing in for a person (the module's docstring, step 3)."""
    if done.exists():
        print(done.read_text())
        return
    from sqlalchemy import select

    from math2.store import AgentText, Mention, Store
    from math2.store.work import ReviewStatus
    from math2.web.review import Decision, decide_agent_text

    st = Store(f"sqlite:///{store / 'math2.db'}")
    lines, counts = [], {"confirmed": 0, "rejected": 0}
    with st.session() as s:
        rows = s.execute(
            select(AgentText.id, AgentText.extra, AgentText.body, Mention.name)
            .join(Mention, Mention.id == AgentText.mention_id)
            .where(AgentText.status == ReviewStatus.PENDING.value)
            .order_by(AgentText.id)
        ).all()
    for tid, extra, body, name in rows:
        ok = (extra or {}).get("accepted") is True
        with st.session() as s:
            decide_agent_text(s, tid, Decision.CONFIRM if ok else Decision.REJECT, REVIEWER,
                              REASON if ok else "benchmark only: the role's checks did not "
                              "accept it")  # fmt: skip
        counts["confirmed" if ok else "rejected"] += 1
        if ok:
            lines.append(f"  confirmed {name}: {' '.join(body.split())[:160]}")
    st.close()
    text = (
        f"scripted review (stands in for a person): {counts['confirmed']} confirmed (the "
        f"role's checks accepted them), {counts['rejected']} rejected\n" + "\n".join(lines)
    )
    done.write_text(text + "\n", encoding="utf-8")
    say(text)


def build_index(store: Path, mathlib: Path, done: Path) -> None:
    if done.exists():
        print(done.read_text())
        return
    env = {**os.environ, "MATH2_DB_URL": f"sqlite:///{store / 'math2.db'}",
           "MATH2_DATA__MATHLIB_DIR": str(mathlib)}  # fmt: skip
    cmd = [sys.executable, "-m", "math2", "index", "build", "--library", "mathlib", "--no-dense"]
    c0, t0, l0 = cpu_children(), time.perf_counter(), os.getloadavg()[0]
    say("index: " + " ".join(cmd[2:]))
    res = subprocess.run(cmd, env=env, cwd=store, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.exit(f"index build failed: {res.stderr[-3000:]}")
    informal = [ln for ln in res.stderr.splitlines() + res.stdout.splitlines() if "informal" in ln]
    line = (
        f"index build: {time.perf_counter() - t0:.0f} s wall, {cpu_children() - c0:.0f} s "
        f"CPU; load {l0:.1f} -> {os.getloadavg()[0]:.1f}; " + " | ".join(informal[-2:])
    )
    done.write_text(line + "\n", encoding="utf-8")
    say(line)


def measure(folder: Path, folds: int) -> None:
    from math2.retrieval.devsets import devsets_dir, read_devsets
    from math2.retrieval.index import SearchIndex
    from math2.retrieval.informal import InformalNotes
    from math2.retrieval.ranker import MIX, ORDER, query_rows

    t0, c0 = time.perf_counter(), time.process_time()
    base = SearchIndex(folder, use_ranker=False)
    kinds = {n: base.cards[i].kind for i, n in enumerate(base.names)}
    items = read_devsets(devsets_dir(), kinds)
    notes = InformalNotes(folder)
    texted = {n for i, n in enumerate(base.names) if notes[i] is not None}
    say(f"measure: {len(items)} dev-set queries; the informal part holds "
        f"{base.meta.get('descriptions', 0)} declarations; {folds} folds")  # fmt: skip
    configs: dict[str, list[list[str]]] = {}
    for label, off in (("with the informal part", False), ("without it", True)):
        ix = SearchIndex(folder)
        if off:  # read before `desc` is first used (a cached property): no desc/ ranking
            ix.meta["descriptions"] = 0
        data = query_rows(ix, items)
        configs[f"ranker, {label}"] = cross_validated(ix, data, folds)[
            (MIX, ORDER)
        ]  # the shipped mix
        configs[f"fusion, {label}"] = [ranked(ix, d.fused) for d in data]
        say(f"  {label}: done")
    hit = [i for i, it in enumerate(items) if it.answers & texted]
    cuts = {**_cuts(items), "answer has a kept informal text": hit}
    print(f"\nnDCG@10 with (w) and without (w/o) the informal part; Δ = w − w/o, paired, ± 2 SE "
          f"({len(hit)} queries have an answer with a kept informal text):\n")  # fmt: skip
    print("| cut (queries) | ranker w | ranker w/o | ranker Δ | fusion w | fusion w/o | fusion Δ |")
    print("|---|---|---|---|---|---|---|")
    scores = {label: per_query(names, items) for label, names in configs.items()}
    for cut, ix_ in cuts.items():
        if not ix_:
            continue
        cells = []
        for head in ("ranker", "fusion"):
            a, b = scores[f"{head}, with the informal part"], scores[f"{head}, without it"]
            d = [a[i] - b[i] for i in ix_]
            se = statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else float("nan")
            cells += [f"{statistics.mean(a[i] for i in ix_):.3f}",
                      f"{statistics.mean(b[i] for i in ix_):.3f}",
                      f"{statistics.mean(d):+.3f} ± {2 * se:.3f}"]  # fmt: skip
        print(f"| {cut} ({len(ix_)}) | " + " | ".join(cells) + " |")
    w, wo = "with the informal part", "without it"
    for label, names in configs.items():  # how much of the top 10 the texted declarations take
        slots = [
            len(set(n[:10]) & (texted - it.answers)) for n, it in zip(names, items, strict=True)
        ]
        print(f"  {label}: {sum(1 for x in slots if x)} of {len(items)} queries have a "
              f"declaration with a kept text that does not answer them in their top 10 "
              f"({sum(slots)} slots)")  # fmt: skip
    for i in hit:  # the queries the part can touch, one by one
        it = items[i]
        print(f"  {it.style}/{it.kind}: {it.query!r} -> {sorted(it.answers & texted)}: ranker "
              f"{scores[f'ranker, {wo}'][i]:.3f} -> {scores[f'ranker, {w}'][i]:.3f}, fusion "
              f"{scores[f'fusion, {wo}'][i]:.3f} -> {scores[f'fusion, {w}'][i]:.3f}")  # fmt: skip
    print(f"\nmeasure: {time.perf_counter() - t0:.0f} s wall, {time.process_time() - c0:.0f} s "
          f"CPU; load {os.getloadavg()}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, required=True, help="the store's folder (read only)")
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--mathlib", type=Path, required=True)
    ap.add_argument("--targets", type=int, default=40)
    ap.add_argument("--others", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument(
        "--minutes",
        type=float,
        default=30.0,
        help="stop the informalize run after this long (what it wrote is kept)",
    )
    ap.add_argument("--until", choices=("names", "informalize", "review", "index", "measure"),
                    default="measure", help="stop after this step")  # fmt: skip
    args = ap.parse_args()
    store = args.work / "store"
    say(f"informal_part.py {json.dumps({k: str(v) for k, v in vars(args).items()})}")
    copy_store(args.source, store)
    names = args.work / "names.txt"
    pick_names(store, names, args.targets, args.others, args.seed)
    steps = ["names", "informalize", "review", "index", "measure"]
    todo = steps[1 : steps.index(args.until) + 1]
    if "informalize" in todo:
        informalize(store, names, args.work / "informalize.done", args.minutes)
    if "review" in todo:
        review(store, args.work / "review.done")
    if "index" in todo:
        build_index(store, args.mathlib, args.work / "index.done")
    if "measure" in todo:
        measure(store / ".math2" / "index" / "mathlib", args.folds)


if __name__ == "__main__":
    main()
