"""Imports into the store: set.mm, the theorem lists, resumability, bad input changes nothing."""

import shutil
from pathlib import Path

import pytest
from sqlalchemy import func, select

from math2.crosswalk.cluster import cluster
from math2.errors import InputError
from math2.importers.common import ImportConflict
from math2.importers.metamath import MetamathError
from math2.importers.setmm import import_setmm
from math2.importers.theorem_lists import (
    import_mathlib_lists,
    import_thousand_plus,
    parse_mathlib_list,
    parse_thousand_plus,
)
from math2.report import build_report
from math2.sources import load_manifest, sync_manifest
from math2.store import Crosswalk, Mention, Node, Run, TextRecord
from tests.conftest import FIXTURES, REPO
from tests.data_conformance import real_data

MANIFEST = load_manifest(REPO / "manifests" / "sources.yaml")
LISTS = FIXTURES / "lists"  # a few entries of each list, written for math2

SMALL_MM = """$( demo $)
$c ( ) -> wff |- $.
$v ph ps $.
wph $f wff ph $.
wps $f wff ps $.
wi $a wff ( ph -> ps ) $.
${
  min $e |- ph $.
  maj $e |- ( ph -> ps ) $.
  $( Modus ponens, the rule of detachment.  (Contributed by NM, 5-Aug-1993.) $)
  ax-mp $a |- ps $.
$}
$( The identity law for implication, proved in one step here.
   (Contributed by NM, 5-Aug-1993.) $)
id $p |- ( ph -> ph ) $= ? $.
"""


@pytest.fixture
def corpus(store):
    with store.session() as s:
        sync_manifest(s, MANIFEST)
    return store


def count(store, model, *where) -> int:
    with store.session() as s:
        q = select(func.count()).select_from(model)
        for w in where:
            q = q.where(w)
        return s.scalar(q)


def test_small_setmm_into_the_store(corpus, tmp_path: Path) -> None:
    f = tmp_path / "set.mm"
    f.write_text(SMALL_MM)
    res = import_setmm(corpus, MANIFEST.get("setmm"), f)
    assert res.counts["mentions"] == 3 and res.counts["texts"] == 2  # wi has no comment
    with corpus.session() as s:
        mp = s.scalar(select(Mention).where(Mention.name == "ax-mp"))
        assert (mp.kind, mp.licence, mp.intake_class, mp.authored) == (
            "axiom",
            "CC0-1.0",
            "open_text",
            "human",
        )
        assert mp.statement == "|- ps"
        assert mp.extra["full_sentence"] is True and mp.extra["hypotheses"] == ["min", "maj"]
        text = s.scalar(select(TextRecord).where(TextRecord.mention_id == mp.id))
        assert text.author_kind == "person" and text.licence == "CC0-1.0"
        assert "ax-mp" in text.attribution and "CC0" in text.attribution
        wi = s.scalar(select(Mention).where(Mention.name == "wi"))
        assert wi.kind == "syntax" and wi.allow_completion is False


def test_rerun_redoes_nothing_and_other_data_at_the_same_pin_is_refused(corpus, tmp_path):
    f = tmp_path / "set.mm"
    f.write_text(SMALL_MM)
    import_setmm(corpus, MANIFEST.get("setmm"), f)
    again = import_setmm(corpus, MANIFEST.get("setmm"), f)
    assert again.skipped_already_done
    assert count(corpus, Mention) == 3
    f.write_text(SMALL_MM + "id2 $p |- ( ph -> ph ) $= ? $.\n")
    with pytest.raises(ImportConflict, match="--force"):
        import_setmm(corpus, MANIFEST.get("setmm"), f)
    assert count(corpus, Mention) == 3


def test_malformed_setmm_leaves_the_store_unchanged(corpus, tmp_path: Path) -> None:
    f = tmp_path / "set.mm"
    f.write_text(SMALL_MM.replace("$( The identity law", "$( The identity law $( oops"))
    with pytest.raises(MetamathError) as info:
        import_setmm(corpus, MANIFEST.get("setmm"), f)
    assert info.value.line == 13
    f.write_text(SMALL_MM.replace("$)\nid $p", "\nid $p"))
    with pytest.raises(MetamathError, match="unterminated comment"):
        import_setmm(corpus, MANIFEST.get("setmm"), f)
    assert count(corpus, Mention) == 0 and count(corpus, Run) == 0


def test_real_setmm_import(corpus) -> None:
    path = Path("/usr/share/metamath/databases/set.mm")
    if not path.exists():
        pytest.skip("Debian's metamath-databases is not installed")
    res = import_setmm(corpus, MANIFEST.get("setmm"), path)
    assert (res.counts["axioms ($a)"], res.counts["theorems ($p)"]) == (2667, 37759)
    assert count(corpus, Mention) == 40426


def _known_entries(entries: list) -> dict:
    """Entries the fixture pages and the real list share, read alike; the entries by key."""
    by_key = {e.key: e for e in entries}
    gl = by_key["wd:Q1008566"]
    assert gl.title == "Gauss–Lucas theorem" and gl.msc == "30"
    assert "wd:Q1067156X" in by_key and by_key["wd:Q1067156X"].wikidata == "Q1067156"
    pyth = by_key["wd:Q11518"]
    mm = next(f for f in pyth.formalizations if f.system == "metamath")
    assert mm.identifiers == ["pythag"] and mm.date == "2015-06-13"
    # dates come as YAML dates, ints and strings
    dates = {type(f.date) for e in entries for f in e.formalizations if f.date}
    assert dates == {str}
    sbth = next(f for f in by_key["wd:Q1033910"].formalizations if f.system == "metamath")
    assert sbth.identifiers == ["sbth"] and sbth.derived
    return by_key


def test_thousand_plus_entries() -> None:
    entries = parse_thousand_plus(LISTS / "1000-plus")
    assert len(entries) == 5
    assert sum(any(f.system == "lean4" for f in e.formalizations) for e in entries) == 4
    assert sum(any(f.system == "metamath" for f in e.formalizations) for e in entries) == 3
    by_key = _known_entries(entries)
    cbs = by_key["wd:Q1033910"].formalizations
    assert next(f for f in cbs if f.system == "metamath").date == "1998"
    mizar = next(f for f in cbs if f.system == "mizar")
    assert mizar.identifiers == ["KNASTER:10"] and mizar.derived


@pytest.mark.data("1000-plus")
def test_the_whole_thousand_plus_list() -> None:
    entries = parse_thousand_plus(real_data("1000-plus"))
    assert len(entries) == 1200
    assert sum(any(f.system == "lean4" for f in e.formalizations) for e in entries) == 226
    assert sum(any(f.system == "metamath" for f in e.formalizations) for e in entries) == 38
    _known_entries(entries)


def test_mathlib_lists_entries() -> None:
    hundred, dups = parse_mathlib_list(LISTS / "mathlib-docs" / "100.yaml")
    assert len(hundred) == 4 and dups == []
    assert sum(1 for e in hundred if any(f.identifiers for f in e.formalizations)) == 3
    q7 = next(e for e in hundred if e.key == "w100:7")
    assert q7.formalizations[0].identifiers == [
        "legendreSym.quadratic_reciprocity",
        "jacobiSym.quadratic_reciprocity",
    ]
    thousand, _ = parse_mathlib_list(LISTS / "mathlib-docs" / "1000.yaml")
    assert len(thousand) == 3
    assert sum(1 for e in thousand if any(f.identifiers for f in e.formalizations)) == 2


@pytest.mark.data("mathlib-docs")
def test_mathlib_lists_whole() -> None:
    docs = real_data("mathlib-docs")
    hundred, dups = parse_mathlib_list(docs / "100.yaml")
    assert len(hundred) == 100 and dups == []
    assert sum(1 for e in hundred if any(f.identifiers for f in e.formalizations)) == 78
    q7 = next(e for e in hundred if e.key == "w100:7")
    assert q7.formalizations[0].identifiers == [
        "legendreSym.quadratic_reciprocity",
        "jacobiSym.quadratic_reciprocity",
    ]
    thousand, _ = parse_mathlib_list(docs / "1000.yaml")
    assert len(thousand) == 1199
    assert sum(1 for e in thousand if any(f.identifiers for f in e.formalizations)) == 210


def test_duplicate_keys_are_reported_and_both_entries_kept(corpus, tmp_path: Path) -> None:
    f = tmp_path / "1000.yaml"
    f.write_text(
        "Q1:\n  title: A\n  decl: a_thm\n  author: X\n\nQ1:\n  title: A again\n"
        "  decls:\n    - b_thm\n  authors: Y\n"
    )
    entries, dups = parse_mathlib_list(f)
    assert [(d.key, d.first_line, d.line) for d in dups] == [("Q1", 1, 6)]
    assert sorted(e.formalizations[0].identifiers[0] for e in entries) == ["a_thm", "b_thm"]
    res = import_mathlib_lists(corpus, MANIFEST.get("mathlib-theorem-lists"), f)
    assert any("duplicate key 'Q1'" in n and "1000.yaml:6" in n for n in res.notes)
    assert count(corpus, Crosswalk) == 2


def test_yaml_tab_error_names_file_and_line_and_changes_nothing(corpus, tmp_path) -> None:
    root = tmp_path / "1000-plus" / "_thm"
    shutil.copytree(LISTS / "1000-plus" / "_thm", root)
    bad = root / "Q11518.md"
    bad.write_text(bad.read_text().replace("  library: L", "\tlibrary: L", 1))
    with pytest.raises(InputError) as info:
        import_thousand_plus(corpus, MANIFEST.get("1000-plus"), root.parent)
    assert info.value.path == str(bad) and info.value.line == 10
    assert count(corpus, Node) == 0 and count(corpus, Crosswalk) == 0


FIXTURE_CROSSWALKS, FIXTURE_NODES = 8, 9  # 5 entries of the 1000+ list, 4 of the 100


def _lists(which: str) -> tuple[Path, Path]:
    if which == "real":
        return real_data("1000-plus"), real_data("mathlib-docs")
    return LISTS / "1000-plus", LISTS / "mathlib-docs"


@pytest.mark.parametrize(
    ("which", "crosswalks", "nodes"),
    [
        ("fixture", FIXTURE_CROSSWALKS, FIXTURE_NODES),
        pytest.param("real", 296, 1302, marks=pytest.mark.data("1000-plus", "mathlib-docs")),
    ],
)
def test_lists_then_clustering_then_report(
    corpus, tmp_path: Path, which: str, crosswalks: int, nodes: int
) -> None:
    thousand_plus, docs = _lists(which)
    f = tmp_path / "set.mm"
    f.write_text(SMALL_MM.replace("id $p", "pythag $p"))
    import_setmm(corpus, MANIFEST.get("setmm"), f)
    import_thousand_plus(corpus, MANIFEST.get("1000-plus"), thousand_plus)
    import_mathlib_lists(corpus, MANIFEST.get("mathlib-theorem-lists"), docs)
    with corpus.session() as s:
        rep = cluster(s)
        assert rep.edges_linked == 1 and rep.mentions_joined == 1
        m = s.scalar(select(Mention).where(Mention.name == "pythag"))
        node = s.get(Node, m.node_id)
        assert node.key == "wd:Q11518" and m.outcome == "node"
        # 1000.yaml's Q11518 joined the same node as the 1000+ entry
        systems = {(c.system, c.source_id) for c in node_crosswalks(s, node.id)}
        assert len({sid for _, sid in systems}) == 2
        again = cluster(s)
        assert again.edges_linked == 0
        report = build_report(s)
    rows = {r.name: r for r in report.sources}
    assert rows["setmm"].nodes == 1 and rows["1000-plus"].crosswalks == crosswalks
    assert report.nodes == nodes


def node_crosswalks(s, node_id):
    return s.scalars(select(Crosswalk).where(Crosswalk.node_id == node_id)).all()
