"""SFT/RL records, the exported folder read back with datasets.load_dataset, no benchmark item."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from math2.datasets import export_dataset, rl_prompts, sft_record, statement_only, strip_tactics
from math2.eval import BenchmarkExportRefused, shared_registry
from math2.roles.formalize import FormalizeResult, Outcome, RoundLog
from math2.roles.formalize.schemas import Defect, DefectKind
from tests.conftest import benchmark_fixtures


def test_statement_only_replaces_the_proof():
    lean = "def f (n : ℕ) : ℕ := n\n\ntheorem t (h : f 1 = (1 : ℕ)) : f 2 = 2 := by\n  simp [f]"
    out = statement_only(lean)
    assert out.startswith("def f (n : ℕ) : ℕ := n")  # auxiliary definition kept
    assert out.endswith("theorem t (h : f 1 = (1 : ℕ)) : f 2 = 2 := by\n  sorry")
    assert "simp" not in out
    assert statement_only("theorem u : True") == "theorem u : True := by\n  sorry"
    # a comment before the proof's `:=` is not kept: `:= by sorry` never lands inside it
    commented = "theorem v : 1 = 1 -- the case a := b\n  := by simp"
    assert statement_only(commented) == "theorem v : 1 = 1 := by\n  sorry"
    assert statement_only("theorem w : True /- a := b -/ := trivial") == (
        "theorem w : True := by\n  sorry"
    )


def test_strip_tactics():
    trace = (
        "The objects are natural numbers.\n"
        "We would prove it with `simp` and then `linarith`.\n"
        "```lean\ntheorem x : 1 = 1 := rfl\n```\n"
        "The hypothesis h maps to a binder.\nThe tactic proof is short."
    )
    out = strip_tactics(trace)
    assert [ln for ln in out.splitlines() if ln] == [
        "The objects are natural numbers.",
        "The hypothesis h maps to a binder.",
    ]


def _passed(i, text):
    return FormalizeResult(
        id=f"p{i}",
        statement=text,
        outcome=Outcome.PASSED,
        passed_round=1 + i % 3,
        lean=f"import Mathlib\n\ntheorem p{i} (n : ℕ) (h : 0 < n) : 0 < n * n := by\n  positivity",
    )


def _failed(i, text, clause="n is positive"):
    return FormalizeResult(
        id=f"f{i}",
        statement=text,
        outcome=Outcome.FAILED,
        rounds=[
            RoundLog(
                round=r,
                defects=[Defect(kind=DefectKind.MISSING_PRECONDITION, clause=clause)],
            )
            for r in (1, 2, 3)
        ],
    )


def test_rl_prompts_keep_unpassed_unambiguous_items():
    results = [
        _passed(0, "For every positive natural number n, n squared is positive."),
        _failed(1, "For every positive natural number n, n cubed is positive."),
        _failed(2, "Every such space is nice in the usual sense.", clause="the text is ambiguous"),
        _failed(3, "Short one."),
    ]
    rl = rl_prompts(results, sources={"f1": ("textbook-x", "CC-BY-4.0")})
    assert [r.id for r in rl] == ["f1"]
    assert rl[0].label.startswith("For every") and rl[0].licence == "CC-BY-4.0"
    assert rl[0].prompt[-1] == {"role": "user", "content": rl[0].label}


def test_export_loads_with_datasets_and_holds_no_benchmark_item(tmp_path):
    datasets = pytest.importorskip("datasets")
    reg = shared_registry(benchmark_fixtures())
    bench = reg.get("minif2f-test").items[0]
    texts = [
        f"For every positive natural number n, the number {w} times n is positive."
        for w in ("two", "three", "four", "five")
    ]
    sft = [
        sft_record(
            _passed(i, t),
            "The object is n : ℕ. Use `simp` here.\nPositivity of n is h.",
            source="textbook-x",
            licence="CC-BY-4.0",
            model="gen",
            trace_model="tr",
        )
        for i, t in enumerate(texts)
    ]
    # a record whose trace quotes a benchmark statement: dropped by decontamination
    leaky = sft_record(
        _passed(9, "For every positive natural number n, n is at least one."),
        "As in " + bench.informal,
        source="textbook-x",
        licence="CC-BY-4.0",
    )
    rl = rl_prompts(
        [_failed(1, "For every positive natural number n, n cubed is positive.")],
        sources={"f1": ("textbook-y", "MIT")},
    )
    summary = export_dataset(
        tmp_path / "ds",
        [*sft, leaky],
        rl,
        registry=reg,
        provenance={"textbook-x": "pages 1-3 at commit abc"},
    )
    assert summary.sft == 4 and summary.rl == 1 and summary.sft_decontam.contaminated == 1
    ds = datasets.load_dataset(
        str(tmp_path / "ds"), "sft", split="train", cache_dir=str(tmp_path / "hf")
    )
    assert len(ds) == 4
    msg = ds[0]["messages"]
    assert [m["role"] for m in msg] == ["system", "user", "assistant"]
    assert "sorry" in msg[2]["content"] and "positivity" not in msg[2]["content"]
    assert "`simp`" not in msg[2]["content"]
    sg = datasets.load_dataset(
        str(tmp_path / "ds"), "sft_sharegpt", split="train", cache_dir=str(tmp_path / "hf")
    )
    assert sg[0]["conversations"][1]["from"] == "human"
    rlds = datasets.load_dataset(
        str(tmp_path / "ds"), "rl", split="train", cache_dir=str(tmp_path / "hf")
    )
    assert rlds[0]["label"].endswith("cubed is positive.")
    assert pq.read_table(tmp_path / "ds" / "sft" / "train.parquet").num_rows == 4
    card = (tmp_path / "ds" / "README.md").read_text()
    assert "| textbook-x | CC-BY-4.0 | 4 | pages 1-3 at commit abc |" in card
    assert "| textbook-y | MIT | 1 |" in card
    assert "1 dropped" in card and reg.get("minif2f-test").version_hash in card
    # no benchmark text anywhere in what was written
    everything = " ".join(p.read_text() for p in (tmp_path / "ds").rglob("*.jsonl"))
    for v in reg:
        for it in v.items:
            assert it.informal not in everything and it.formal not in everything
    manifest = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    assert manifest["sft_decontam"]["contaminated"] == 1


def test_export_refuses_a_benchmark_item(tmp_path):
    reg = shared_registry(benchmark_fixtures())
    it = reg.get("fate-m").items[0]
    rec = sft_record(_passed(0, it.informal), "trace", source="somewhere", licence="MIT")
    with pytest.raises(BenchmarkExportRefused, match="fate-m"):
        export_dataset(tmp_path / "x", [rec], [], registry=reg)
    assert not (tmp_path / "x").exists()
    rec2 = sft_record(
        _passed(0, "A fresh statement about groups of order p."),
        "t",
        source="minif2f",
        licence="MIT",
    )
    with pytest.raises(BenchmarkExportRefused, match="evaluate only"):
        export_dataset(tmp_path / "y", [rec2], [], registry=reg)
