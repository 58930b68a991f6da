"""Dense embedding of an index as a job on `math2.runs`: one item per chunk of documents.

Each chunk's vectors go to `dense/chunk_NNNNN.npy` (written whole, then renamed), and the chunk
is a `run_items` row, so `math2 runs list` shows the embedding like any other long job and a
killed build resumes at the first unfinished chunk (`math2 index build --dense` again, or
`math2 runs resume ID`). The run is identified by the index's documents (a digest of the texts)
and the model, so a changed corpus or another encoder is another run.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel

from math2.runs import (
    CannotResume,
    ItemContext,
    Job,
    Progress,
    Resume,
    RunServices,
    RunSummary,
    execute,
    register_job,
    step,
)
from math2.store import Run, Store

if TYPE_CHECKING:
    from math2.config import Settings
from math2.util.limits import Resource

JOB = "embed"


class Chunk(BaseModel):
    """A slice of the index's documents."""

    id: str
    start: int
    end: int
    rows: int = 0
    seconds: float = 0.0


def texts_digest(texts: list[str]) -> str:
    """The input key: SHA-256 over the documents in order."""
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


@dataclass
class EmbedServices(RunServices):
    """What the embed step uses: the index folder, the texts, and `encode` (a batch of texts to
    their vectors)."""

    folder: Path
    texts: list[str]
    encode: Callable[[list[str]], np.ndarray]


@step("embed.chunk")
def embed_chunk(encoder: str, max_tokens: int, chunk: int):
    """Embed one chunk (in a worker thread, on the `cpu` resource) and write its file."""

    async def run(rec: Chunk, ctx: ItemContext[EmbedServices]) -> Chunk:
        folder, texts = ctx.services.folder, ctx.services.texts
        path = folder / f"{rec.id}.npy"
        if path.exists():  # written by an earlier run whose row was not yet recorded
            return rec.model_copy(update={"rows": int(np.load(path, mmap_mode="r").shape[0])})
        async with ctx.slot("cpu"):
            t0 = time.perf_counter()
            vec = await asyncio.to_thread(ctx.services.encode, texts[rec.start : rec.end])
            tmp = folder / f"{rec.id}.tmp.npy"
            np.save(tmp, vec.astype(np.float16))
            tmp.rename(path)  # a chunk is either whole or absent
        await ctx.attempt(
            stage="embed",
            model=encoder,
            request={"start": rec.start, "end": rec.end},
            response={"file": path.name},
            verdict="ok",
            duration_s=time.perf_counter() - t0,
        )
        return rec.model_copy(update={"rows": len(vec), "seconds": time.perf_counter() - t0})

    return run


def run_embedding(
    store: Store,
    texts: list[str],
    folder: Path,
    *,
    encoder: str,
    chunk: int,
    max_tokens: int,
    say: Callable[[str], None],
    params: dict | None = None,
    reuse=None,
) -> RunSummary:
    """Embed every chunk not yet done with `encoder` (a name of `encoder.ENCODERS`); returns
    how the run ended. `reuse` (`dense.Reuse`): earlier vectors by text key, copied instead of
    encoded for the texts they embed."""
    from math2.retrieval.encoder import load_encoder, model_name

    folder.mkdir(parents=True, exist_ok=True)
    loaded: list = []

    def model(batch: list[str]) -> np.ndarray:
        if not loaded:
            loaded.append(load_encoder(encoder, max_tokens))
        return loaded[0].encode(batch)

    def encode(batch: list[str]) -> np.ndarray:
        if reuse is None:
            return model(batch)
        rows = reuse.lookup(batch)
        out = np.empty((len(batch), reuse.vectors.shape[1]), dtype=np.float32)
        for i, r in enumerate(rows):
            if r is not None:
                out[i] = reuse.vectors[r]
        missing = [i for i, r in enumerate(rows) if r is None]
        if missing:
            out[missing] = model([batch[i] for i in missing])
        return out

    n = (len(texts) + chunk - 1) // chunk
    records = [
        Chunk(id=f"chunk_{c:05d}", start=c * chunk, end=min(len(texts), (c + 1) * chunk))
        for c in range(n)
    ]
    job = Job(JOB, texts_digest(texts), [embed_chunk(model_name(encoder), max_tokens, chunk)])
    _forget_missing(store, job, folder)
    started = time.perf_counter()

    def show(p: Progress) -> None:
        finished = p.done + p.skipped
        if not finished or p.finished:
            return
        rate = p.done / max(time.perf_counter() - started, 1e-9)
        eta = (n - finished) / rate if rate > 0 else float("inf")
        say(
            f"dense ({encoder}): {finished}/{n} chunks, {rate * chunk:.0f} docs/s, "
            f"ETA {eta / 60:.1f} min"
        )

    return asyncio.run(
        execute(
            store,
            job,
            records,
            resources={"cpu": Resource("cpu", 1)},
            services=EmbedServices(folder, texts, encode),
            params={"folder": str(folder), "encoder": encoder, **(params or {})},
            total=n,
            on_progress=show,
            progress_every_s=5.0,
        )
    )


def _forget_missing(store: Store, job: Job, folder: Path) -> None:
    """A chunk whose file is gone (deleted, or a copy of the index without it) is done again,
    whatever its run item says."""
    from sqlalchemy import delete, select

    from math2.runs import find_run, run_identity
    from math2.store import RunItem

    with store.session() as s:
        run = find_run(s, run_identity(job))  # the embed job names no Lean and no model
        if run is None:
            return
        run_id = run.id
        done = s.scalars(select(RunItem.item).where(RunItem.run_id == run_id)).all()
        gone = [i for i in done if not (folder / f"{i}.npy").exists()]
        if gone:
            s.execute(delete(RunItem).where(RunItem.run_id == run_id, RunItem.item.in_(gone)))


async def _resume(run: Run, settings: Settings, store: Store, resume: Resume) -> RunSummary:
    """Build the index's dense part again: the embed run of its texts resumes (its identity is
    the texts and the encoder; done chunks are skipped)."""
    from math2.retrieval.index import build_index

    resume.local_only(JOB)
    params = run.params or {}
    if "source" not in params:
        raise CannotResume(f"run {run.id}: it does not say which index it embeds")
    index = Path(params.get("index") or Path(params["folder"]).parent)
    meta = await asyncio.to_thread(
        build_index, store, index, params["source"], dense=True, progress=print,
        encoder=params.get("encoder", "minilm"),
    )  # fmt: skip
    return RunSummary(run_id=run.id, job=JOB, done=meta.get("dense_chunks", 0), finished=True)


register_job(JOB, _resume)
