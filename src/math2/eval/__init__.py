"""Evaluation: the benchmark registry, pass@k SC/CC scores, reports and decontamination.

    from math2.eval import shared_registry, score, write_report, Decontaminator

    reg = shared_registry(folder)              # content-hashed versions (`fate-m`'s folder, …)
    scores = score(sample_results, ks=[1, 8], model="m")     # SC, CC per judge, κ, macro
    write_report(scores, "out/")                              # table.md, PNGs, report.html
    kept, rep = Decontaminator(reg).run(records, ["informal", "formal"])

The harness that draws the samples (`math2.eval.harness`) runs the formalize role on
`math2.runs`; everything here is pure and works on its output.
"""

from math2.eval.benchmarks import (
    BenchmarkExportRefused,
    BenchmarkVersion,
    KnownDefect,
    Registry,
    UnknownBenchmark,
    item_fingerprint,
    load_registry,
    shared_registry,
    structural_defects,
    version_from_items,
)
from math2.eval.decontam import Decontaminator, DecontamReport, Mode
from math2.eval.harness import EvalOptions, SampleTask, build_eval_job, collect_results, run_eval
from math2.eval.loaders import (
    BenchmarkItem,
    load_deepseek_jsonl,
    load_fate_json,
    load_harness_jsonl,
    load_lean_dir,
)
from math2.eval.metrics import (
    Interval,
    bootstrap_interval,
    cohen_kappa,
    macro_average,
    pass_at_k,
)
from math2.eval.published import PUBLISHED, Published, published_for
from math2.eval.report import read_html_scores, read_png_scores, render_table, write_report
from math2.eval.scoring import BenchmarkScore, SampleFailure, SampleResult, Scores, score

__all__ = [
    "PUBLISHED",
    "BenchmarkExportRefused",
    "BenchmarkItem",
    "BenchmarkScore",
    "BenchmarkVersion",
    "DecontamReport",
    "Decontaminator",
    "EvalOptions",
    "Interval",
    "KnownDefect",
    "Mode",
    "Published",
    "Registry",
    "SampleFailure",
    "SampleResult",
    "SampleTask",
    "Scores",
    "UnknownBenchmark",
    "bootstrap_interval",
    "build_eval_job",
    "cohen_kappa",
    "collect_results",
    "item_fingerprint",
    "load_deepseek_jsonl",
    "load_fate_json",
    "load_harness_jsonl",
    "load_lean_dir",
    "load_registry",
    "macro_average",
    "pass_at_k",
    "published_for",
    "read_html_scores",
    "read_png_scores",
    "render_table",
    "run_eval",
    "score",
    "shared_registry",
    "structural_defects",
    "version_from_items",
    "write_report",
]
