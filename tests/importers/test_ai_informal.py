"""The AI-written informal datasets (K6.4) on fixtures written for math2 in the datasets'
structure (Herald's statements: id, informal and formal statement; FrenzyMath's
mathlib_informal: the name as parts, an informal name and description): joined to the pinned
Mathlib by name, stored as search aids with an unknown model (X08), found by search, and never
a node's text or a declaration's statement."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from sqlalchemy import func, select

from math2.errors import InputError
from math2.importers.ai_informal import declared_name, import_dataset
from math2.importers.mathlib import import_lean_library
from math2.retrieval.index import SearchIndex, build_index
from math2.sources import load_manifest, sync_manifest
from math2.store import AgentText, Mention, Node, SearchAid, TextRecord
from tests.build_helpers import pinned_manifest
from tests.conftest import FIXTURES, REPO

AI = FIXTURES / "ai_informal"
LEANPROJ = FIXTURES / "leanproj"


@pytest.fixture
def manifest(tmp_path: Path):
    pins = {"herald": "rev0", "frenzymath-mathlib-informal": "rev0"}
    return load_manifest(pinned_manifest(tmp_path, pins))


@pytest.fixture
def corpus(sqlite_store, manifest):
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    return sqlite_store


def _count(store, model, *where) -> int:
    with store.session() as s:
        q = select(func.count()).select_from(model)
        for w in where:
            q = q.where(w)
        return s.scalar(q)


def test_mathlib_first(corpus, manifest) -> None:
    with pytest.raises(InputError, match="import mathlib"):
        import_dataset(corpus, manifest.get("herald"), AI / "herald_statements.jsonl")
    assert _count(corpus, SearchAid) == 0


def test_herald_joined_by_the_declared_name(corpus, manifest) -> None:
    import_lean_library(corpus, manifest.get("mathlib"), LEANPROJ)
    with corpus.session() as s:
        before = {m.name: (m.statement, m.docstring) for m in s.scalars(select(Mention))}
    texts = _count(corpus, TextRecord)  # Mathlib's docstrings, Apache text
    res = import_dataset(corpus, manifest.get("herald"), AI / "herald_statements.jsonl")
    assert res.counts == {
        "rows": 6,
        "rows without a readable name": 1,  # an `example`
        "names joined as written": 3,  # add_comm', two_eq and the deprecated alias two_eq_old
        "names joined by a unique suffix": 1,  # `idf_apply` -> Demo.idf_apply
        "names not at the pin (no aid)": 1,
        "aids written": 4,
        "declarations with an aid": 4,
        "completable declarations at the pin": res.counts["completable declarations at the pin"],
    }
    assert any("Demo.gone_since_v4_11" in n for n in res.notes)
    assert any("model: unknown" in n for n in res.notes)
    with corpus.session() as s:
        aids = {
            (m, a.kind, a.model)
            for a, m in s.execute(select(SearchAid, Mention.name).join(Mention))
        }
        assert ("Demo.idf_apply", "informal_statement", "unknown") in aids
        assert ("Demo.two_eq_old", "informal_statement", "unknown") in aids
        # never node text, never a statement or docstring of the declaration
        after = {m.name: (m.statement, m.docstring) for m in s.scalars(select(Mention))}
        assert after == before
    assert _count(corpus, TextRecord) == texts and _count(corpus, AgentText) == 0
    assert _count(corpus, Node, Node.title.contains("frobnication")) == 0
    # the same data again: nothing new
    again = import_dataset(corpus, manifest.get("herald"), AI / "herald_statements.jsonl")
    assert again.skipped_already_done and _count(corpus, SearchAid) == 4
    from math2.report import build_report

    with corpus.session() as s:  # aids, no mentions: not "nothing in the store yet"
        report = build_report(s)
    assert next(r for r in report.sources if r.name == "herald").search_aids == 4
    assert "herald" not in report.empty_sources


def test_mathlib_informal_names_as_parts(corpus, manifest) -> None:
    import_lean_library(corpus, manifest.get("mathlib"), LEANPROJ)
    entry = manifest.get("frenzymath-mathlib-informal")
    res = import_dataset(corpus, entry, AI / "mathlib_informal.jsonl")
    assert res.counts["names joined as written"] == 2
    assert res.counts["names not at the pin (no aid)"] == 1  # Old.removed
    assert res.counts["aids written"] == 3  # an empty description is no aid
    with corpus.session() as s:
        kinds = sorted(
            s.scalars(select(SearchAid.kind).join(Mention).where(Mention.name == "Demo.two_eq"))
        )
    assert kinds == ["informal_description", "informal_name"]


def test_the_aids_are_found_by_search(corpus, manifest, tmp_path: Path) -> None:
    import_lean_library(corpus, manifest.get("mathlib"), LEANPROJ)
    build_index(corpus, tmp_path / "plain", "mathlib")
    hits = SearchIndex(tmp_path / "plain").search("quuxification fact", k=1)
    assert not hits or hits[0].name != "Demo.two_eq"
    entry = manifest.get("frenzymath-mathlib-informal")
    import_dataset(corpus, entry, AI / "mathlib_informal.jsonl")
    build_index(corpus, tmp_path / "aided", "mathlib")
    ix = SearchIndex(tmp_path / "aided")
    assert ix.search("quuxification fact", k=1)[0].name == "Demo.two_eq"
    assert "quuxification" not in ix.snippet(ix.names.index("Demo.two_eq"))
    # a benchmark's held-out declaration gets no aid
    build_index(corpus, tmp_path / "held", "mathlib", hold_out_aids={"Demo.two_eq"})
    hits = SearchIndex(tmp_path / "held").search("quuxification fact", k=1)
    assert not hits or hits[0].name != "Demo.two_eq"


def test_a_model_the_manifest_names(corpus, tmp_path: Path) -> None:
    data = yaml.safe_load((REPO / "manifests" / "sources.yaml").read_text())
    for s in data["sources"]:
        if s["name"] == "herald":
            s.pop("unpinned_reason", None)
            s["pins"] = [{"commit": "rev1"}]
            s["model"] = "example-model-7b"
        if s["name"] == "mathlib-theorem-lists":
            s["model"] = "x"  # only for AI-written datasets
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(InputError, match="model is for AI-written informal datasets"):
        load_manifest(path)
    for s in data["sources"]:
        s.pop("model", None) if s["name"] != "herald" else None
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    manifest = load_manifest(path)
    with corpus.session() as s:
        sync_manifest(s, manifest)
    import_lean_library(corpus, manifest.get("mathlib"), LEANPROJ)
    import_dataset(corpus, manifest.get("herald"), AI / "herald_statements.jsonl")
    with corpus.session() as s:
        assert set(s.scalars(select(SearchAid.model))) == {"example-model-7b"}


def test_declared_name() -> None:
    assert declared_name("theorem Nat.foo (n : ℕ) : n = n := rfl") == "Nat.foo"
    assert declared_name("/-- doc -/\n@[simp] protected lemma «weird name» : True := by sorry") == (
        "weird name"
    )
    assert declared_name("theorem _root_.bar : True := trivial") == "bar"
    assert declared_name("example : True := trivial") is None
    assert declared_name('theorem x : "unterminated') is None


def test_a_parquet_copy(corpus, manifest, tmp_path: Path) -> None:
    """A local copy as parquet (what the build saves from Hugging Face), read a batch at a time."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(ln) for ln in (AI / "herald_statements.jsonl").read_text().splitlines()]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "train.parquet")
    import_lean_library(corpus, manifest.get("mathlib"), LEANPROJ)
    res = import_dataset(corpus, manifest.get("herald"), tmp_path / "train.parquet")
    assert res.counts["rows"] == 6 and res.counts["aids written"] == 4
    (tmp_path / "bad.parquet").write_bytes(b"not parquet")
    with pytest.raises(InputError, match="not a readable parquet file"):
        import_dataset(corpus, manifest.get("herald"), tmp_path / "bad.parquet")
