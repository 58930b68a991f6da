"""Reading pairs: size limits on every text field, and the labels of a labelled pair."""

from __future__ import annotations

import json

import pytest

from math2.checks.pairs import read_pairs
from math2.errors import InputError

OK = {"id": "a", "informal": "One plus one is two.", "formal": "theorem a : 1 + 1 = 2 := sorry"}


def _write(tmp_path, rows):
    p = tmp_path / "pairs.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return p


@pytest.mark.parametrize(
    ("field", "size"),
    [("informal", 4_000_000), ("formal", 60_000), ("header", 30_000), ("id", 600)],
)
def test_an_oversized_field_is_refused_naming_file_line_and_field(tmp_path, field, size):
    big = {**OK, "id": "b", field: "x" * size}
    p = _write(tmp_path, [OK, big])
    with pytest.raises(InputError) as e:
        list(read_pairs(p))
    msg = str(e.value)
    assert f"{p}:2" in msg and repr(field) in msg and f"{size:,}" in msg


def test_labels_are_read_and_checked(tmp_path):
    p = _write(tmp_path, [{**OK, "faithful": False, "error_types": ["nat_arith"]}])
    (pair,) = read_pairs(p)
    assert pair.meta["faithful"] is False and pair.meta["error_types"] == ["nat_arith"]
    bad = _write(tmp_path, [{**OK, "faithful": "no"}])
    with pytest.raises(InputError, match=":1: 'faithful' must be true or false"):
        list(read_pairs(bad))
