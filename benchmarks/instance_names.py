"""Generated instance names against the ones Mathlib's own files use.

    python benchmarks/instance_names.py --mathlib /path/to/mathlib4

Scans every file under `Mathlib/` (`lean_source.scan_file`, which names anonymous instances
from their own file), then renames them by the whole-library pass of the Mathlib import
(`instance_names.name_instances`). The reference: every `inst…` identifier (with its namespace
prefix, if written) in `Mathlib/`, `MathlibTest/`, `Archive/` and `Counterexamples/`, less the
names some `instance` declares explicitly. A reference is matched when a generated name equals
it (or, unqualified, equals a generated name's last part). Many references name core or
Batteries instances, which no scan of Mathlib can generate, so the figure to compare is matched
before against matched after, in the same run.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from math2.importers.instance_names import name_instances
from math2.importers.lean_source import lean_files, scan_file
from math2.importers.to_additive import additive_twins

_REF = re.compile(r"(?<![\w.'])((?:[A-Z][\w']*\.)*inst[A-Z][\w'₀-₉]*)")
_EXPLICIT = re.compile(r"instance\s+(?:\(priority\s*:=\s*\w+\)\s*)?(?:[\w']+\.)*(inst[A-Z][\w']*)")


def references(root: Path) -> set[str]:
    refs: set[str] = set()
    explicit: set[str] = set()
    for sub in ("Mathlib", "MathlibTest", "Archive", "Counterexamples"):
        for p in sorted((root / sub).rglob("*.lean")) if (root / sub).is_dir() else []:
            text = p.read_text(encoding="utf-8", errors="replace")
            explicit.update(_EXPLICIT.findall(text))
            refs.update(_REF.findall(text))
    return {r for r in refs if r.rsplit(".", 1)[-1] not in explicit}


def matched(refs: set[str], generated: set[str]) -> set[str]:
    last = {g.rsplit(".", 1)[-1] for g in generated}
    return {r for r in refs if r in generated or ("." not in r and r in last)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mathlib", type=Path, required=True)
    args = ap.parse_args()
    t0 = time.perf_counter()
    files = [scan_file(args.mathlib, p) for p in lean_files(args.mathlib / "Mathlib")]
    print(f"scan: {len(files)} files in {time.perf_counter() - t0:.0f} s")
    before = {d.name for f in files for d in f.declarations if d.generated and d.name}
    t0 = time.perf_counter()
    changed = name_instances(files, [d.name for d in additive_twins(files) if d.name])
    after = {d.name for f in files for d in f.declarations if d.generated and d.name}
    suffixed = sum("_" + "mathlib_" in n for n in after)
    print(f"library pass: {time.perf_counter() - t0:.1f} s; {len(after)} generated names, "
          f"{changed} renamed, {suffixed} with a module suffix")  # fmt: skip
    refs = references(args.mathlib)
    hb, ha = matched(refs, before), matched(refs, after)
    print(f"references not declared by name: {len(refs)}; matched by the file-only names: "
          f"{len(hb)}; by the library pass: {len(ha)}")  # fmt: skip
    print("newly matched:", ", ".join(sorted(ha - hb)))
    print("no longer matched:", ", ".join(sorted(hb - ha)) or "none")


if __name__ == "__main__":
    main()
