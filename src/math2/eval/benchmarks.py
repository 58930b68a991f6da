"""The benchmark registry: content-hashed versions, several lineages per name, evaluate-only.

A `BenchmarkVersion` is a name ("minif2f-test"), a lineage ("deepseek-v1.5", "repaired", …),
its items, their Lean header and toolchain, the manifest source it comes from, and a list of
known defects. Its `version_hash` is the SHA-256 of its items in canonical JSON (sorted by name),
so two copies of the same data have one hash and any edit gives a new one; every result names
it. Benchmarks are evaluate-only (intake class `evaluate`, K6.8): `Registry.refuse_training`
raises when a record meant for a training set is a benchmark item or comes from a benchmark.

    reg = shared_registry(folder)        # miniF2F/ProofNet jsonl, FATE-M's json (data set fate-m)
    v = reg.get("minif2f-test")          # by name (the only lineage) or label or hash prefix
    v.version_hash, v.items, v.defects
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from math2.checks.ngrams import normalize
from math2.errors import Math2Error
from math2.eval.loaders import (
    BenchmarkItem,
    load_deepseek_jsonl,
    load_fate_json,
)
from math2.lean.reader import THEOREM_WORDS, NoStatement, read_statement
from math2.sources.intake import IntakeClass

__all__ = [
    "BenchmarkExportRefused",
    "BenchmarkVersion",
    "KnownDefect",
    "Registry",
    "UnknownBenchmark",
    "item_fingerprint",
    "load_registry",
    "shared_registry",
    "structural_defects",
    "version_from_items",
]


class UnknownBenchmark(Math2Error):
    """No registered version matches the name, label or hash given."""


class BenchmarkExportRefused(Math2Error):
    """A benchmark item (or a record from a benchmark source) was about to enter a training set."""


class KnownDefect(BaseModel):
    """A defect of one item of one version (wrong statement, trivial, duplicate, …)."""

    model_config = ConfigDict(frozen=True)

    item: str
    kind: str
    note: str


class BenchmarkVersion(BaseModel):
    """One content-hashed version of a benchmark."""

    model_config = ConfigDict(frozen=True)

    name: str
    lineage: str
    source: str  # the manifest entry (its intake class is `evaluate`)
    items: tuple[BenchmarkItem, ...]
    toolchain: str | None = None
    toolchain_note: str = ""
    licence: str = ""
    provenance: str = ""
    defects: tuple[KnownDefect, ...] = ()
    intake: IntakeClass = IntakeClass.EVALUATE

    @property
    def label(self) -> str:
        return f"{self.name}@{self.lineage}"

    @property
    def version_hash(self) -> str:
        canon = [it.model_dump(mode="json") for it in sorted(self.items, key=lambda i: i.name)]
        blob = json.dumps(canon, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()

    @property
    def short_hash(self) -> str:
        return self.version_hash[:12]

    def item(self, name: str) -> BenchmarkItem:
        for it in self.items:
            if it.name == name:
                return it
        raise UnknownBenchmark(f"{self.label}: no item {name!r}")

    def summary(self) -> dict:
        return {
            "name": self.name,
            "lineage": self.lineage,
            "version_hash": self.version_hash,
            "items": len(self.items),
            "toolchain": self.toolchain,
            "source": self.source,
            "licence": self.licence,
            "defects": len(self.defects),
        }


def item_fingerprint(text: str) -> str:
    """A hash of a text as the decontamination tokenizer sees it (case, punctuation, spacing)."""
    return hashlib.sha256(" ".join(normalize(text).split()).encode()).hexdigest()


def structural_defects(items: Iterable[BenchmarkItem]) -> list[KnownDefect]:
    """Defects found from the data alone: repeated names, duplicate statements, no theorem."""
    out: list[KnownDefect] = []
    seen_inf: dict[str, str] = {}
    seen_for: dict[str, str] = {}
    for it in items:
        fi, ff = item_fingerprint(it.informal), item_fingerprint(it.formal)
        if fi in seen_inf:
            out.append(KnownDefect(item=it.name, kind="duplicate_informal", note=seen_inf[fi]))
        if ff in seen_for:
            out.append(KnownDefect(item=it.name, kind="duplicate_formal", note=seen_for[ff]))
        seen_inf.setdefault(fi, it.name)
        seen_for.setdefault(ff, it.name)
        if it.name_in_source is not None:
            out.append(
                KnownDefect(item=it.name, kind="duplicate_name", note=f"named {it.name_in_source}")
            )
        kind = _target_kind(it.formal)
        if kind not in THEOREM_WORDS:
            first = kind or (it.formal.split(None, 1)[0] if it.formal.split() else "")
            out.append(
                KnownDefect(item=it.name, kind="not_a_theorem", note=f"declared by {first!r}")
            )
    return out


def _target_kind(formal: str) -> str | None:
    """The keyword of the item's target declaration (`math2.lean.reader`), None if none."""
    try:
        return read_statement(formal).keyword
    except NoStatement:
        return None


class Registry:
    """Registered benchmark versions; a name may have several lineages."""

    def __init__(self) -> None:
        self._versions: list[BenchmarkVersion] = []

    def add(self, version: BenchmarkVersion) -> BenchmarkVersion:
        if version.intake is not IntakeClass.EVALUATE:
            raise Math2Error(f"{version.label}: a benchmark's intake class must be 'evaluate'")
        for v in self._versions:
            if v.label == version.label and v.version_hash != version.version_hash:
                raise Math2Error(f"{version.label} is registered with other content")
        if all(v.version_hash != version.version_hash for v in self._versions):
            self._versions.append(version)
        self._index = None
        return version

    def __iter__(self):
        return iter(self._versions)

    def __len__(self) -> int:
        return len(self._versions)

    def names(self) -> list[str]:
        return sorted({v.name for v in self._versions})

    def lineages(self, name: str) -> list[BenchmarkVersion]:
        return [v for v in self._versions if v.name == name]

    def get(self, key: str) -> BenchmarkVersion:
        """By label (`name@lineage`), by name when it has one lineage, or by hash prefix (≥ 8)."""
        by_label = [v for v in self._versions if v.label == key]
        if by_label:
            return by_label[0]
        by_name = self.lineages(key)
        if len(by_name) == 1:
            return by_name[0]
        if len(by_name) > 1:
            labels = ", ".join(v.label for v in by_name)
            raise UnknownBenchmark(f"{key!r} has several lineages ({labels}): name one")
        if len(key) >= 8:
            by_hash = [v for v in self._versions if v.version_hash.startswith(key)]
            if len(by_hash) == 1:
                return by_hash[0]
        known = ", ".join(v.label for v in self._versions) or "none"
        raise UnknownBenchmark(f"no benchmark {key!r} (registered: {known})")

    def sources(self) -> set[str]:
        return {v.source for v in self._versions}

    def _fingerprints(self) -> dict[str, str]:
        if getattr(self, "_index", None) is None:
            idx: dict[str, str] = {}
            for v in self._versions:
                for it in v.items:
                    for text in (it.informal, it.formal):
                        idx.setdefault(item_fingerprint(text), f"{v.label}:{it.name}")
            self._index = idx
        return self._index

    def benchmark_item_of(self, text: str) -> str | None:
        """`label:item` when the text is (up to case, punctuation, spacing) a benchmark text."""
        return self._fingerprints().get(item_fingerprint(text))

    def refuse_training(self, records: Iterable[dict], fields: Iterable[str]) -> None:
        """Raise `BenchmarkExportRefused` if any record is a benchmark item or from one."""
        fields = tuple(fields)
        srcs = self.sources()
        for i, rec in enumerate(records):
            if rec.get("source") in srcs:
                raise BenchmarkExportRefused(
                    f"record {i}: source {rec['source']!r} is a benchmark (evaluate only)"
                )
            for f in fields:
                val = rec.get(f)
                if isinstance(val, str) and (hit := self.benchmark_item_of(val)):
                    raise BenchmarkExportRefused(
                        f"record {i}: field {f!r} is benchmark item {hit} (evaluate only)"
                    )


_DS_NOTE = "not recorded in the data; DeepSeek-Prover-V1.5 built it against its own Mathlib pin"


def shared_registry(folder: str | Path) -> Registry:
    """The benchmarks of a folder (a data folder's benchmarks/, data/README.md): miniF2F and
    ProofNet in DeepSeek-Prover-V1.5's jsonl, FATE-M's json; one version each, those present."""
    folder = Path(folder)
    reg = Registry()
    ds = "deepseek-ai/DeepSeek-Prover-V1.5 datasets/ @2c4ba9119eef74d0d611f494261b2c5bae98c69a"
    for src, fname in (("minif2f", "minif2f.jsonl"), ("proofnet", "proofnet.jsonl")):
        path = folder / fname
        if not path.exists():
            continue
        for split in ("valid", "test"):
            items = load_deepseek_jsonl(path, split=split)
            reg.add(
                BenchmarkVersion(
                    name=f"{src}-{split}",
                    lineage="deepseek-v1.5",
                    source=src,
                    items=tuple(items),
                    toolchain_note=_DS_NOTE,
                    licence="MIT",
                    provenance=f"{ds} {fname} split={split}",
                    defects=tuple(structural_defects(items)),
                )
            )
    fate = folder / "fate_m.json"
    if fate.exists():
        items = load_fate_json(fate)
        chains = sorted({i.toolchain for i in items if i.toolchain})
        reg.add(
            BenchmarkVersion(
                name="fate-m",
                lineage="frenzymath",
                source="fate-m",
                items=tuple(items),
                toolchain=chains[0] if len(chains) == 1 else None,
                toolchain_note="from the items' 'version' field",
                licence="MIT",
                provenance="frenzymath/FATE-M @4eb33c8ccd0ff058b461cd763cc406509129743f",
                defects=tuple(structural_defects(items)),
            )
        )
    return reg


def version_from_items(
    name: str,
    lineage: str,
    items: Iterable[BenchmarkItem],
    source: str | None = None,
    **kw,
) -> BenchmarkVersion:
    """A version from loaded items (a lineage of one's own: repaired, ProofNet#, FATE-X v2, …)."""
    items = tuple(items)
    defects = tuple(kw.pop("defects", ())) or tuple(structural_defects(items))
    return BenchmarkVersion(
        name=name, lineage=lineage, source=source or name, items=items, defects=defects, **kw
    )


def load_registry(folder: str | Path | None, harness: Iterable[str | Path] = ()) -> Registry:
    """The benchmarks of `folder` (`shared_registry`, when it exists) and of each file in
    MathForm's harness format (a version per benchmark name, lineage `harness:<file name>`)."""
    from math2.eval.loaders import load_harness_jsonl

    reg = shared_registry(folder) if folder is not None and Path(folder).exists() else Registry()
    for h in harness:
        for name, items in load_harness_jsonl(h).items():
            reg.add(version_from_items(name.lower(), f"harness:{Path(h).name}", items))
    return reg
