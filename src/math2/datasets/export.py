"""Write SFT records and RL prompts as a dataset folder `datasets.load_dataset` reads.

    export_dataset(folder, sft, rl, registry=reg, provenance={...})

Before anything is written every record goes through the registry's evaluate-only refusal (a
record that is a benchmark item, or comes from a benchmark source, stops the export) and then
13-gram decontamination against every registered benchmark (dropped; counts kept). The folder:

    README.md                 dataset card: YAML configs, licences and provenance of every
                              source, decontamination counts with benchmark version hashes
    sft/messages.jsonl        {"id", "messages": [system, user, assistant], …provenance}
    sft/sharegpt.jsonl        {"id", "conversations": [{"from", "value"}], …}
    sft/train.parquet         the flat SFT records (informal, formal, trace, provenance)
    rl/prompts.jsonl          {"id", "prompt": [messages], "label", "source", "licence"}
    rl/train.parquet
    manifest.json             counts, decontamination report, registry versions
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from math2.datasets.records import Review, RLPrompt, SFTRecord
from math2.eval import Decontaminator, DecontamReport, Mode, Registry

__all__ = ["ExportSummary", "export_dataset"]


class ExportSummary(BaseModel):
    folder: str
    sft: int
    rl: int
    sft_decontam: DecontamReport
    rl_decontam: DecontamReport


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    tmp.replace(path)


def _parquet(path: Path, rows: list[dict], schema: pa.Schema) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=schema)
    tmp = path.with_suffix(".tmp")
    pq.write_table(table, tmp)
    tmp.replace(path)


_SFT_SCHEMA = pa.schema(
    [(k, pa.string()) for k in ("id", "informal", "formal", "trace", "source", "licence")]
    + [("passed_round", pa.int64())]
    + [(k, pa.string()) for k in ("model", "trace_model", "template")]
    + [("run_id", pa.int64()), ("review", pa.string())]
)
_MSG = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
_RL_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("prompt", _MSG),
        ("label", pa.string()),
        ("source", pa.string()),
        ("licence", pa.string()),
        ("review", pa.string()),
    ]
)


def _plain(r: BaseModel, k: str):
    v = getattr(r, k)
    return v.value if isinstance(v, Review) else v


def _card(
    name: str,
    sft: list[SFTRecord],
    rl: list[RLPrompt],
    rep_sft: DecontamReport,
    rep_rl: DecontamReport,
    provenance: dict[str, str],
) -> str:
    srcs = Counter((r.source, r.licence) for r in sft) + Counter((r.source, r.licence) for r in rl)
    lines = [
        "---",
        "configs:",
        "- config_name: sft",
        "  data_files:",
        "  - split: train",
        "    path: sft/messages.jsonl",
        "- config_name: sft_sharegpt",
        "  data_files:",
        "  - split: train",
        "    path: sft/sharegpt.jsonl",
        "- config_name: rl",
        "  data_files:",
        "  - split: train",
        "    path: rl/prompts.jsonl",
        "---",
        "",
        f"# {name}",
        "",
        "Informal statements with verified Lean 4 statements (SFT, with reasoning traces "
        "reconstructed from input and output only, proof tactics stripped) and RL prompts "
        "(items the formalize loop did not pass within 3 rounds). Written by math2.",
        "",
        "## Sources, licences and provenance",
        "",
        "| source | licence | records | provenance |",
        "|---|---|---:|---|",
    ]
    for (src, lic), n in sorted(srcs.items()):
        lines.append(f"| {src} | {lic} | {n} | {provenance.get(src, '')} |")
    unreviewed = sum(r.review is Review.UNREVIEWED for r in [*sft, *rl])
    lines += [
        "",
        "## Review",
        "",
        f"{unreviewed} of {len(sft) + len(rl)} records have a statement no person has reviewed "
        "(`review: unreviewed`); the rest were confirmed by a person. Statements a person "
        "rejected or replaced are not in this dataset.",
    ]
    lines += ["", "## Decontamination", ""]
    for part, rep in (("sft", rep_sft), ("rl", rep_rl)):
        lines.append(
            f"- {part}: {rep.records} records checked, {rep.contaminated} dropped "
            f"({rep.n}-gram overlap; tokenizer: {rep.tokenizer})"
        )
        for b, c in sorted(rep.by_benchmark.items()):
            lines.append(f"  - {b}: {c}")
    lines += ["", "Benchmark versions checked against (name@lineage: sha256):", ""]
    for label, h in sorted(rep_sft.benchmarks.items()):
        lines.append(f"- {label}: {h}")
    models = sorted(
        {r.model for r in sft if r.model} | {r.trace_model for r in sft if r.trace_model}
    )
    if models:
        lines += ["", "Models that wrote statements or traces: " + ", ".join(models)]
    return "\n".join(lines) + "\n"


def export_dataset(
    folder: str | Path,
    sft: list[SFTRecord],
    rl: list[RLPrompt],
    *,
    registry: Registry,
    provenance: dict[str, str] | None = None,
    name: str = "math2 formalization dataset",
) -> ExportSummary:
    """Refuse benchmark items, decontaminate, and write the folder (see the module doc)."""
    folder = Path(folder)
    sft_rows = [r.model_dump(mode="json") for r in sft]
    rl_rows = [r.model_dump(mode="json") for r in rl]
    registry.refuse_training(sft_rows, ["informal", "formal"])
    registry.refuse_training(
        [{"informal": r["label"], "source": r["source"]} for r in rl_rows], ["informal"]
    )
    dec = Decontaminator(registry)
    kept_sft_it, rep_sft = dec.run(sft_rows, ["informal", "formal", "trace"], Mode.DROP)
    kept_sft = list(kept_sft_it)
    kept_rl_it, rep_rl = dec.run(rl_rows, ["label"], Mode.DROP)
    kept_rl = list(kept_rl_it)
    sft_kept = [SFTRecord.model_validate(r) for r in kept_sft]
    rl_kept = [RLPrompt.model_validate(r) for r in kept_rl]

    prov_fields = (
        "source",
        "licence",
        "passed_round",
        "model",
        "trace_model",
        "template",
        "review",
    )
    _jsonl(
        folder / "sft" / "messages.jsonl",
        [
            {"id": r.id, "messages": r.messages(), **{k: _plain(r, k) for k in prov_fields}}
            for r in sft_kept
        ],
    )
    _jsonl(
        folder / "sft" / "sharegpt.jsonl",
        [
            {"id": r.id, "conversations": r.sharegpt(), **{k: _plain(r, k) for k in prov_fields}}
            for r in sft_kept
        ],
    )
    _parquet(folder / "sft" / "train.parquet", kept_sft, _SFT_SCHEMA)
    _jsonl(folder / "rl" / "prompts.jsonl", kept_rl)
    _parquet(folder / "rl" / "train.parquet", kept_rl, _RL_SCHEMA)
    (folder / "README.md").write_text(
        _card(name, sft_kept, rl_kept, rep_sft, rep_rl, provenance or {}), encoding="utf-8"
    )
    summary = ExportSummary(
        folder=str(folder),
        sft=len(sft_kept),
        rl=len(rl_kept),
        sft_decontam=rep_sft,
        rl_decontam=rep_rl,
    )
    (folder / "manifest.json").write_text(summary.model_dump_json(indent=1) + "\n", "utf-8")
    return summary
