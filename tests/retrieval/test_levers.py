"""Issue 33's search levers on a fixture written for math2 (`tests/fixtures/leanlevers`): a def
found by its body, a structure by a field, a concept above its API, a notation query, a renamed
name, a quoted name part, and the instance-name and guillemet rules on Lean's own examples."""

from pathlib import Path

import pytest
from sqlalchemy import select

from math2.importers.lean_namegen import instance_name
from math2.importers.lean_names import lean_name
from math2.importers.lean_source import scan_file
from math2.importers.mathlib import import_lean_library
from math2.retrieval.index import SearchIndex, build_index
from math2.retrieval.names import name_keys, query_keys
from math2.retrieval.notation import NotationTable, latex_notation
from math2.retrieval.text import LEVERS, TEXT_VERSION, stem, tokens
from math2.retrieval.vocabulary import Vocabulary, mine
from math2.sources import load_manifest, sync_manifest
from math2.store import Mention
from tests.conftest import REPO

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "leanlevers"
FILE = FIX / "Mathlib" / "Levers" / "Basic.lean"


def _import(store) -> None:
    manifest = load_manifest(REPO / "manifests" / "sources.yaml")
    with store.session() as s:
        sync_manifest(s, manifest)
    import_lean_library(store, manifest.get("mathlib"), FIX)


def _index(store, folder: Path, levers=LEVERS, **kw) -> SearchIndex:
    build_index(store, folder, dense=False, mathlib_dir=FIX, levers=frozenset(levers))
    return SearchIndex(folder, **kw)


def _names(ix: SearchIndex, query: str, k: int = 10) -> list[str]:
    return [h.name for h in ix.search(query, k=k)]


@pytest.fixture
def store(sqlite_store):
    _import(sqlite_store)
    return sqlite_store


def test_the_scan_records_what_definitions_say() -> None:
    f = scan_file(FIX, FILE)
    d = {x.name: x for x in f.declarations if x.name}
    assert d["Demo.Recurs"].statement == "(f : ℕ → ℕ) (c : ℕ) : Prop"
    assert d["Demo.Recurs"].body == ["∀ x, f (x + c) = f x"]
    assert d["Demo.Merger"].body == [
        "merge : α → α → α",
        "merge_swap : ∀ a b, merge a b = merge b a",
    ]
    assert d["Demo.Settles"].body[1] == "settle_settle : ∀ a, settle (settle a) = settle a"
    assert d["Demo.Paint"].body == ["plain : Paint", "mix (a b : Paint) : Paint"]
    assert d["Demo.stillSet"].body == ["{x | f x = x}"]
    assert d["Demo.Recurs.comp"].body == []  # a theorem's proof is not what it says
    [n] = f.notations
    assert (n.kind, n.atoms, n.constants, n.namespace) == ("prefix", ("𝔉",), ("stillSet",), "Demo")
    assert n.leading_atom and not n.local


def test_a_def_is_found_by_its_body_in_the_index_only(store, tmp_path: Path) -> None:
    query = "∀ x, f (x + c) = f x"
    with_body = _index(store, tmp_path / "v9")
    assert _names(with_body, query)[0] == "Demo.Recurs"
    without = _index(store, tmp_path / "plain", levers=())
    assert "Demo.Recurs" not in _names(without, query)[:1]
    # never node text: the mention keeps its signature, the body is an index-only record
    with store.session() as s:
        m = s.scalar(select(Mention).where(Mention.name == "Demo.Recurs"))
        assert m.statement == "(f : ℕ → ℕ) (c : ℕ) : Prop"
        assert m.extra["body"] == ["∀ x, f (x + c) = f x"]
    assert with_body.snippet(with_body.names.index("Demo.Recurs")).startswith("(f : ℕ → ℕ)")


def test_a_store_imported_before_bodies_were_recorded_says_so(store, tmp_path: Path) -> None:
    said: list[str] = []
    build_index(store, tmp_path / "v9", dense=False, mathlib_dir=FIX, progress=said.append)
    assert not any("recorded body" in m for m in said)  # this import recorded them
    with store.session() as s:
        for m in s.scalars(select(Mention).where(Mention.extra.is_not(None))):
            m.extra = {k: v for k, v in m.extra.items() if k != "body"}
        s.commit()
    said.clear()
    build_index(store, tmp_path / "v9", dense=False, mathlib_dir=FIX, progress=said.append)
    assert any("no definition has a recorded body" in m for m in said)
    said.clear()
    build_index(store, tmp_path / "v8", dense=False, text_version=8, progress=said.append)
    assert not any("recorded body" in m for m in said)  # v8 indexes no body: nothing to say


def test_a_structure_by_a_field_a_class_by_its_law_an_inductive_by_a_constructor(
    store, tmp_path: Path
) -> None:
    ix = _index(store, tmp_path / "v9")
    plain = _index(store, tmp_path / "plain", levers=())
    for query, target in (
        ("merge a b = merge b a", "Demo.Merger"),
        ("settle (settle a) = settle a", "Demo.Settles"),
        ("mix", "Demo.Paint"),
    ):
        assert target in _names(ix, query, 3), query
        assert target not in _names(plain, query, 3), query


def test_a_concept_ranks_above_its_api(store, tmp_path: Path) -> None:
    ix = _index(store, tmp_path / "v9")
    hits = _names(ix, "recurs")
    assert hits[0] == "Demo.Recurs"
    # the namespace's API stays reachable right below it
    assert {"Demo.Recurs.comp", "Demo.Recurs.double", "Demo.Recurs.nsmul"} <= set(hits[1:6])
    off = SearchIndex(tmp_path / "v9", namesake_weight=0.0)
    assert _names(off, "recurs")[0] != "Demo.Recurs"  # its own API outranks it without the prior


def test_a_notation_query_reaches_its_constant(store, tmp_path: Path) -> None:
    ix = _index(store, tmp_path / "v9")
    assert ix.levers.notation is not None
    assert ix.levers.notation.symbols == {"𝔉": ["Demo.stillSet"]}  # read from the library
    assert _names(ix, "𝔉 f")[0] == "Demo.stillSet"
    # the lemma written with the symbol is found by the constant's name, and the other way
    assert _names(ix, "x ∈ Demo.stillSet f ↔ f x = x")[0] == "Demo.mem_stillSet_iff"
    plain = _index(store, tmp_path / "plain", levers=())
    assert _names(plain, "𝔉 f")[:1] != ["Demo.stillSet"]


def test_latex_maps_onto_the_same_table() -> None:
    table = NotationTable({"𝒫": ["Set.powerset"], "ℵ₀": ["Cardinal.aleph0"]})
    for latex, symbol in ((r"\mathcal{P}(S)", "𝒫"), (r"\aleph_0 < c", "ℵ₀")):
        assert latex_notation(latex) == symbol
        toks = table.tokens(latex_notation(latex), lambda t: tokens(t, True, True))
        assert symbol in toks
    assert "set.powerset" in table.tokens("𝒫 s", lambda t: tokens(t, True, True))
    assert latex_notation(r"\overline{A}") == "closure"
    assert latex_notation("f'(x) > 0") == "deriv"
    assert latex_notation(r"f^{(n)}(0)") == "iteratedDeriv"
    assert latex_notation(r"\zeta_n^k = 1") == "IsPrimitiveRoot"
    assert latex_notation("s' ⊆ s") == ""  # a primed Lean variable is no derivative


def test_an_old_name_finds_its_successor(store, tmp_path: Path) -> None:
    ix = _index(store, tmp_path / "v9")
    [hit] = ix.search("add_swap_old", k=1)
    assert (hit.name, hit.renamed_from) == ("Demo.add_swap_new", "Demo.add_swap_old")
    assert all(h.name != "Demo.add_swap_old" for h in ix.search("add swap", k=10))
    kept = SearchIndex(tmp_path / "v9", renames=False)
    assert kept.search("add_swap_old", k=1)[0].name == "Demo.add_swap_old"


def test_names_with_or_without_guillemets(store, tmp_path: Path) -> None:
    ix = _index(store, tmp_path / "v9")
    assert _names(ix, "Demo.end")[0] == "Demo.«end»"
    assert _names(ix, "Demo.«end»")[0] == "Demo.«end»"
    # Lean's own quoted names: `end` is a keyword, so Lean writes `Lean.Parser.Command.«end»`
    # (its parser's command kinds); a user writes it with or without the quotes
    assert lean_name("Lean.Parser.Command.«end»") == "Lean.Parser.Command.«end»"
    assert lean_name("Foo.«bar»") == "Foo.bar"  # quotes Lean would not print are dropped
    keys = set(name_keys("Lean.Parser.Command.«end»"))
    assert keys & set(query_keys("Lean.Parser.Command.end"))
    assert keys & set(query_keys("Lean.Parser.Command.«end»"))


@pytest.mark.parametrize(
    ("statement", "namespace", "notation", "name"),
    [
        # Lean's Prelude: `instInhabitedSort`, `instInhabitedForall` (the binder's class was met
        # already in the type, so no `Of…`), as its compiled symbols name them
        (": Inhabited (Sort u)", [], None, "instInhabitedSort"),
        ("(α : Sort u) {β : Sort v} [Inhabited β] : Inhabited (α → β)", [], None,
         "instInhabitedForall"),
        # Batteries' `#instances` test: a one-letter class is still a constant
        (": A Nat", ["Testing"], None, "instANat"),
        (": A α", ["Testing"], None, "instA"),
        # Lean names from the elaborated type, where notation is gone: Mathlib refers to
        # `WittVector.instCommRing` and `SchwartzMap.instLineDeriv`, whose statements are
        # written with `𝕎` and `𝓢(E, F)` (the scan gave `instCommRing𝕎`)
        (": CommRing (𝕎 R)", ["WittVector"], {"𝕎": "WittVector"}, "instCommRing"),
        (": LineDeriv E 𝓢(E, F) 𝓢(E, F)", ["SchwartzMap"], {"𝓢(": "SchwartzMap"},
         "instLineDeriv"),
    ],
)  # fmt: skip
def test_instance_names_on_lean_examples(statement, namespace, notation, name) -> None:
    assert instance_name(statement, namespace, None, notation)[0] == name


def test_vocabulary_pairs_prose_with_name_words() -> None:
    names = ["mem_nhds", "nhds_basis", "nhds_le", "Nat.succ_le", "Set.image_id"]
    docs = [
        "A set in the neighborhood filter of a point.",
        "The neighborhoods of a point have a basis.",
        "Every neighborhood is smaller.",
        "The successor is larger.",
        "The image under the identity.",
    ]
    table = mine(names, docs)
    assert table["neighborhood"] == [("nhds", 1.0)]  # every unit of each says the other
    assert "nhds" in Vocabulary(table).words("open neighbourhoods and neighborhoods of x")
    # a fourth `nhds` name whose docstring says something else: the pairing holds less
    # reliably, Dice 2·3 / (3 + 4), and the query reads it at that weight
    table = mine([*names, "nhds_mono"], [*docs, "Monotone in the point."])
    assert table["neighborhood"] == [("nhds", round(6 / 7, 3))]
    assert Vocabulary(table).weighted("neighborhoods") == {"nhds": round(6 / 7, 3)}
    # a held-out docstring (None) feeds nothing
    assert "neighborhood" not in mine(names, [None, None, docs[2], *docs[3:]])


def test_the_levers_are_recorded_and_can_be_left_out(store, tmp_path: Path) -> None:
    ix = _index(store, tmp_path / "v9")
    assert ix.text_version == TEXT_VERSION == 9
    assert ix.meta["levers"] == sorted(LEVERS) and ix.meta["renames"] == 1
    bare = _index(store, tmp_path / "bare", levers=())
    assert bare.meta["levers"] == [] and bare.levers.notation is None
    assert bare.levers.keys is None and bare.levers.successor(0) is None
    assert stem("neighborhoods") == stem("neighborhood")
    # what `math2 search` says it searched: the vocabulary is built but off by default
    assert {"bodies", "namesakes", "notation"} <= set(ix.parts_built())
    assert "vocabulary" not in ix.parts_built()
    assert "vocabulary" in SearchIndex(tmp_path / "v9", vocabulary_weight=1.5).parts_built()
    assert not {"bodies", "namesakes", "notation"} & set(bare.parts_built())


def test_a_latex_query_names_through_its_lean_reading(store, tmp_path: Path) -> None:
    """Issue 45 §2 (branch latex46): the namesakes read the query's LaTeX as Lean, not as
    written: `$\\mathfrak{F} f$` is `𝔉 f`, whose symbol the library's notation table maps to
    its constant (read as written, the query had no symbol and its words were `mathfrak f`)."""
    ix = _index(store, tmp_path / "v9")
    for query in ("𝔉 f", r"$\mathfrak{F} f$"):
        named = [ix.name(p) for p, _ in ix.levers.namesakes(query, ix.prior)]
        assert named[:1] == ["Demo.stillSet"], (query, named)


def test_a_notion_the_latex_names_is_a_namesake_of_the_index(
    store, tmp_path: Path, monkeypatch
) -> None:
    """Review of latex46 (#7): the notions a query's LaTeX names (`latex.notion_constants`)
    reach the namesakes as a symbol's constant does (`levers.namesakes`). The fixture has no
    notion of the tables, so the reading is stood in for: `$\\mathcal{M}$` names `Demo.Merger`."""
    from math2.retrieval import levers

    ix = _index(store, tmp_path / "v9")
    query = r"$\mathcal{M}$"
    assert "Demo.Merger" not in [ix.name(p) for p, _ in ix.levers.namesakes(query, ix.prior)]
    monkeypatch.setattr(levers, "notion_constants", lambda q: ["Demo.Merger"] if q == query else [])
    named = [ix.name(p) for p, _ in ix.levers.namesakes(query, ix.prior)]
    assert named[:1] == ["Demo.Merger"], named
    # without `symbols` (the ablation) the notion names nothing
    named = [ix.name(p) for p, _ in ix.levers.namesakes(query, ix.prior, symbols=False)]
    assert "Demo.Merger" not in named, named
