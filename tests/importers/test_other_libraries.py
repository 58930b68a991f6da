"""agda-unimath, the AFP and Mizar from our own fixtures; malformed inputs change nothing."""

import shutil
from pathlib import Path

import pytest
import yaml
from sqlalchemy import func, select

from math2.errors import InputError
from math2.importers.afp import import_afp, parse_entry
from math2.importers.agda_unimath import import_agda_unimath, parse_module
from math2.importers.mizar import import_mizar, parse_article
from math2.sources import load_manifest, sync_manifest
from math2.store import Crosswalk, Mention, Node, TextRecord
from tests.conftest import REPO

FIX = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def manifest(tmp_path: Path):
    """The real manifest with pins added to the three unpinned libraries."""
    data = yaml.safe_load((REPO / "manifests" / "sources.yaml").read_text())
    for s in data["sources"]:
        if s["name"] in ("agda-unimath", "afp", "mizar-mml"):
            s.pop("unpinned_reason", None)
            s["pins"] = [{"commit": "fixture0"}]
    path = tmp_path / "sources.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return load_manifest(path)


@pytest.fixture
def corpus(sqlite_store, manifest):
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    return sqlite_store


def n(store, model, *where) -> int:
    with store.session() as s:
        q = select(func.count()).select_from(model)
        for w in where:
            q = q.where(w)
        return s.scalar(q)


def test_agda_module_parse() -> None:
    mod = parse_module(FIX / "agda-unimath/src/foundation/univalence.lagda.md")
    assert mod.module == "foundation.univalence" and mod.title == "The univalence axiom"
    assert [d.name for d in mod.definitions] == [
        "statement-univalence",
        "univalence",
        "funext-univalence",
    ]
    assert mod.definitions[0].section == "The statement of univalence"
    [c] = mod.concepts
    assert (c.label, c.wikidata, c.agda) == ("univalence axiom", "Q7893771", "univalence")
    assert any(sec == "Idea" and "asserts" in text for sec, text in mod.prose)


def test_agda_import(corpus, manifest) -> None:
    res = import_agda_unimath(corpus, manifest.get("agda-unimath"), FIX / "agda-unimath")
    assert res.counts["modules"] == 1 and res.counts["mentions"] == 4
    with corpus.session() as s:
        text = s.scalar(
            select(TextRecord)
            .join(Mention, TextRecord.mention_id == Mention.id)
            .where(Mention.name == "foundation.univalence")
        )
        assert "asserts" in text.body and text.licence == "MIT"
        assert text.body.startswith("The univalence axiom\nasserts")  # macro shown as its label
        assert "MIT License, Copyright (c) 2026" in text.attribution
        edge = s.scalar(select(Crosswalk).where(Crosswalk.system == "agda"))
        assert edge.target == "foundation.univalence.univalence"
        assert s.get(Node, edge.node_id).key == "wd:Q7893771"


def test_agda_unclosed_block_fails_with_line_and_imports_nothing(corpus, manifest, tmp_path):
    root = tmp_path / "agda"
    shutil.copytree(FIX / "agda-unimath", root)
    bad = root / "src/foundation/unclosed.lagda.md"
    (root / "src/foundation/unclosed.lagda.md.bad").rename(bad)
    with pytest.raises(InputError) as info:
        import_agda_unimath(corpus, manifest.get("agda-unimath"), root)
    assert (info.value.path, info.value.line) == (str(bad), 3)
    assert n(corpus, Mention) == 0


def test_afp_entries_licence_per_entry(corpus, manifest) -> None:
    res = import_afp(corpus, manifest.get("afp"), FIX / "afp")
    assert res.counts == {
        "entries": 3,
        "BSD entries": 2,
        "LGPL entries (no text)": 1,
        "entries marked mixed (AI helped)": 1,
        "abstracts taken": 1,
    }
    with corpus.session() as s:
        rows = {m.name: m for m in s.scalars(select(Mention))}
        assert rows["Pythagoras"].intake_class == "open_text"
        assert rows["Pythagoras"].extra["msc"] == ["51"]
        assert rows["Lgpl_Entry"].intake_class == "mentions"
        assert rows["Lgpl_Entry"].licence == "LGPL-2.1-only"
        assert rows["Lgpl_Entry"].extra["msc"] == ["05", "68"]
        assert rows["Ai_Helped"].authored == "mixed"
        texts = s.scalars(select(TextRecord.body)).all()
        assert texts == ["We prove the Pythagorean theorem for Euclidean planes."]


def test_afp_bad_toml_and_licence(tmp_path: Path) -> None:
    f = tmp_path / "X.toml"
    f.write_text('title = "x"\nabstract = "y"\nlicense = \n')
    with pytest.raises(InputError) as info:
        parse_entry(f)
    assert info.value.line == 3
    f.write_text('title = "x"\nabstract = "y"\nlicense = "GPL"\n')
    with pytest.raises(InputError, match="unknown licence") as info:
        parse_entry(f)
    assert info.value.line == 3


def test_mizar_article(corpus, manifest) -> None:
    art = parse_article(FIX / "mizar/mml/xboole_0.miz")
    assert art.name == "XBOOLE_0" and art.title == "Boolean Properties of Sets - Definitions"
    assert art.authors == "Library Committee"
    assert [(t[0], t[1]) for t in art.theorems] == [(1, "Th1"), (2, None)]
    assert art.definitions == [(1, "Def3", 17)]
    res = import_mizar(corpus, manifest.get("mizar-mml"), FIX / "mizar")
    assert res.counts == {"articles": 1, "theorems": 2, "definitions": 1, "mentions": 4}
    assert n(corpus, TextRecord) == 0  # crosswalks only: no text
    with corpus.session() as s:
        assert s.scalar(select(Mention.intake_class).where(Mention.name == "XBOOLE_0:1")) == (
            "crosswalks"
        )


def test_mizar_not_an_article(tmp_path: Path) -> None:
    f = tmp_path / "x.miz"
    f.write_text(":: nothing here\n")
    with pytest.raises(InputError, match="environ"):
        parse_article(f)
