"""Cross-system formalization: the set.mm declaration goes into the formalize input."""

from __future__ import annotations

import json

import pytest

from math2.errors import Math2Error
from math2.roles.align.cross import source_statement, write_inputs
from tests.roles.align.fixture import build


def test_setmm_declaration_in_the_context(sqlite_store, tmp_path):
    build(sqlite_store, n=1)
    with sqlite_store.session() as s:
        by_node = source_statement(s, "setmm", "setmm:same0")
        by_name = source_statement(s, "setmm", "same0")
        path = write_inputs(s, "setmm", ["same0", "setmm:diff0"], tmp_path / "in.jsonl")
    assert by_node == by_name
    assert by_node["id"] == "setmm:same0"
    text = by_node["statement"]
    assert text.startswith("SAME result 0.")
    assert "Commutative law of addition." in text
    assert "|- ( ( A e. CC /\\ B e. CC ) -> ( A + B ) = ( B + A ) )" in text
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["setmm:same0", "setmm:diff0"]


def test_unknown_node_and_system_are_clear_errors(sqlite_store):
    build(sqlite_store, n=1)
    with sqlite_store.session() as s:
        with pytest.raises(Math2Error, match="no active setmm declaration or node 'nope'"):
            source_statement(s, "setmm", "nope")
        with pytest.raises(Math2Error, match="--from must be one of"):
            source_statement(s, "coq", "x")
        with pytest.raises(Math2Error, match="no mizar-mml library"):
            source_statement(s, "mizar", "x")
