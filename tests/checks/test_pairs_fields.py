"""`math2 check` reads MathForm's harness fields (problem, ground_truth, name)."""

import json

from math2.checks.pairs import read_pairs


def test_mathform_harness_fields_are_read(tmp_path) -> None:
    f = tmp_path / "h.jsonl"
    row = {"name": "fate_1", "problem": "Two is even.", "ground_truth": "theorem t : Even 2"}
    f.write_text(json.dumps({**row, "benchmark_name": "FATE-M"}) + "\n")
    (pair,) = list(read_pairs(f))
    assert pair.id == "fate_1" and pair.informal == "Two is even."
    assert pair.formal == "theorem t : Even 2"
