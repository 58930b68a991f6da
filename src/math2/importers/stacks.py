"""The Stacks-to-Mathlib alignment (K6.7 step 3) from Mathlib's own `@[stacks TAG "…"]`
attributes: each (Stacks tag, Mathlib declaration) pair of the Mathlib checkout at the pin is a
candidate crosswalk row of the node `stacks:TAG` (`matching.write_pairs`), judged by the align
role like any other candidate; the attribute's comment is not copied.

The checkout is the one the build uses for Mathlib: `data.stacks_dir` or `data.mathlib_dir`,
else the checkout `math2 build` fetched at Mathlib's pin (so the source's pin is Mathlib's).
Only the files that mention `stacks` are scanned, with the same lexical scanner as Mathlib's
source scan (`lean_source.scan_file`). A folder of pairs (`.jsonl`/`.csv`/`.parquet`: tag,
decl) is read as a dataset, as before this route.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from math2.importers.common import skip_if_done
from math2.importers.matching import Pair, import_pairs, write_pairs
from math2.importers.registry import ImporterSpec, ImportResult, register
from math2.sources.manifest import SourceEntry
from math2.store import Store

if TYPE_CHECKING:
    from math2.config import Settings
    from math2.importers.lean_source import SourceFile

SOURCE = "stacks-mathlib"


# The names the Mathlib import gave anonymous instances: (module, line) of each instance asked
# for -> its name, for those it has (`mathlib_instance_names`).
KnownNames = Callable[[list[tuple[str, int]]], dict[tuple[str, int], str]]


def stacks_pairs(root: Path, known: KnownNames | None = None) -> tuple[list[Pair], int, int]:
    """(pairs, files scanned, tags whose declaration was not found) of a Mathlib checkout:
    `@[stacks TAG]` on a declaration and `attribute [stacks TAG] name …` after it. An
    anonymous instance is named as the Mathlib import names it: by `known` (the Mathlib
    import's mentions at this commit, by module and line) where it has every such instance,
    else by `instance_names` with the whole library (its classes are in other files)."""
    from math2.importers.lean_source import lean_files, scan_file

    base = root / "Mathlib" if (root / "Mathlib").is_dir() else root
    files: list[tuple[Path, SourceFile, str]] = []
    for path in lean_files(base):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "stacks" in text:
            files.append((path, scan_file(root, path), text))
    anonymous = [(f, d) for _, f, _ in files for d in f.declarations if d.generated and d.stacks]
    if anonymous:
        where = [(f.module, d.line) for f, d in anonymous]
        names = known(where) if known is not None else {}
        if all(w in names for w in where):  # the Mathlib import's names: no library re-read
            for (_, d), w in zip(anonymous, where, strict=True):
                d.name = names[w]
        else:
            _name_instances(root, base, {p: f for p, f, _ in files})
    pairs: list[Pair] = []
    missing = 0
    for path, f, text in files:
        for d in f.declarations:
            if d.name is None:
                missing += len(d.stacks)
                continue
            for tag in dict.fromkeys(d.stacks):
                pairs.append((tag, d.name, {"module": d.module, "line": d.line}))
        for tags, written, line in _attribute_commands(path, text):
            name, how = _resolve(written, f, line)
            if name is None:
                missing += len(tags)
                continue
            extra = {"module": f.module, "line": line, "by": "attribute"}
            if how:
                extra["name_from"] = how
            pairs += [(tag, name, dict(extra)) for tag in tags]
    return pairs, len(files), missing


def _name_instances(root: Path, base: Path, scanned: dict[Path, SourceFile]) -> None:
    """Anonymous instances of the scanned files renamed as `importers.mathlib.read_checkout`
    does: every file of the library read (its classes, names and notation), with the
    `@[to_additive]` twins' names."""
    from math2.importers.instance_names import name_instances
    from math2.importers.lean_source import lean_files, scan_file
    from math2.importers.to_additive import additive_twins

    every = [scanned.get(p) or scan_file(root, p) for p in lean_files(base)]
    twins = (d.name for d in additive_twins(every) if d.name)
    name_instances(every, twins, only={f.path for f in scanned.values()})


def mathlib_instance_names(store: Store, commit: str | None) -> KnownNames:
    """`KnownNames` from the store: the instances of the Mathlib source scan imported at
    `commit` (a mention of kind `instance` whose `extra.line` is its line; the compiler's
    parquet route records no line, and gives nothing here)."""

    def known(where: list[tuple[str, int]]) -> dict[tuple[str, int], str]:
        from sqlalchemy import select

        from math2.store.models import Mention, Pin, Source

        if commit is None:
            return {}
        wanted = set(where)
        q = (
            select(Mention.module, Mention.name, Mention.extra)
            .join(Source, Mention.source_id == Source.id)
            .join(Pin, Mention.pin_id == Pin.id)
            .where(Source.name == "mathlib", Pin.commit == commit, Mention.kind == "instance")
            .where(Mention.module.in_(sorted({m for m, _ in wanted})))
        )
        out: dict[tuple[str, int], str] = {}
        with store.session() as s:
            for module, name, extra in s.execute(q):
                key = (str(module), (extra or {}).get("line"))
                if key in wanted:
                    out[key] = name
        return out

    return known


_ATTRIBUTE = re.compile(r"^[ \t]*attribute\s*\[(?P<body>[^\]]*)\]\s*(?P<names>[^\n]*)", re.M)
_TAGS = re.compile(r"(?<![\w.])stacks\s+([0-9A-Z]{4})")


def _attribute_commands(path: Path, text: str) -> list[tuple[list[str], str, int]]:
    """(tags, name as written, line) of each `attribute [stacks TAG …] name …` of a file,
    read from the lexer's code view (comments and strings blanked)."""
    from math2.importers.lean_source import blank

    code, _ = blank(text, path)
    out = []
    for m in _ATTRIBUTE.finditer(code):
        tags = list(dict.fromkeys(_TAGS.findall(m.group("body"))))
        if not tags:
            continue
        line = code.count("\n", 0, m.start()) + 1
        out += [(tags, n.strip("«»"), line) for n in m.group("names").split()]
    return out


def _resolve(written: str, f: SourceFile, line: int) -> tuple[str | None, str | None]:
    """The declaration an attribute names, and how it was found when not declared in the file:
    by its full name, else the last declaration before the attribute whose name ends with
    `.written` (the namespace it is in), else — a name the file does not write out, such as
    `quasiFinite_iff` that `@[mk_iff]` makes — `written` in the namespace of the declaration
    just before (not a field of one; `name_from`: "namespace")."""
    written = written.removeprefix("_root_.")
    names = [(d.line, d.name) for d in f.declarations if d.name]
    if any(n == written for _, n in names):
        return written, None
    before = [n for at, n in names if at < line]
    ends = [n for n in before if n.endswith(f".{written}")]
    if ends:
        return ends[-1], None
    declared = {n for _, n in names}
    # the declaration just before, not a field or constructor of one (whose parent is declared)
    outer = [n for n in before if n.rpartition(".")[0] not in declared]
    if not outer:
        return None, None
    space = outer[-1].rpartition(".")[0]
    return (f"{space}.{written}" if space else written), "namespace"


def _is_checkout(path: Path) -> bool:
    return (path / "Mathlib").is_dir() or any(path.glob("*.lean"))


def import_stacks(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """The `@[stacks]` pairs of a Mathlib checkout at the pin (or a folder of pairs)."""
    if not _is_checkout(path):
        return import_pairs(store, entry, path)
    from math2.importers.systems import checkout_commit
    from math2.util.files import file_digest

    commit = checkout_commit(path, entry)  # refused when not at the pin
    base = path / "Mathlib" if (path / "Mathlib").is_dir() else path
    digest = f"git:{commit}" if commit else file_digest(base)
    if (done := skip_if_done(store, entry, path, digest)) is not None:
        return done
    at = commit or (entry.current_pin.commit if entry.current_pin else None)  # Mathlib's pin
    pairs, scanned, missing = stacks_pairs(path, mathlib_instance_names(store, at))
    result = write_pairs(store, entry, path, digest, pairs, commit=commit)
    result.counts = {
        **result.counts,
        "files scanned": scanned,
        "tags whose declaration was not found": missing,
    }
    result.notes = [f"read Mathlib's @[stacks] attributes at commit {commit or 'unknown'}"]
    return result


def locate(settings: Settings) -> tuple[Path | None, str]:
    """`data.stacks_dir`, `data.mathlib_dir`, else the Mathlib checkout fetched at the pin;
    with the folder, which of them it is."""
    for field in ("stacks_dir", "mathlib_dir"):
        d = getattr(settings.data, field)
        if d and Path(d).is_dir():  # found: the second part says where it came from
            return Path(d), f"a local copy: MATH2_DATA__{field.upper()}"
    from math2.importers.fetch import cached_checkout
    from math2.sources import ManifestError, load_manifest

    try:
        pin = load_manifest(settings.manifest).get(SOURCE).current_pin
    except (ManifestError, OSError, KeyError):
        pin = None
    if pin is not None and pin.commit:
        done = cached_checkout(Path(settings.data.cache_dir), "mathlib", pin.commit)
        if done is not None:
            return done, f"Mathlib's checkout fetched at pin {pin.commit[:12]} by a build"
    return None, (
        "no Mathlib checkout at the pin to read @[stacks] from: set MATH2_DATA__MATHLIB_DIR, or "
        "let `math2 build` fetch Mathlib"
    )


register(ImporterSpec(SOURCE, locate, import_stacks, data_field="mathlib_dir"))
