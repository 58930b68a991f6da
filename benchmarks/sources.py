"""The other systems' importers (issue 37) on real checkouts at their pins: declarations per
system against a count by the system's own convention where one is published, the time each
import takes (wall, the process's CPU time and the load average) against reading the same
files' bytes in the same run (the baseline), and the crosswalk edges each adds once the 1000+
list is imported and the clustering pass has run.

    python benchmarks/sources.py --checkout rocq-stdlib=/path/stdlib \\
        --checkout hol-light=/path/hol-light --checkout hol4=/path/HOL \\
        --checkout naproche=/path/naproche --checkout nasalib=/path/pvslib \\
        [--checkout agda-unimath=/path/agda-unimath] [--stacks /path/mathlib4]
        [--stacks-with-mathlib] [--json out.json]

Each system is imported into a fresh SQLite store (a temporary folder). The checkouts are read
where they are and never copied; each must be at its manifest pin (the importer refuses
another commit).

What each import read and did not (issue 43): its mentions per kind and every form it counted
as not read. `--against SRC` imports each checkout a second time in the same run with another
tree's code (`SRC/src` first on the path: a `git worktree` of an earlier commit), in a child
process, and prints both side by side (mentions, per kind, CPU seconds and their ratio);
`--no-crosswalk` leaves out the 1000+ list and the clustering pass.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from sqlalchemy import func, select

from math2.config import load_settings
from math2.crosswalk.cluster import cluster
from math2.data import locate
from math2.importers.masking import read_source
from math2.importers.registry import load_builtin_importers
from math2.importers.systems import SystemReader
from math2.sources import load_manifest, sync_manifest
from math2.store import Crosswalk, Mention, Source, open_store

READERS = {
    "rocq-stdlib": "math2.importers.rocq",
    "hol-light": "math2.importers.hol_light",
    "hol4": "math2.importers.hol4",
    "naproche": "math2.importers.naproche",
    "nasalib": "math2.importers.nasalib",
    "acl2-books": "math2.importers.acl2",
}  # and agda-unimath, whose importer is older than SystemReader


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def reader_of(name: str) -> SystemReader:
    import importlib

    return importlib.import_module(READERS[name]).READER


def files_of(name: str, root: Path) -> list[Path]:
    """The files the importer of `name` reads."""
    if name == "agda-unimath":
        return sorted(root.glob("**/*.lagda.md"))
    return reader_of(name).files(root)


def baseline(name: str, root: Path) -> tuple[float, float, int]:
    """Read and decode every file the importer reads: (wall s, CPU s, bytes)."""
    w0, c0 = time.perf_counter(), cpu()
    size = 0
    for f in files_of(name, root):
        text, _ = read_source(f)
        size += len(text)
    return time.perf_counter() - w0, cpu() - c0, size


def convention(name: str, root: Path, names: set[str], kinds: Counter[str]) -> str:
    """The system's own count where it publishes one, and how the import compares."""
    if name == "hol-light":
        db = root / "Multivariate" / "complex_database.ml"
        listed = set(re.findall(r'"([^"]+)",\s*[A-Za-z_0-9\']+', db.read_text(errors="replace")))
        found = len(listed & names)
        return (
            f"{len(listed)} names in Multivariate/complex_database.ml (HOL Light's search "
            f"database after Multivariate + complex analysis); {found} of them imported "
            f"({found / len(listed):.1%})"
        )
    if name == "nasalib":
        proved = 0
        for f in (root / "summaries").glob("*.summary"):
            for ln in f.read_text(errors="replace").splitlines():
                m = re.match(r"\s{4}(\S+?)\.{2,}", ln)
                if m and "_TCC" not in m.group(1):
                    proved += 1
        ours = sum(n for k, n in kinds.items() if k not in ("theory", "datatype", "codatatype"))
        return (
            f"{proved} named formulas with a proof in summaries/*.summary (PVS's proveit, "
            f"TCCs left out; the summaries are older than the pin); {ours} named formulas "
            "imported (axioms and assumptions included)"
        )
    return "none published"


def measure(name: str, root: Path, manifest_path: Path, crosswalk: bool = True) -> dict:
    manifest = load_manifest(manifest_path)
    entry = manifest.get(name)
    spec = load_builtin_importers()[name]
    b_wall, b_cpu, size = baseline(name, root)
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(f"sqlite:///{tmp}/m.db", migrate=True, create=True)
        with store.session() as s:
            sync_manifest(s, manifest)
        load0 = os.getloadavg()
        w0, c0 = time.perf_counter(), cpu()
        result = spec.run(store, entry, root)
        wall, cpu_s = time.perf_counter() - w0, cpu() - c0
        load1 = os.getloadavg()
        edges = None
        if crosswalk:
            lists = load_builtin_importers()["1000-plus"]
            # the 1000+ list, an external data set (MATH2_DATA__DIR or `math2 data fetch …`)
            thousand_plus = locate(load_settings(), "1000-plus")
            lists.run(store, manifest.get("1000-plus"), thousand_plus)
        with store.session() as s:
            sid = s.scalar(select(Source.id).where(Source.name == name))
            if crosswalk:
                cluster(s)
                mention_ids = select(Mention.id).where(Mention.source_id == sid)
                edges = s.scalar(
                    select(func.count())
                    .select_from(Crosswalk)
                    .where(Crosswalk.mention_id.in_(mention_ids))
                )
            named = set(s.scalars(select(Mention.name).where(Mention.source_id == sid)))
            kinds = Counter(s.scalars(select(Mention.kind).where(Mention.source_id == sid)))
        store.close()
    return {
        "source": name,
        "files": result.counts.get("files read", result.counts.get("modules")),
        "declarations": result.counts.get("declarations", result.counts.get("mentions")),
        "counts": result.counts,
        "notes": result.notes,
        "bytes": size,
        "baseline_wall_s": round(b_wall, 2),
        "baseline_cpu_s": round(b_cpu, 2),
        "import_wall_s": round(wall, 2),
        "import_cpu_s": round(cpu_s, 2),
        "ratio_cpu": round(cpu_s / b_cpu, 1) if b_cpu else None,
        "load_before": [round(x, 2) for x in load0],
        "load_after": [round(x, 2) for x in load1],
        "crosswalk_edges": edges,
        "convention": convention(name, root, named, kinds),
        "kinds": dict(sorted(kinds.items())),
        "not_read": {
            k.removeprefix("not read: "): n
            for k, n in result.counts.items()
            if k.startswith("not read: ")
        },
    }


def measure_elsewhere(src: Path, spec: str, manifest: Path, crosswalk: bool) -> dict:
    """`measure` of one checkout run by this script in a child process whose `math2` is the
    tree at `src` (an earlier commit's worktree): the figures of that code, in the same run."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "row.json"
        cmd = [sys.executable, __file__, "--checkout", spec, "--manifest", str(manifest)]
        cmd += ["--json", str(out), *([] if crosswalk else ["--no-crosswalk"])]
        env = {**os.environ, "PYTHONPATH": str(src / "src")}
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
        row: dict = json.loads(out.read_text())[0]
    return row


def print_against(pairs: list[tuple[dict, dict]]) -> None:
    """Each source's figures beside the other tree's: mentions, per kind, not read, CPU."""
    print(
        "\n| system | mentions before → now | per kind (before → now) | not read (now) |"
        " import CPU s before / now (ratio) | load 1-min now |"
    )
    print("|---|---|---|---|---|---|")
    for old, new in pairs:
        kinds = sorted(set(old["kinds"]) | set(new["kinds"]))
        per_kind = "; ".join(
            f"{k} {old['kinds'].get(k, 0):,} → {new['kinds'].get(k, 0):,}" for k in kinds
        )
        unread = "; ".join(f"{k} {n:,}" for k, n in new["not_read"].items()) or "-"
        ratio = new["import_cpu_s"] / old["import_cpu_s"] if old["import_cpu_s"] else 0
        print(
            f"| {new['source']} | {old['declarations']:,} → {new['declarations']:,} | "
            f"{per_kind} | {unread} | {old['import_cpu_s']} / {new['import_cpu_s']} "
            f"({ratio:.2f}×) | {new['load_before'][0]} / {new['load_after'][0]} |"
        )


def measure_stacks(root: Path, manifest_path: Path, with_mathlib: bool = False) -> dict:
    """Mathlib's @[stacks] attributes as candidate pairs: scan, write, time. `with_mathlib`:
    Mathlib's source scan imported first (as a build does; its CPU apart), so that anonymous
    instances take the names of its mentions rather than the library being read again."""
    manifest = load_manifest(manifest_path)
    specs = load_builtin_importers()
    spec = specs["stacks-mathlib"]
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(f"sqlite:///{tmp}/m.db", migrate=True, create=True)
        with store.session() as s:
            sync_manifest(s, manifest)
        mathlib_cpu = None
        if with_mathlib:
            c0 = cpu()
            specs["mathlib"].run(store, manifest.get("mathlib"), root)
            mathlib_cpu = round(cpu() - c0, 2)
        load0 = os.getloadavg()
        w0, c0 = time.perf_counter(), cpu()
        result = spec.run(store, manifest.get("stacks-mathlib"), root)
        wall, cpu_s = time.perf_counter() - w0, cpu() - c0
        store.close()
    return {
        "source": "stacks-mathlib",
        "with_mathlib_in_the_store": with_mathlib,
        "mathlib_import_cpu_s": mathlib_cpu,
        "counts": result.counts,
        "import_wall_s": round(wall, 2),
        "import_cpu_s": round(cpu_s, 2),
        "load_before": [round(x, 2) for x in load0],
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkout", action="append", default=[], help="SOURCE=PATH")
    ap.add_argument("--stacks", type=Path, help="a Mathlib checkout at the pin: @[stacks] pairs")
    ap.add_argument(
        "--stacks-with-mathlib",
        action="store_true",
        help="import Mathlib's source scan first (as a build does), then the @[stacks] pairs",
    )
    ap.add_argument("--manifest", type=Path, default=Path("manifests/sources.yaml"))
    ap.add_argument("--json", type=Path)
    ap.add_argument("--against", type=Path, help="another tree (SRC/src): its figures beside")
    ap.add_argument("--no-crosswalk", action="store_true", help="no 1000+ list, no clustering")
    a = ap.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    rows = []
    pairs = []
    for spec in a.checkout:
        name, _, path = spec.partition("=")
        if a.against:
            before = measure_elsewhere(a.against, spec, a.manifest, not a.no_crosswalk)
            print(json.dumps({"against": str(a.against), **before}, indent=1))
        row = measure(name, Path(path), a.manifest, crosswalk=not a.no_crosswalk)
        rows.append(row)
        print(json.dumps(row, indent=1))
        if a.against:
            pairs.append((before, row))
    print(
        "\n| system | files | declarations | import wall s | CPU s | baseline CPU s | ratio |"
        " load 1-min before/after | crosswalk edges | own convention |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in (r for r in rows if r["source"] != "stacks-mathlib"):
        print(
            f"| {r['source']} | {r['files']} | {r['declarations']} | {r['import_wall_s']} | "
            f"{r['import_cpu_s']} | {r['baseline_cpu_s']} | {r['ratio_cpu']}x | "
            f"{r['load_before'][0]} / {r['load_after'][0]} | {r['crosswalk_edges']} | "
            f"{r['convention']} |"
        )
    if pairs:
        print_against(pairs)
    if a.stacks:
        st = measure_stacks(a.stacks, a.manifest, with_mathlib=a.stacks_with_mathlib)
        rows.append(st)
        print(json.dumps(st, indent=1))
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
