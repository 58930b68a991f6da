"""Loading the dense encoder is a stage of the progress reporter, so a command that loads it is
never silent while it does (issue 46 §4)."""

from __future__ import annotations

import pytest

from math2.retrieval.encoder import load_encoder, unavailable
from math2.util.progress import LineReporter, reporting


def test_loading_the_encoder_says_so() -> None:
    if why := unavailable("bge-small"):
        pytest.skip(why)
    lines: list[str] = []
    with reporting(LineReporter(lines.append, every_s=3600)):
        load_encoder("bge-small", 32)
    assert [ln.split(":")[0] for ln in lines] == ["loading the bge-small encoder"], lines
    assert lines[-1].startswith("loading the bge-small encoder: done in "), lines
