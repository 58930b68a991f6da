"""The costed plan of docs/scale.md for formalizing N items on a Ray cluster, computed from math2's
own limits rather than copied into the page: the token budgets of the formalize templates (the
upper end of the output tokens), the items the Ray executor keeps in flight per node
(`math2.runs.ray_exec.items_per_node`, from the model endpoints' concurrency and the node's
REPLs) and the published and measured per-call figures below.

    python benchmarks/scale_plan.py [--items 367000] [--nodes 2] [--cores 64]
        [--concurrency 32] [--server-tokens 5000] [--check-s 0.64]

Each end of the range is an item mix: the low end every item kept at MathForm's round mix
(r̄ = 1.42 rounds) with answers as long as the stand-ins `benchmarks/scale_cost.py` measured,
the high end every item using all rounds with every answer at its stage's budget. The wall time
is N over the smallest of three rates: the model servers' (output tokens a second over output
tokens an item), Lean's (the REPLs over the checks an item and Lean's time a check) and the
executor's (by Little's law, the items in flight over the time an item takes).
"""

from __future__ import annotations

import argparse

from math2.lean.pool import PoolConfig
from math2.llm.templates import builtin_dir, load_template_file
from math2.runs.ray_exec import RayOptions, items_per_node

# Measured by benchmarks/scale_cost.py on 300 Mathlib declarations (SmolLM2's tokenizer): mean
# prompt tokens, and answer tokens of the stand-in answers (docs/benchmarks.md).
TOKENS_IN = {"planner": 152, "generate": 360, "judge": 267}
STAND_IN_OUT = {"planner": 65, "generate": 62, "judge": 25}
LATER_ROUND_IN = 160  # the previous attempt and its feedback (an assumption, docs/scale.md)
MEAN_ROUNDS = 1.42  # MathForm: 69 % / 20 % / 11 % of kept items pass in round 1 / 2 / 3
IMPORT_S = 8.0  # `import Mathlib` per REPL, amortised over recycle_after_uses checks


def budgets() -> dict[str, int]:
    """Each formalize stage's token budget, from its template (`max_tokens`)."""
    folder = builtin_dir() / "formalize"
    out = {}
    for stage, name in (("planner", "planner"), ("generate", "generate"), ("judge", "judge")):
        t = load_template_file(folder / f"{name}.toml")
        assert t.max_tokens, f"the {name} template has no token budget"
        out[stage] = t.max_tokens
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=367_000)
    p.add_argument("--nodes", type=int, default=2)
    p.add_argument("--cores", type=int, default=64, help="per node; one REPL per core but one")
    p.add_argument("--rounds", type=int, default=3, help="the loop's max_rounds")
    p.add_argument(
        "--concurrency", type=int, default=32, help="calls at once per model (gen, judge)"
    )
    p.add_argument(
        "--server-tokens",
        type=float,
        default=5000,
        help="output tokens a second the model servers sustain at that concurrency (assumed)",
    )
    p.add_argument("--check-s", type=float, default=0.64, help="Lean's seconds a check")
    a = p.parse_args()

    budget = budgets()
    repls = a.cores - 1
    options = RayOptions(lean=PoolConfig(argv=["repl"], size=repls))
    capacities = {"model:gen": a.concurrency, "model:judge": a.concurrency, "lean": repls}
    per_node = items_per_node(options, capacities, a.nodes)
    in_flight = per_node * a.nodes
    slots = 2 * a.concurrency  # model calls in flight, cluster-wide
    stream_speed = a.server_tokens / slots  # output tokens a second of one call
    check_s = a.check_s + IMPORT_S / options.lean.recycle_after_uses  # type: ignore[union-attr]
    print(
        f"cluster: {a.nodes} nodes × {a.cores} cores, {repls} REPLs each; models gen and judge "
        f"at {a.concurrency} calls each, {a.server_tokens:.0f} output tokens/s together "
        f"({stream_speed:.0f} a call); Lean {check_s:.3f} s a check"
    )
    print(
        f"the executor keeps {per_node} items in flight per node (items_per_node: 2 × "
        f"({repls} REPLs + {slots} model slots / {a.nodes} nodes)), {in_flight} in all\n"
    )
    print(
        "| end | rounds | tokens in / out an item | tokens for N | model items/s "
        "| Lean items/s | executor items/s | wall time | REPLs busy |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for end, r, outs in (
        ("low: kept at MathForm's mix, stand-in answers", MEAN_ROUNDS, STAND_IN_OUT),
        (f"high: {a.rounds} rounds, every answer at its budget", float(a.rounds), budget),
    ):
        tin = TOKENS_IN["planner"] + r * (TOKENS_IN["generate"] + TOKENS_IN["judge"])
        tin += (r - 1) * LATER_ROUND_IN
        tout = outs["planner"] + r * (outs["generate"] + outs["judge"])
        model_s = tout / stream_speed  # an item's time with the models (decode-bound)
        item_s = model_s + r * check_s
        rates = {
            "model": a.server_tokens / tout,
            "lean": a.nodes * repls / (r * check_s),
            "executor": in_flight / item_s,
        }
        rate = min(rates.values())
        wall_h = a.items / rate / 3600
        busy = rate * r * check_s / (a.nodes * repls)
        print(
            f"| {end} | {r:g} | {tin:,.0f} / {tout:,.0f} | {a.items * tin / 1e9:.2f} G in, "
            f"{a.items * tout / 1e9:.2f} G out | {rates['model']:.1f} | {rates['lean']:.1f} "
            f"| {rates['executor']:.1f} | **{wall_h:.1f} h** ({min(rates, key=rates.__getitem__)}"
            f"-bound) | {busy:.0%} |"
        )
    print(
        f"\nbudgets (the templates' max_tokens): planner {budget['planner']}, generate "
        f"{budget['generate']}, judge {budget['judge']}"
    )


if __name__ == "__main__":
    main()
