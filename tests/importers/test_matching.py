"""Matching datasets enter as candidate pairs, never as edges, until the align role accepts."""

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from math2.crosswalk.cluster import cluster
from math2.errors import InputError
from math2.importers.matching import import_pairs
from math2.report import build_report
from math2.sources import load_manifest, sync_manifest
from math2.store import Crosswalk
from tests.conftest import REPO


@pytest.fixture
def manifest(tmp_path: Path):
    import yaml

    data = yaml.safe_load((REPO / "manifests" / "sources.yaml").read_text())
    for s in data["sources"]:
        if s["name"] in ("stacks-mathlib", "theoremgraph"):
            s.pop("unpinned_reason", None)
            s["pins"] = [{"version": "fixture-1"}]
    path = tmp_path / "sources.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return load_manifest(path)


def test_stacks_pairs_are_candidates(sqlite_store, manifest, tmp_path: Path) -> None:
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    f = tmp_path / "stacks.jsonl"
    f.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"tag": "09HY", "decl": "Algebra.IsSeparable.of_algHom", "score": 0.9},
                {"tag": "030N", "decl": "Field.finSepDegree_eq"},
            ]
        )
        + "\n"
    )
    res = import_pairs(sqlite_store, manifest.get("stacks-mathlib"), f)
    assert res.counts == {"pairs": 2, "candidate rows": 2, "nodes created": 2}
    with sqlite_store.session() as s:
        rows = s.scalars(select(Crosswalk)).all()
        assert {r.status for r in rows} == {"candidate"}
        assert rows[0].extra == {"score": 0.9}
        assert cluster(s).edges_linked == 0
        report = build_report(s)
    stacks = next(r for r in report.sources if r.name == "stacks-mathlib")
    assert (stacks.crosswalks, stacks.crosswalk_candidates) == (0, 2)
    assert report.crosswalks == 0


def test_theoremgraph_csv_and_a_row_missing_a_side(sqlite_store, manifest, tmp_path: Path):
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    f = tmp_path / "pairs.csv"
    f.write_text(
        "statement_id,lean_decl,score\n2401.00001#thm1,Nat.Prime.two_le,0.8\n2401.00002#thm3,,0.5\n"
    )
    with pytest.raises(InputError) as info:
        import_pairs(sqlite_store, manifest.get("theoremgraph"), f)
    assert (info.value.path, info.value.line) == (str(f), 3)
    with sqlite_store.session() as s:
        assert s.scalars(select(Crosswalk)).all() == []


def test_a_jsonl_line_that_is_no_object_names_its_line(sqlite_store, manifest, tmp_path: Path):
    """A pairs file is read by `math2.util.jsonl` like every JSONL input: a line that is JSON
    but no object, or a field over the text limit, is an error at its line, nothing written."""
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    f = tmp_path / "stacks.jsonl"
    f.write_text(json.dumps({"tag": "09HY", "decl": "Nat.Prime.two_le"}) + '\n["030N"]\n')
    with pytest.raises(InputError, match="must be a JSON object") as info:
        import_pairs(sqlite_store, manifest.get("stacks-mathlib"), f)
    assert (info.value.path, info.value.line) == (str(f), 2)
    f.write_text(json.dumps({"tag": "09HY", "decl": "x" * 200_001}) + "\n")
    with pytest.raises(InputError, match="limit") as info:
        import_pairs(sqlite_store, manifest.get("stacks-mathlib"), f)
    assert info.value.line == 1
    with sqlite_store.session() as s:
        assert s.scalars(select(Crosswalk)).all() == []


RELEASE = Path(__file__).parent / "fixtures" / "theoremgraph_release"


def test_theoremgraph_release_tables_join_into_candidates(sqlite_store, manifest, tmp_path):
    """The release's tables (formal, informal, matches) joined by statement id: one candidate per
    match into Mathlib (another project's match is left out), the dataset's judge kept as a
    field of the candidate and never as a verdict; no text copied."""
    from math2.importers.theoremgraph import theoremgraph_rows

    rows = [r for _, r in theoremgraph_rows(RELEASE)]
    assert [(r["statement_id"], r["lean_decl"]) for r in rows] == [
        ("2101.00001#Lemma 2.1", "Nat.add_comm"),
        ("2101.00002#Theorem 1", "Nat.Prime.two_le"),
    ]
    assert len(list(theoremgraph_rows(RELEASE, project=None))) == 3
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    res = import_pairs(sqlite_store, manifest.get("theoremgraph"), RELEASE)
    assert res.counts == {"pairs": 2, "candidate rows": 2, "nodes created": 2}
    with sqlite_store.session() as s:
        got = {
            (c.target, c.status, c.extra["score"], c.extra["dataset_judge"])
            for c in s.scalars(select(Crosswalk))
        }
        assert "align" not in json.dumps([c.extra for c in s.scalars(select(Crosswalk))])
    assert got == {
        ("Nat.add_comm", "candidate", 0.91, "accepted"),
        ("Nat.Prime.two_le", "candidate", 0.84, "rejected"),
    }


def test_theoremgraph_release_with_other_columns_names_the_file(tmp_path):
    from math2.importers.theoremgraph import theoremgraph_rows

    for f in RELEASE.glob("*.csv"):
        (tmp_path / f.name).write_text(f.read_text())
    (tmp_path / "matches.csv").write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match=r"matches\.csv:2: needs one of the columns .*informal_id"):
        list(theoremgraph_rows(tmp_path))
    (tmp_path / "matches.csv").write_text("informal_id,formal_id\nnope,x\n")
    with pytest.raises(InputError, match="informal statement 'nope' is not in"):
        list(theoremgraph_rows(tmp_path))
