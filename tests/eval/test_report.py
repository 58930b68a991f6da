"""The report: table, PNGs and HTML carry the numbers; a test reads them back."""

from __future__ import annotations

import pytest

from math2.eval import SampleResult, read_html_scores, read_png_scores, score, write_report


def _run():
    out = []
    for bench, rate in (("fate-m", 3), ("minif2f-test", 1)):
        for item in range(5):
            for i in range(8):
                comp = (i + item) % 4 < rate
                out.append(
                    SampleResult(
                        benchmark=bench,
                        version_hash="v" + bench,
                        item=f"i{item}",
                        sample=i,
                        compiled=comp,
                        judges={"qwq": comp and i % 2 == 0, "other": comp and i % 3 == 0},
                    )
                )
    return score(out, ks=[1, 2, 4, 8], model="toy-model", resamples=300)


def test_report_files_carry_the_numbers(tmp_path):
    scores = _run()
    files = write_report(scores, tmp_path)
    for key in ("json", "table", "bars", "curves", "html"):
        assert files[key].exists() and files[key].stat().st_size > 0
    assert files["bars"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for png in (files["bars"], files["curves"]):
        back = read_png_scores(png)
        assert back == scores
    html_back = read_html_scores(files["html"])
    assert html_back.benchmarks[0].sc[8].value == pytest.approx(scores.benchmarks[0].sc[8].value)
    assert html_back.macro_cc["qwq"][8] == scores.macro_cc["qwq"][8]
    table = files["table"].read_text()
    # the version hash, each judge's column, κ and the seed's figure next to ours
    assert "vfate-m" in table and "CC % (qwq)" in table and "CC % (other)" in table
    assert "MathForm-8B 97.33" in table and "MathForm-8B 72.37" in table
    assert "qwq|other" in scores.benchmarks[0].kappa or "other|qwq" in scores.benchmarks[0].kappa


def test_every_sc_figure_names_the_lean_that_compiled(tmp_path):
    lean = "repl · Lean 4.19.0 · Mathlib 0123456789ab"
    samples = [
        SampleResult(
            benchmark="fate-m",
            version_hash="v1",
            item=f"i{i}",
            sample=0,
            compiled=i % 2 == 0,
            judges={"j": True},
            compiled_by=lean if i < 3 else "",
        )
        for i in range(4)
    ]
    scores = score(samples, ks=[1], model="m", resamples=50)
    assert scores.compiled_by == [lean] == scores.benchmarks[0].compiled_by
    table = write_report(scores, tmp_path)["table"].read_text()
    assert f"compiled by: {lean}" in table
    rows = [
        ln for ln in table.splitlines() if ln.startswith("| fate-m") or ln.startswith("| macro")
    ]
    assert rows and all(lean in r for r in rows)
    nothing = score([s.model_copy(update={"compiled_by": ""}) for s in samples], ks=[1], model="m")
    assert (
        "compiled by: nothing reached Lean"
        in write_report(nothing, tmp_path / "n")["table"].read_text()
    )


def test_report_without_embedded_scores_is_an_error(tmp_path):
    p = tmp_path / "x.html"
    p.write_text("<html></html>")
    with pytest.raises(ValueError, match="no embedded scores"):
        read_html_scores(p)


def test_each_plot_shows_the_lean_and_the_failures_in_a_visible_caption(tmp_path, monkeypatch):
    # Drawn on the figure itself, not only in the PNG's hidden text chunk (issue 34 §6).
    from matplotlib.figure import Figure

    from math2.eval import SampleFailure
    from math2.lean.identity import LeanIdentity

    double = LeanIdentity(kind="fake-repl", lean_version="fake-repl 0123456789ab").label()
    samples = [
        SampleResult(
            benchmark="fate-m",
            version_hash="v1",
            item=f"i{i}",
            sample=0,
            compiled=i < 2,
            judges={"j": True},
            compiled_by=double if i < 3 else "",
            failure=SampleFailure.REFUSED if i == 3 else None,
        )
        for i in range(4)
    ]
    scores = score(samples, ks=[1], model="m", resamples=20)
    drawn: dict[str, list[str]] = {}
    save = Figure.savefig

    def spy(fig, fname, *args, **kwargs):
        drawn[str(fname)] = [t.get_text() for t in fig.texts]
        return save(fig, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", spy)
    files = write_report(scores, tmp_path)
    for key in ("bars", "curves"):
        (text,) = drawn[str(files[key])]
        assert f"compiled by: {double}" in text and "a test double, not Lean" in text
        assert "failed samples (each scored 0): 1/4 (refused 1)" in text
