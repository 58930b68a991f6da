"""Statement hygiene on the real benchmarks: what is accepted, what is refused and why, and how
fast.

    python benchmarks/hygiene.py [--data DIR] [--repeat 5] [--store DB]

Every item of the benchmark files in DIR (default: the `fate-m` data set, `math2 data fetch fate-m`;
miniF2F and ProofNet are read when the folder the user names has them) is turned into code the
way `math2 lean check` reads it (header + statement, `sorry` after a trailing `:=`/`:= by`) and
judged by `check_code` in statement mode at the benchmark trust level (their context was written
by people), with the item's expected name where the benchmark gives one; then the fixture sets of
tests/lean/meaning_corpus.py (column-0 continuations, helper lemmas, local notation, a multi-part
item) and the time to refuse a 10 MB item. The same items at the generated level (a model's
block) are counted too, to show what the stricter level refuses.
Prints a markdown table of acceptance per file, every refusal with its rules, the flags raised
at the benchmark level, and the speed (statements per second of CPU time and of wall time, best
and median of --repeat passes).

With `--baseline REV` (default: the merge base with `main`), the same passes are run by the code
of REV (its `src/` extracted to a temporary folder, run in a child process), one pass of each
in turn so both see the same load: acceptance and statements/s of REV beside this tree's.

Without `--store` no library tables are passed (`known_name=None`: the fail-closed paths of
docs/lean.md). With `--store DB` (a math2 store: its database URL, or the path of its SQLite
file) each process reads the tables `math2 lean check` reads with that store
(`math2.services.lean.library_tables`: the store's `lean4` libraries, joined to Lean core's
sources where the pinned toolchain is installed) and passes them to every check; the time to
read them is printed, and the first pass on fresh tables (names not yet looked up in the
store) apart from the passes after it. REV must have `library_tables` then.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from math2.lean.hygiene import ContextTrust, check_code
from math2.lean.library import LibraryTables
from math2.lean.statement import benchmark_code

ROOT = Path(__file__).resolve().parents[1]
BENCH = ContextTrust.BENCHMARK
sys.path.insert(0, str(ROOT))
from tests.lean.meaning_corpus import BENCHMARK_OK, MULTI_PART  # noqa: E402


def load(data: Path) -> list[tuple[str, str, str, str | None]]:
    """(file, item id, code, expected name) for every benchmark item."""
    out = []
    for fname in ("minif2f.jsonl", "proofnet.jsonl"):
        if not (data / fname).exists():
            continue
        for line in (data / fname).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                code = benchmark_code(row.get("header", ""), row["formal_statement"])
                out.append((fname, row["name"], code, row["name"]))
    if (data / "fate_m.json").exists():
        for row in json.loads((data / "fate_m.json").read_text(encoding="utf-8")):
            out.append(("fate_m.json", str(row["id"]), row["formal_statement"], None))
    if not out:
        raise SystemExit(
            f"no benchmark file in {data} (fate_m.json, minif2f.jsonl, proofnet.jsonl)"
        )
    for case, code in BENCHMARK_OK.items():
        out.append(("fixtures", case, code, "foo"))
    return out


Items = list[tuple[str, str, str, str | None]]


def one_pass(items: Items, tables: LibraryTables | None) -> tuple[float, float]:
    """(statements per second of CPU time, of wall time) for one pass at the benchmark level."""
    c0, w0 = time.process_time(), time.perf_counter()
    for _, _, code, name in items:
        check_code(code, name=name, trust=BENCH, known_name=tables)
    return len(items) / (time.process_time() - c0), len(items) / (time.perf_counter() - w0)


def accepted(items: Items, tables: LibraryTables | None) -> dict[str, int]:
    """Items accepted at the benchmark level, per file."""
    out: dict[str, int] = collections.Counter()
    for fname, _, code, name in items:
        out[fname] += check_code(code, name=name, trust=BENCH, known_name=tables).ok
    return dict(out)


def flag_counts(items: Items, tables: LibraryTables | None) -> dict[str, int]:
    """Flags raised at the benchmark level, per rule."""
    out: collections.Counter[str] = collections.Counter()
    for _, _, code, name in items:
        out.update(
            f.rule for f in check_code(code, name=name, trust=BENCH, known_name=tables).flags
        )
    return dict(out)


def read_tables(store: str | None) -> tuple[LibraryTables | None, float, float]:
    """The tables `math2 lean check` reads with the store `store` (None without one), and the
    CPU and wall seconds reading them took."""
    if store is None:
        return None, 0.0, 0.0
    from math2.config import load_settings
    from math2.services.lean import library_tables
    from math2.store import Store

    url = store if "://" in store else f"sqlite:///{Path(store).resolve()}"
    c0, w0 = time.process_time(), time.perf_counter()
    tables = library_tables(load_settings(), Store(url))
    return tables, time.process_time() - c0, time.perf_counter() - w0


def _child(data: Path, store: str | None) -> None:
    """The baseline's side: read commands from stdin (`tables`, `accept`, `flags`, `pass`),
    answer JSON lines."""
    items = load(data)
    tables, cpu_s, wall_s = read_tables(store)
    for line in sys.stdin:
        what = line.strip()
        if what == "tables":
            out: object = [cpu_s, wall_s]
        elif what == "flags":
            out = flag_counts(items, tables)
        else:
            out = accepted(items, tables) if what == "accept" else one_pass(items, tables)
        print(json.dumps(out), flush=True)


class Baseline:
    """The hygiene of another revision, in a child process running its `src/`."""

    def __init__(self, rev: str, data: Path, store: str | None):
        self.dir = tempfile.TemporaryDirectory()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", self.dir.name], input=archive.stdout, check=True)
        env = dict(os.environ, PYTHONPATH=str(Path(self.dir.name) / "src"))
        cmd = [sys.executable, __file__, "--child", "--data", str(data)]
        cmd += ["--store", store] if store else []
        self.proc = subprocess.Popen(
            cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def ask(self, what: str) -> object:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(what + "\n")
        self.proc.stdin.flush()
        if not (line := self.proc.stdout.readline()):  # it ended: its message is above
            raise SystemExit("hygiene: the baseline's side ended without an answer")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self.dir.cleanup()


def _merge_base() -> str:
    out = subprocess.run(
        ["git", "-C", str(ROOT), "merge-base", "HEAD", "main"], capture_output=True, text=True
    )
    return out.stdout.strip() or "HEAD"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--data", type=Path, help="default: the fate-m data set (math2.data)")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--baseline", help="a git revision to compare with (default: merge base)")
    p.add_argument("--no-baseline", action="store_true")
    p.add_argument(
        "--store", help="a math2 store (database URL or SQLite file) whose library tables to pass"
    )
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        _child(args.data.resolve(), args.store)
        return
    if args.data is None:
        from math2.config import load_settings
        from math2.data import locate

        args.data = locate(load_settings(), "fate-m")
    items = load(args.data.resolve())
    rev = None if args.no_baseline else (args.baseline or _merge_base())
    base = Baseline(rev, args.data.resolve(), args.store) if rev else None
    tables, tables_cpu, tables_wall = read_tables(args.store)
    # the first pass on fresh tables (each name not yet looked up in the store), each in turn
    base_first = base.ask("pass") if base is not None else None
    first = one_pass(items, tables)

    per_file: dict[str, list[int]] = {}
    refusals = []
    flags: collections.Counter[str] = collections.Counter()
    for fname, iid, code, name in items:
        report = check_code(code, name=name, trust=BENCH, known_name=tables)
        flags.update(f.rule for f in report.flags)
        acc = per_file.setdefault(fname, [0, 0, 0])
        acc[0] += 1
        acc[2] += check_code(code, name=name, known_name=tables).ok
        if report.ok:
            acc[1] += 1
        else:
            rules = sorted({v.rule for v in report.violations})
            refusals.append((fname, iid, ", ".join(rules), report.violations[0].detail))

    base_accepted = base.ask("accept") if base is not None else {}
    base_flags = base.ask("flags") if base is not None else None
    cpu, wall, base_cpu, base_wall = [], [], [], []
    c_start = time.process_time()
    for _ in range(args.repeat):  # one pass of each in turn: both see the same load
        if base is not None:
            bc, bw = base.ask("pass")  # type: ignore[misc]
            base_cpu.append(bc)
            base_wall.append(bw)
        c, w = one_pass(items, tables)
        cpu.append(c)
        wall.append(w)
    base_tables = base.ask("tables") if base is not None and args.store else None
    if base is not None:
        base.close()

    print(f"Data: {args.data.resolve()} ({len(items)} items)")
    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}\n"
    )
    if tables is None:
        print("Library tables: none (no --store): the fail-closed paths\n")
    else:
        print(
            f"Library tables: store {args.store} ({len(tables.classes):,} classes, "
            f"{len(tables.tokens):,} notation tokens, tokens complete: {tables.tokens_complete}, "
            f"{len(tables.core_types or ()):,} core types), read in {tables_cpu:.1f} s CPU, "
            f"{tables_wall:.1f} s wall"
            + (
                f"; by {rev[:12]} in {base_tables[0]:.1f} s CPU, {base_tables[1]:.1f} s wall"  # type: ignore[index]
                if base_tables is not None and rev is not None
                else ""
            )
            + "\n"
        )
    multi = check_code(MULTI_PART, parts=["foo_part1", "foo_part2"], trust=BENCH, known_name=tables)
    per_file["fixtures: multi-part"] = [1, int(multi.ok), 0]
    big = "import Mathlib\ntheorem foo : True := by sorry\n" + "-- padding\n" * 1_000_000
    t0 = time.perf_counter()
    refused = not check_code(big, name="foo", trust=BENCH, known_name=tables).ok
    big_s = time.perf_counter() - t0
    head = f"accepted at {rev[:12]} (benchmark) | " if base is not None else ""
    print(f"| file | items | {head}accepted (benchmark) | refused | accepted (generated) |")
    print("|---|---|---|---|---|" + ("---|" if base is not None else ""))
    for fname, (n, ok, gen) in per_file.items():
        was = f"{base_accepted.get(fname, '—')} | " if base is not None else ""  # type: ignore[union-attr]
        print(f"| {fname} | {n} | {was}{ok} | {n - ok} | {gen} |")
    print(
        "\nFlags at the benchmark level: "
        + (", ".join(f"{k} {v}" for k, v in sorted(flags.items())) or "none")
        + (
            f" (at {rev[:12]}: "
            + (", ".join(f"{k} {v}" for k, v in sorted(base_flags.items())) or "none")  # type: ignore[union-attr]
            + ")"
            if base_flags is not None and rev is not None
            else ""
        )
    )
    print(f"\n10 MB item refused: {refused}, in {big_s * 1000:.1f} ms")
    print("\n| file | item | rules | first reason |\n|---|---|---|---|")
    for fname, iid, rules, detail in refusals:
        print(f"| {fname} | {iid} | {rules} | {detail.replace('|', '/')} |")
    print(
        f"\nSpeed over {args.repeat} passes of {len(items)} statements: "
        f"CPU best {max(cpu):,.0f}/s, median {statistics.median(cpu):,.0f}/s; "
        f"wall best {max(wall):,.0f}/s, median {statistics.median(wall):,.0f}/s"
    )
    fresh = " (fresh tables: no name looked up yet)" if tables is not None else ""
    print(f"First pass{fresh}: CPU {first[0]:,.0f}/s, wall {first[1]:,.0f}/s")
    if base is not None:
        print(
            f"Baseline {rev[:12]}, the same passes in turn: CPU best {max(base_cpu):,.0f}/s, "
            f"median {statistics.median(base_cpu):,.0f}/s; wall best {max(base_wall):,.0f}/s, "
            f"median {statistics.median(base_wall):,.0f}/s; this tree / baseline (CPU median) "
            f"{statistics.median(cpu) / statistics.median(base_cpu):.2f}; first pass "
            f"CPU {base_first[0]:,.0f}/s, wall {base_first[1]:,.0f}/s"  # type: ignore[index]
        )
    print(
        f"CPU time of this process: {time.process_time() - c_start:.1f} s; "
        f"load average at the end {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    from math2.errors import Math2Error

    try:
        main()
    except Math2Error as exc:  # a store the tables refuse (StaleTables), a missing data set
        sys.exit(f"hygiene: {exc}")
