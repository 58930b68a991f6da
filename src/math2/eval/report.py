"""The evaluation report: a table, PNG plots and an HTML page, each carrying the numbers.

`write_report(scores, folder)` writes
- `scores.json` (the `Scores` record),
- `table.md` (per benchmark: version hash, SC and CC under each judge at each k with intervals,
  κ, and the seeds' published figures next to ours),
- `bars.png` (per-benchmark bars with bootstrap intervals at the largest k) and `passk.png`
  (pass@k curves), each with a visible caption naming the Lean behind the SC figures as it
  reported itself (a test double says "a test double, not Lean") and the failed samples, and
  the scores JSON in a PNG text chunk under the key `math2-scores`,
- `report.html` with both plots inlined and the scores JSON in
  `<script type="application/json" id="math2-scores">`.
`read_png_scores` / `read_html_scores` read the numbers back.
"""

from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path

from math2.eval.metrics import Interval
from math2.eval.published import published_for
from math2.eval.scoring import BenchmarkScore, Scores

__all__ = [
    "PNG_KEY",
    "caption",
    "compiled_by_text",
    "read_html_scores",
    "read_png_scores",
    "render_table",
    "write_report",
]

PNG_KEY = "math2-scores"


def _pct(x: float) -> str:
    return f"{100 * x:.2f}"


def _iv(iv: Interval) -> str:
    return f"{_pct(iv.value)} [{_pct(iv.low)}, {_pct(iv.high)}]"


def _pub(bench: str, metric: str, k: int) -> str:
    rows = published_for(bench, metric, k)
    return "; ".join(f"{p.model} {p.percent:.2f}" for p in rows) or "–"


def _failed(b: BenchmarkScore) -> str:
    """`failed/samples (reason n, …)`: every failed sample is in the score as a 0."""
    why = ", ".join(f"{r} {n}" for r, n in b.failures.items())
    return f"{b.failed}/{b.samples}" + (f" ({why})" if why else "")


def compiled_by_text(labels: list[str]) -> str:
    """The Lean(s) behind an SC figure, as they reported themselves."""
    return "; ".join(labels) if labels else "nothing reached Lean"


def caption(scores: Scores) -> str:
    """The line under each plot: the Lean behind the SC figures and the samples that failed."""
    failed = sum(b.failed for b in scores.benchmarks)
    total = sum(b.samples for b in scores.benchmarks)
    why: dict[str, int] = {}
    for b in scores.benchmarks:
        for r, n in b.failures.items():
            why[r] = why.get(r, 0) + n
    reasons = ", ".join(f"{r} {n}" for r, n in sorted(why.items()))
    return (
        f"compiled by: {compiled_by_text(scores.compiled_by)}\n"
        f"failed samples (each scored 0): {failed}/{total}" + (f" ({reasons})" if reasons else "")
    )


def render_table(scores: Scores) -> str:
    """A Markdown table: one row per benchmark and k, SC and CC per judge, published figures."""
    head = ["benchmark", "version", "items", "k", "SC % [95% CI]", "compiled by"]
    head += [f"CC % ({j})" for j in scores.judges]
    head += ["κ", "failed (why)", "published SC", "published CC"]
    lines = [
        f"model: {scores.model}",
        f"compiled by: {compiled_by_text(scores.compiled_by)}",
        "",
        "| " + " | ".join(head) + " |",
    ]
    lines.append("|" + "---|" * len(head))
    for b in scores.benchmarks:
        kap = ", ".join(f"{p}: {v:.3f}" for p, v in b.kappa.items()) or "–"
        for k in scores.ks:
            row = [b.benchmark, b.version_hash[:12], str(b.items), str(k), _iv(b.sc[k])]
            row += [compiled_by_text(b.compiled_by)]
            row += [_iv(b.cc[j][k]) for j in scores.judges]
            row += [kap, _failed(b), _pub(b.benchmark, "SC", k), _pub(b.benchmark, "CC", k)]
            lines.append("| " + " | ".join(row) + " |")
    for k in scores.ks:
        row = ["macro", "", str(len(scores.benchmarks)), str(k), _iv(scores.macro_sc[k])]
        row += [compiled_by_text(scores.compiled_by)]
        row += [_iv(scores.macro_cc[j][k]) for j in scores.judges]
        failed = sum(b.failed for b in scores.benchmarks)
        total = sum(b.samples for b in scores.benchmarks)
        row += ["", f"{failed}/{total}", _pub("macro", "SC", k), _pub("macro", "CC", k)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def _plots(scores: Scores, folder: Path, payload: str) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    meta = {PNG_KEY: payload, "Software": "math2 eval report"}
    note = caption(scores)
    room = (0, 0.1, 1, 1)  # the bottom tenth holds the caption
    kmax = max(scores.ks)
    names = [b.benchmark for b in scores.benchmarks] + ["macro"]
    series = [("SC", [b.sc[kmax] for b in scores.benchmarks] + [scores.macro_sc[kmax]])]
    for j in scores.judges:
        series.append(
            (f"CC ({j})", [b.cc[j][kmax] for b in scores.benchmarks] + [scores.macro_cc[j][kmax]])
        )
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(names) * len(series) / 2 + 3), 4.5))
    width = 0.8 / len(series)
    x = np.arange(len(names))
    for i, (label, ivs) in enumerate(series):
        vals = np.array([100 * v.value for v in ivs])
        err = np.array(
            [[100 * (v.value - v.low) for v in ivs], [100 * (v.high - v.value) for v in ivs]]
        )
        ax.bar(x + i * width - 0.4 + width / 2, vals, width, yerr=err, capsize=3, label=label)
    ax.set_xticks(x, names, rotation=20, ha="right")
    ax.set_ylabel(f"pass@{kmax} (%)")
    ax.set_ylim(0, 105)
    ax.set_title(f"{scores.model}: SC and CC at pass@{kmax} (95% bootstrap CI)")
    ax.legend(fontsize=8)
    fig.text(0.01, 0.01, note, fontsize=7, ha="left", va="bottom", wrap=True)
    fig.tight_layout(rect=room)
    bars = folder / "bars.png"
    fig.savefig(bars, metadata=meta)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for b in scores.benchmarks:
        ax.plot(
            scores.ks,
            [100 * b.sc[k].value for k in scores.ks],
            marker="o",
            label=f"{b.benchmark} SC",
        )
        for j in scores.judges:
            ax.plot(
                scores.ks,
                [100 * b.cc[j][k].value for k in scores.ks],
                marker="s",
                linestyle="--",
                label=f"{b.benchmark} CC ({j})",
            )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("k")
    ax.set_ylabel("pass@k (%)")
    ax.set_ylim(0, 105)
    ax.set_title(f"{scores.model}: pass@k")
    ax.legend(fontsize=7)
    fig.text(0.01, 0.01, note, fontsize=7, ha="left", va="bottom", wrap=True)
    fig.tight_layout(rect=room)
    curves = folder / "passk.png"
    fig.savefig(curves, metadata=meta)
    plt.close(fig)
    return [bars, curves]


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def write_report(scores: Scores, folder: str | Path) -> dict[str, Path]:
    """Write scores.json, table.md, bars.png, passk.png and report.html into `folder`."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    payload = scores.model_dump_json()
    (folder / "scores.json").write_text(payload + "\n", encoding="utf-8")
    table = render_table(scores)
    (folder / "table.md").write_text(table, encoding="utf-8")
    bars, curves = _plots(scores, folder, payload)
    imgs = "".join(
        f'<img alt="{p.stem}" src="data:image/png;base64,{_b64(p)}">' for p in (bars, curves)
    )
    # `</` cannot appear inside the JSON script element
    safe = payload.replace("</", "<\\/")
    page = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>math2 eval: {html.escape(scores.model)}</title></head><body>"
        f"<h1>math2 evaluation: {html.escape(scores.model)}</h1>"
        f"<pre>{html.escape(table)}</pre>{imgs}"
        f'<script type="application/json" id="{PNG_KEY}">{safe}</script>'
        "</body></html>\n"
    )
    (folder / "report.html").write_text(page, encoding="utf-8")
    return {
        "json": folder / "scores.json",
        "table": folder / "table.md",
        "bars": bars,
        "curves": curves,
        "html": folder / "report.html",
    }


def read_png_scores(path: str | Path) -> Scores:
    """The scores embedded in a report PNG's text chunk."""
    from PIL import Image

    with Image.open(path) as im:
        text = im.text.get(PNG_KEY)  # type: ignore[attr-defined]
    if text is None:
        raise ValueError(f"{path}: no {PNG_KEY!r} text chunk")
    return Scores.model_validate_json(text)


_SCRIPT = re.compile(rf'<script type="application/json" id="{PNG_KEY}">(.*?)</script>', re.S)


def read_html_scores(path: str | Path) -> Scores:
    """The scores embedded in a report page."""
    m = _SCRIPT.search(Path(path).read_text(encoding="utf-8"))
    if not m:
        raise ValueError(f"{path}: no embedded scores")
    return Scores.model_validate(json.loads(m.group(1)))
