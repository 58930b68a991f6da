"""Review of branch latex46: how the math2 on PYTHONPATH reads the review's LaTeX probes (the
notations with another usual meaning: big-O, ℤ/nℤ written `\\mathbb{Z}_n`, `Hom(G, H)`, `M[i]`,
`\\mathbb{F}_q`) and what it ranks first for them; and the CPU its reading spends on
adversarial 5,000-character queries (a run of spaces inside `GL(n, …`, which backtracked).

    PYTHONPATH=SRC python benchmarks/latex_probes.py --index STORE/.math2/index/mathlib [--k 3]
    PYTHONPATH=SRC python benchmarks/latex_probes.py --adversarial-only

Imports only what latex46 and later have (`to_lean`, `notion_constants`, `SearchIndex`), so
another checkout's `src` on PYTHONPATH gives that checkout's readings. The probes are math2's
own (the review's), none from the dev sets.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from math2.retrieval.latex import notion_constants, to_lean

PROBES = [
    r"$f = \mathcal{O}(g)$",
    r"$f(n) = \mathcal{O}(n^2)$",
    r"$\mathcal{O}_K$ is a Dedekind domain",
    r"$\mathbb{Z}_n$",
    r"$\mathbb{Z}_6$ is cyclic",
    r"$\mathbb{Z}_p$, the p-adic integers",
    r"$\mathrm{Hom}(G, H)$ for groups",
    r"$V^* = \mathrm{Hom}(V, K)$",
    r"$M[i]$ entry",
    r"$R[x]$ is a principal ideal domain",
    r"$\mathbb{F}_q$",
]
SPACES = " " * 5000
ADVERSARIAL = {
    "GL(n, + 5,000 spaces": f"$GL(n,{SPACES}$",
    "GL n ( + 5,000 spaces": f"$GL n ({SPACES}$",
    "SL(n, + 5,000 spaces": f"$SL(n,{SPACES}$",
    "R[x_1, + 5,000 letters": "$R[x_1," + "a" * 5000 + "$",
    "GL(n, + 2,500 'a '": "$GL(n," + "a " * 2500 + "$",
}


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, help="STORE/.math2/index/mathlib (for the top hits)")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--adversarial-only", action="store_true")
    args = ap.parse_args()
    print(f"load average before {os.getloadavg()}")
    if not args.adversarial_only:
        ix = None
        if args.index is not None:
            from math2.retrieval.index import SearchIndex

            ix = SearchIndex(args.index)
        print("| query | reading | notions named | top hits |\n|---|---|---|---|")
        for q in PROBES:
            top = [h.name for h in ix.search(q, k=args.k)] if ix is not None else []
            print(f"| `{q}` | `{to_lean(q)}` | {notion_constants(q)} | {', '.join(top)} |")
    print("\n| adversarial query | CPU s (to_lean) |\n|---|---|")
    for name, q in ADVERSARIAL.items():
        t0 = _cpu()
        to_lean(q)
        print(f"| {name} | {_cpu() - t0:.3f} |")
    print(f"load average after {os.getloadavg()}")


if __name__ == "__main__":
    main()
