"""Statement items: split_item, statement_item, benchmark_code, and the real benchmarks (every
item that is one target theorem plus context is accepted; the others are defs of data)."""

import json
import re

import pytest

from math2.lean import Mode, NotAStatement, benchmark_code, split_item, statement_item
from math2.lean.hygiene import ContextTrust, check_code
from tests.conftest import benchmark_fixtures
from tests.data_conformance import real_data


def test_split_item_parts() -> None:
    code = (
        "-- a comment\nimport Mathlib\nimport Aesop\nopen Real\ndef f := 1\n"
        "/-- doc -/\n@[simp] theorem foo : f = 1 := sorry"
    )
    header, context, target = split_item(code)
    assert header == "import Mathlib\nimport Aesop"
    assert context == "open Real\ndef f := 1\n"
    assert target == "/-- doc -/\n@[simp] theorem foo : f = 1 := sorry"
    _, context, target = split_item("import Mathlib\nvariable (x : ℕ)\nomit x in\ntheorem t : True")
    assert (context, target) == ("variable (x : ℕ)\n", "omit x in\ntheorem t : True")


@pytest.mark.parametrize(
    "code", ["import Mathlib\ndef f := 1", "theorem a : True := sorry\nlemma b : True := sorry"]
)
def test_split_item_needs_one_theorem(code: str) -> None:
    with pytest.raises(NotAStatement, match="exactly one theorem"):
        split_item(code)


def test_split_item_unreadable() -> None:
    with pytest.raises(NotAStatement, match="cannot read"):
        split_item('theorem a : "open')


def test_statement_item_and_benchmark_code() -> None:
    item = statement_item("a", "theorem foo : π > 0 := by", name="foo", context="open Real")
    assert item.code == "import Mathlib\nopen Real\ntheorem foo : π > 0 := by sorry"
    assert (item.name, item.mode) == ("foo", Mode.STATEMENT)
    assert check_code(item.code, name="foo").ok
    assert benchmark_code("import Mathlib", "theorem x : True :=") == (
        "import Mathlib\ntheorem x : True := sorry"
    )
    assert benchmark_code("", "theorem x : True := trivial") == "theorem x : True := trivial"


def _benchmark_items() -> list[tuple[str, str, str, str | None]]:
    out = []
    for fname in ("minif2f.jsonl", "proofnet.jsonl"):
        for line in (benchmark_fixtures() / fname).read_text().splitlines():
            row = json.loads(line)
            code = benchmark_code(row["header"], row["formal_statement"])
            out.append((fname, row["name"], code, row["name"]))
    for row in json.loads((benchmark_fixtures() / "fate_m.json").read_text()):
        out.append(("fate_m.json", str(row["id"]), row["formal_statement"], None))
    return out


_DEF_TARGET = re.compile(r"^(noncomputable\s+)?def\s", re.M)


def test_every_benchmark_theorem_is_accepted_and_each_refusal_is_a_def_of_data() -> None:
    items = _benchmark_items()
    assert len(items) == 44  # the fixtures (20 + 18 + 6)
    refused = []
    for _, iid, code, name in items:
        report = check_code(code, name=name, trust=ContextTrust.BENCHMARK)
        if report.ok:
            header, _, target = split_item(code)
            assert header.startswith("import Mathlib")
            assert re.search(r"\b(theorem|lemma)\b", target), iid
            continue
        refused.append(iid)
        # A true refusal: the item's target is a `def` (data built with `sorry`), not a theorem.
        assert _DEF_TARGET.search(code), (iid, report.reason)
        assert {v.rule for v in report.violations} == {"one theorem", "sorry"}, report.reason
    assert len(refused) == 1  # the fixture's `def` item (14 in the real data, docs/benchmarks.md)


@pytest.mark.data("fate-m")
def test_every_real_fate_m_theorem_is_accepted() -> None:
    rows = json.loads((real_data("fate-m") / "fate_m.json").read_text(encoding="utf-8"))
    assert len(rows) == 150
    for row in rows:
        report = check_code(row["formal_statement"], trust=ContextTrust.BENCHMARK)
        assert report.ok, (row["id"], report.reason)
