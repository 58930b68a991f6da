"""The retrieval dev sets (`benchmarks/devsets/*.yaml`): their format, the target kinds of the
sets of issue 33, and the checker that holds them against a store."""

import importlib.util
from collections import Counter

from tests.conftest import REPO

_spec = importlib.util.spec_from_file_location(
    "check_devsets", REPO / "benchmarks" / "check_devsets.py"
)
check_devsets = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_devsets)

STYLES = ("lean", "latex", "natural", "slogans", "nicknames", "special")


def _sets():
    sets = check_devsets.load_sets()
    assert sets, "no dev set found under benchmarks/devsets"
    return sets


def test_every_set_parses_with_queries_and_answers():
    for name, items in _sets().items():
        assert items, name
        for it in items:
            assert isinstance(it["q"], str) and it["q"].strip(), (name, it)
            assert all(isinstance(a, str) and a for a in it["a"]), (name, it)


def test_user_sets_cover_every_style_and_mostly_ask_for_non_theorems():
    sets = _sets()
    users = {n: v for n, v in sets.items() if n.startswith("users-")}
    assert {n.removeprefix("users-") for n in users} == set(STYLES)
    kinds: Counter[str] = Counter()
    for name, items in users.items():
        assert all(it.get("kind") in check_devsets.TARGET_KINDS for it in items), name
        own = Counter(it["kind"] for it in items)
        assert own["theorem"] <= len(items) / 2, (name, own)
        kinds += own
    assert sum(kinds.values()) >= 300
    for kind in ("structure", "class", "def", "instance", "inductive", "theorem"):
        assert kinds[kind] > 0, kind


def test_user_sets_repeat_no_query_of_another_set():
    sets = _sets()
    older = {it["q"] for n, v in sets.items() if not n.startswith("users-") for it in v}
    seen: set[str] = set()
    for name, items in sets.items():
        if name.startswith("users-"):
            for it in items:
                assert it["q"] not in older and it["q"] not in seen, (name, it["q"])
                seen.add(it["q"])


def test_checker_flags_missing_deprecated_and_wrongly_kinded_answers():
    sets = {
        "a": [
            {"q": "groups", "kind": "class", "a": ["Group"]},
            {"q": "old", "kind": "theorem", "a": ["old_name"]},
            {"q": "gone", "kind": "def", "a": ["Nowhere"]},
            {"q": "kinded", "kind": "structure", "a": ["Nat.factorial"]},
        ],
        "b": [{"q": "groups", "kind": "class", "a": ["Group"]}],
    }
    decls = {
        "Group": ("class", True, True, False),
        "old_name": ("alias", True, True, True),
        "Nat.factorial": ("def", True, True, False),
    }
    found = check_devsets.problems(sets, decls)
    assert any("old_name is deprecated" in p for p in found)
    assert any("Nowhere is not a Mathlib declaration" in p for p in found)
    assert any("kind structure but Nat.factorial is a def" in p for p in found)
    assert any("the same query is in a" in p for p in found)
    assert sum("'groups'" in p for p in found) == 1  # only the repeat in b
    assert check_devsets.kind_of("abbrev") == "def"
    assert check_devsets.kind_of("class inductive") == "class"
    assert check_devsets.kind_of("lemma") == "theorem"


def test_answers_are_read_and_checked_as_the_sets_are(tmp_path):
    """`informalize --from-devset` reads the sets' answers through the one reader: the answers
    in order, and an item without a query or answers is a DevSetError naming its file."""
    import pytest

    from math2.retrieval.devsets import DevSetError, read_answers

    (tmp_path / "a.yaml").write_text("- q: x\n  a: [A.x, B.y]\n- q: y\n  a: [C.z]\n")
    assert read_answers(tmp_path) == ["A.x", "B.y", "C.z"]
    (tmp_path / "b.yaml").write_text("- q: x\n")
    with pytest.raises(DevSetError, match=r"b\.yaml.*item 1 needs a query `q` and answers `a`"):
        read_answers(tmp_path)


def test_blind_sets_stay_apart_from_the_sets_the_ranker_is_trained_on():
    """Issue 45 (branch sets46): the blind sets live outside `benchmarks/devsets` (which the
    index build trains the learned ranker on), record every item's kind, and share no query
    and no answer with a dev set, so that a rule tuned on the dev sets is measured on new
    mathematics."""
    from math2.retrieval.devsets import devsets_dir

    blind = check_devsets.load_sets(REPO / "benchmarks" / "devsets-blind")
    assert set(blind) == {"blind-latex", "blind-fields", "blind-natural"}
    assert not list(devsets_dir().glob("blind-*"))
    dev = _sets()
    dev_queries = {it["q"] for v in dev.values() for it in v}
    dev_answers = {a for v in dev.values() for it in v for a in it["a"]}
    seen: set[str] = set()
    for name, items in blind.items():
        assert items, name
        for it in items:
            assert it.get("kind") in check_devsets.TARGET_KINDS, (name, it)
            assert it["q"] not in dev_queries and it["q"] not in seen, (name, it["q"])
            assert not set(it["a"]) & dev_answers, (name, it["q"])
            seen.add(it["q"])
    assert {it["kind"] for it in blind["blind-fields"]} == {"field"}


def test_checker_fails_when_no_set_matches(tmp_path, monkeypatch):
    """`--sets 'blind-*'` over `benchmarks/devsets` (the blind sets live elsewhere) checks
    nothing: that fails naming the folder, rather than passing on no item."""
    import pytest

    (tmp_path / "a.yaml").write_text("- q: x\n  a: [A.x]\n")
    argv = ["check_devsets", "--db", "sqlite:///nowhere.db", "--devsets", str(tmp_path)]
    monkeypatch.setattr("sys.argv", [*argv, "--sets", "blind-*"])
    with pytest.raises(SystemExit, match=r"no dev set matches 'blind-\*'"):
        check_devsets.main()


def test_a_malformed_dev_set_is_one_line_naming_its_file(tmp_path) -> None:
    import pytest

    from math2.retrieval.devsets import DevSetError, read_devsets

    (tmp_path / "bad.yaml").write_text("- {q: a query}\n")
    with pytest.raises(DevSetError, match=r"bad.yaml: item 1 needs a query"):
        read_devsets(tmp_path, {})
    (tmp_path / "bad.yaml").write_text("- {q: [unclosed\n")
    with pytest.raises(DevSetError, match=r"bad.yaml:\d+: not YAML"):
        read_devsets(tmp_path, {})


def test_every_item_is_kept_when_asked_with_its_written_answers(tmp_path) -> None:
    from math2.retrieval.devsets import read_devsets

    (tmp_path / "s.yaml").write_text("- {q: held, a: [A, B]}\n- {q: lost, a: [C], kind: def}\n")
    kinds = {"A": "theorem"}
    assert [(i.query, set(i.answers)) for i in read_devsets(tmp_path, kinds)] == [("held", {"A"})]
    every = read_devsets(tmp_path, kinds, every=True)
    assert [(i.query, set(i.answers), i.kind) for i in every] == [
        ("held", {"A", "B"}, "theorem"), ("lost", {"C"}, "def")]  # fmt: skip
