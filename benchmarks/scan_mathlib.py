"""The Lean source scanner over a real Mathlib checkout: files/s, declarations found, and the
counts set against the numbers K06 publishes.

    python benchmarks/scan_mathlib.py --mathlib /path/to/mathlib4 \
        [--baseline-rev fa5e263] [--lists DATA/crosswalk]

The baseline in the same run is a plain read of every file (the I/O and UTF-8 decoding floor).
With `--baseline-rev`, the scanner as it was at that commit runs too, and both are set side by
side: seconds, declarations found, named, and how many names of Mathlib's `docs/100.yaml`,
`docs/1000.yaml` and the 1000+ theorems project's Mathlib identifiers each finds, and the
declarations one finds and the other does not. With `--check-lexer`, every file is also
tokenized by `math2.lean.lexer.tokenize` and its code tokens set against the scanner's code view
(`math2.lean.syntax.mask`): the files where the two differ are listed (the same lexing).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import yaml

from math2.importers import lean_source
from math2.importers.lean_source import lean_files
from math2.importers.to_additive import additive_twins

K06 = {
    "named theorems and definitions (stats page)": 430_853,
    "constants a user can complete (allowCompletion)": 483_112,
    "all constants": 797_294,
    "constants with a docstring": 115_876,
}


def load_scanner(rev: str):
    """lean_source.py as it was at git revision `rev`, loaded as its own module."""
    code = subprocess.run(
        ["git", "show", f"{rev}:src/math2/importers/lean_source.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "lean_source_baseline.py"
    path.write_text(code)
    spec = importlib.util.spec_from_file_location("lean_source_baseline", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def name_lists(folder: Path) -> dict[str, list[str]]:
    """Declaration names from Mathlib's 100/1000 lists and the 1000+ theorem pages."""

    def decls(data: dict) -> list[str]:
        out = []
        for v in data.values():
            if isinstance(v, dict):
                out += ([v["decl"]] if v.get("decl") else []) + list(v.get("decls") or [])
        return out

    docs = folder / "mathlib-docs"
    lists = {
        f"docs/{n}.yaml": decls(yaml.safe_load((docs / f"{n}.yaml").read_text()))
        for n in ("100", "1000")
    }
    plus = []
    for page in sorted((folder / "1000-plus" / "_thm").glob("*.md")):
        front = yaml.safe_load(page.read_text().split("---")[1]) or {}
        for entry in front.get("lean") or []:
            if entry.get("library") == "L":
                plus += entry.get("identifiers") or []
    lists["1000+ (Mathlib identifiers)"] = plus
    return lists


def scan_all(scanner, root: Path, files: list[Path]):
    """(scanned files, wall seconds, CPU seconds of this process: the fair figure on a shared
    machine)."""
    t0, c0 = time.perf_counter(), time.process_time()
    sfs = [scanner.scan_file(root, p) for p in files]
    return sfs, time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mathlib", type=Path, default=os.environ.get("MATH2_DATA__MATHLIB_DIR"))
    ap.add_argument("--baseline-rev", help="also run the scanner as it was at this commit")
    ap.add_argument(
        "--check-lexer", action="store_true", help="set every file's tokens against its code view"
    )
    ap.add_argument("--lists", type=Path, help="default: the 1000-plus data set's crosswalk/")
    args = ap.parse_args()
    if args.lists is None:
        from math2.config import load_settings
        from math2.data import locate

        args.lists = locate(load_settings(), "1000-plus").parent
    if args.mathlib is None:
        raise SystemExit("give --mathlib DIR (a Mathlib checkout) or MATH2_DATA__MATHLIB_DIR")
    root = args.mathlib
    files = list(lean_files(root / "Mathlib"))
    commit = (
        subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        or "unknown"
    )
    t0 = time.perf_counter()
    size = sum(len(p.read_bytes().decode("utf-8")) for p in files)
    read_s = time.perf_counter() - t0
    sfs, scan_s, scan_cpu = scan_all(lean_source, root, files)
    kinds: Counter[str] = Counter()
    named = doc = dep = to_add = main = stacks = 0
    for f in sfs:
        main += len(f.main_results)
        for d in f.declarations:
            kinds[d.kind] += 1
            named += d.name is not None
            doc += d.docstring is not None
            dep += d.deprecated_since is not None
            stacks += bool(d.stacks)
            to_add += any("to_additive" in a for a in d.attributes)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs (one used), "
        f"Python {platform.python_version()}"
    )
    print(
        f"data: Mathlib checkout at {commit[:12]}, {len(files)} files, {size / 1e6:.1f} M chars\n"
    )
    print("| pass | seconds | files/s |")
    print("|---|---|---|")
    print(f"| read + decode only (baseline) | {read_s:.2f} | {len(files) / read_s:.0f} |")
    print(f"| full scan | {scan_s:.2f} | {len(files) / scan_s:.0f} |")
    print(f"full scan: {scan_cpu:.2f} s of CPU")
    total = sum(kinds.values())
    print(
        f"\ndeclarations: {total} ({named} named); with docstring {doc}; deprecated {dep}; "
        f"with @[stacks] {stacks}; @[to_additive] {to_add}; module-doc main-result names {main}"
    )
    print("by keyword: " + ", ".join(f"{k} {v}" for k, v in kinds.most_common()))
    named_thm_def = sum(v for k, v in kinds.items() if k not in ("example", "instance", "alias"))
    print("\n| K06 count | K06 | scanner | ratio | note |")
    print("|---|---|---|---|---|")
    rows = [
        (
            "named theorems and definitions (stats page)",
            named_thm_def + to_add,
            "written theorems/lemmas/defs/structures… plus one @[to_additive] twin each",
        ),
        (
            "constants a user can complete (allowCompletion)",
            named + to_add,
            "every named declaration plus to_additive twins; no auxiliary or generated lemmas",
        ),
        ("constants with a docstring", doc, "doc comments in the source"),
    ]
    for label, ours, note in rows:
        print(f"| {label} | {K06[label]} | {ours} | {ours / K06[label]:.2f} | {note} |")
    compare(args, root, files, sfs)
    if args.check_lexer:
        check_lexer(files)


def check_lexer(files: list[Path]) -> None:
    """Every file's code tokens against its code view; prints the files where they differ."""
    from math2.lean.lexer import LexError, Tok, tokenize
    from math2.lean.syntax import identifiers, mask

    code_kinds = {Tok.IDENT, Tok.KEYWORD, Tok.SYMBOL, Tok.NUMBER}
    t0, bad = time.perf_counter(), []
    for p in files:
        text = p.read_text(encoding="utf-8")
        try:
            toks = tokenize(text)
        except LexError:
            bad.append(f"{p} (tokenize refuses it)")
            continue
        buf = [" "] * len(text)
        for t in toks:
            if t.kind in code_kinds:
                buf[t.offset : t.offset + len(t.text)] = t.text
        view = "".join(" " if c.isspace() else c for c in mask(text).code)
        names = list(dict.fromkeys(t.text for t in toks if t.kind is Tok.IDENT))
        if view != "".join(buf) or identifiers(text) != names:
            bad.append(str(p))
    print(
        f"\nlexer check: {len(files)} files tokenized in {time.perf_counter() - t0:.0f} s; "
        f"code view = code tokens and identifiers = IDENT tokens in {len(files) - len(bad)}, "
        f"differ in {len(bad)}" + "".join(f"\n  {b}" for b in bad[:20])
    )


def compare(args, root: Path, files: list[Path], current) -> None:
    """The baseline scanner and this one side by side, and the name lists each resolves."""
    runs = {"this scanner": current}
    if args.baseline_rev:
        base, base_s, base_cpu = scan_all(load_scanner(args.baseline_rev), root, files)
        runs[f"scanner at {args.baseline_rev}"] = base
        print(
            f"\nscanner at {args.baseline_rev}, same run: {base_s:.2f} s, {base_cpu:.2f} s of CPU"
        )
        key = lambda d: (d.module, d.name, d.kind, d.line, d.statement)  # noqa: E731
        old = {key(d) for f in base for d in f.declarations}
        new = {key(d) for f in current for d in f.declarations}
        print(
            f"declarations only at {args.baseline_rev}: {len(old - new)}; "
            f"only now: {len(new - old)}"
        )
        for k in sorted(old ^ new, key=str)[:20]:
            print(
                ("  - " if k in old else "  + ")
                + " ".join(str(x) for x in k[:4])
                + f" {k[4][:80]!r}"
            )
    lists = name_lists(args.lists) if args.lists and args.lists.exists() else {}
    cols = [
        "declarations",
        "named",
        "distinct names",
        *(f"{k} ({len(v)})" for k, v in lists.items()),
    ]
    print("\n| scanner | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    twins = additive_twins(current)
    written = {d.name for f in current for d in f.declarations if d.name}
    twins = [d for d in twins if d.name not in written]
    rows = [(label, [d for f in sfs for d in f.declarations]) for label, sfs in runs.items()]
    rows.insert(1, ("this scanner + @[to_additive] twins", rows[0][1] + twins))
    for label, decls in reversed(rows):
        names = {d.name for d in decls if d.name}
        found = [sum(n in names for n in v) for v in lists.values()]
        row = [len(decls), sum(d.name is not None for d in decls), len(names), *found]
        print(f"| {label} | " + " | ".join(str(x) for x in row) + " |")
    if lists:
        names = written | {d.name for d in twins}
        missing = sorted({n for v in lists.values() for n in v if n not in names})
        print(f"\nnot found by this scanner with twins ({len(missing)}): " + ", ".join(missing))


if __name__ == "__main__":
    main()
