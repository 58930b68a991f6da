"""The benchmark registry and its loaders (harness format on files written here only)."""

from __future__ import annotations

import json

import pytest

from math2.errors import InputError
from math2.eval import (
    BenchmarkExportRefused,
    BenchmarkItem,
    Registry,
    UnknownBenchmark,
    load_deepseek_jsonl,
    load_harness_jsonl,
    load_lean_dir,
    shared_registry,
    version_from_items,
)
from math2.eval.benchmarks import BenchmarkVersion
from math2.sources.intake import IntakeClass
from tests.conftest import benchmark_fixtures
from tests.data_conformance import real_data

HEADER = "import Mathlib\nopen Real"


def _harness(tmp_path, rows):
    p = tmp_path / "bench.jsonl"
    p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", "utf-8")
    return p


def test_harness_format_groups_by_benchmark_and_ignores_extra_fields(tmp_path):
    rows = [
        {
            "name": "t1",
            "problem": "Show that 1 + 1 = 2.",
            "header": HEADER,
            "ground_truth": "theorem t1 : (1 : ℕ) + 1 = 2 := by sorry",
            "benchmark_name": "ToyA",
            "difficulty": 3,
            "solution": "ignored",
        },
        {
            "name": "t2",
            "problem": "Let f be the identity. Show f 3 = 3.",
            "header": HEADER,
            "ground_truth": "def f (n : ℕ) : ℕ := n\n\ntheorem t2 : f 3 = 3 := by sorry",
            "benchmark_name": "ToyB",
        },
        {
            "name": "t3",
            "problem": "Show that 2 ≤ 3.",
            "header": HEADER,
            "ground_truth": "theorem t3 : (2 : ℕ) ≤ 3 := by sorry",
            "benchmark_name": "ToyA",
        },
    ]
    groups = load_harness_jsonl(_harness(tmp_path, rows))
    assert sorted(groups) == ["ToyA", "ToyB"]
    assert [i.name for i in groups["ToyA"]] == ["t1", "t3"]
    b = groups["ToyB"][0]
    assert b.informal.startswith("Let f") and b.formal.startswith("def f")  # auxiliary kept
    assert b.header == HEADER


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty file"),
        ('{"name": "x"', "not JSON"),
        ("[1, 2]", "JSON object"),
        ('{"name": "x", "problem": "p", "header": "", "benchmark_name": "B"}', "ground_truth"),
        ('{"name": "x", "problem": "", "ground_truth": "g", "benchmark_name": "B"}', "problem"),
    ],
)
def test_harness_format_bad_input_names_file_and_line(tmp_path, text, reason):
    p = tmp_path / "bad.jsonl"
    p.write_text("\n" + text + "\n" if text else "", "utf-8")
    with pytest.raises(InputError) as e:
        load_harness_jsonl(p)
    assert "bad.jsonl" in str(e.value) and reason in str(e.value)
    if text:
        assert e.value.line == 2


def test_lean_dir_loader(tmp_path):
    (tmp_path / "p1.lean").write_text(
        "import Mathlib\nopen Nat\n\n/-- Every prime above 2 is odd. -/\n"
        "theorem p1 (p : ℕ) (hp : p.Prime) (h : 2 < p) : Odd p := by sorry\n",
        "utf-8",
    )
    (tmp_path / "p2.lean").write_text("import Mathlib\ntheorem p2 : True := trivial\n", "utf-8")
    with pytest.raises(InputError, match=r"p2\.lean: no informal"):
        load_lean_dir(tmp_path)
    items = load_lean_dir(tmp_path, informal={"p2": "True holds."})
    assert [(i.name, i.header) for i in items] == [
        ("p1", "import Mathlib\nopen Nat"),
        ("p2", "import Mathlib"),
    ]
    assert items[0].informal == "Every prime above 2 is odd." and items[0].formal.startswith(
        "theorem"
    )


def _v(name, lineage, items, **kw):
    return version_from_items(name, lineage, items, **kw)


def _item(name, inf="Show that one plus one is two.", formal="theorem x : 1 + 1 = 2 := by sorry"):
    return BenchmarkItem(name=name, informal=inf, formal=formal)


def test_version_hash_is_content_and_lineages_coexist():
    a = _v("minif2f-test", "original", [_item("a"), _item("b", inf="Other text here.")])
    a2 = _v("minif2f-test", "original", [_item("b", inf="Other text here."), _item("a")])
    assert a.version_hash == a2.version_hash  # order does not matter
    repaired = _v("minif2f-test", "repaired", [_item("a"), _item("b", inf="Fixed text here.")])
    assert repaired.version_hash != a.version_hash
    reg = Registry()
    reg.add(a)
    reg.add(a2)  # same content: one version
    reg.add(repaired)
    assert len(reg) == 2
    with pytest.raises(UnknownBenchmark, match="several lineages"):
        reg.get("minif2f-test")
    assert reg.get("minif2f-test@repaired") is repaired
    assert reg.get(a.version_hash[:10]).lineage == "original"
    with pytest.raises(UnknownBenchmark):
        reg.get("nope")
    # the same label with other content is refused (a new lineage needs a new name)
    with pytest.raises(Exception, match="other content"):
        reg.add(_v("minif2f-test", "original", [_item("a", inf="changed")]))


def test_only_evaluate_intake_is_registered():
    v = BenchmarkVersion(
        name="x", lineage="l", source="x", items=(_item("a"),), intake=IntakeClass.OPEN_TEXT
    )
    with pytest.raises(Exception, match="evaluate"):
        Registry().add(v)


def test_registry_refuses_benchmark_items_in_training_sets():
    reg = Registry()
    reg.add(_v("toy", "v1", [_item("a", inf="Prove that the sum of two odd numbers is even.")]))
    reg.refuse_training([{"informal": "A fresh statement.", "source": "mathlib"}], ["informal"])
    with pytest.raises(BenchmarkExportRefused, match="toy@v1:a"):
        reg.refuse_training(
            [{"informal": "PROVE that the sum of two odd numbers is even!"}], ["informal"]
        )
    with pytest.raises(BenchmarkExportRefused, match="source 'toy'"):
        reg.refuse_training([{"informal": "anything", "source": "toy"}], ["informal"])


def test_shared_benchmarks_load_with_hashes_and_defects():
    folder = benchmark_fixtures()
    reg = shared_registry(folder)
    assert reg.names() == [
        "fate-m",
        "minif2f-test",
        "minif2f-valid",
        "proofnet-test",
        "proofnet-valid",
    ]
    assert len(reg.get("minif2f-test").items) == 10  # the fixture's test split
    assert len(reg.get("fate-m").items) == 6  # the fixture's (written for math2)
    assert reg.get("fate-m").toolchain == "v4.28.0"
    # ProofNet repeats exercise names across chapters: kept apart, listed as defects
    pv = reg.get("proofnet-valid")
    kinds = {d.kind for d in pv.defects}
    assert "duplicate_name" in kinds and "not_a_theorem" in kinds
    assert pv.item("exercise_1_3~2").name_in_source == "exercise_1_3"
    assert len({v.version_hash for v in reg}) == 5
    again = load_deepseek_jsonl(folder / "minif2f.jsonl", split="test")
    assert _v("minif2f-test", "deepseek-v1.5", again).version_hash == (
        reg.get("minif2f-test").version_hash
    )


@pytest.mark.data("fate-m")
def test_real_fate_m_loads_whole(tmp_path) -> None:
    (tmp_path / "fate_m.json").write_bytes((real_data("fate-m") / "fate_m.json").read_bytes())
    reg = shared_registry(tmp_path)
    assert reg.names() == ["fate-m"]
    fate = reg.get("fate-m")
    assert len(fate.items) == 150 and fate.toolchain == "v4.28.0" and not fate.defects
