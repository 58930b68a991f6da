"""`copy`: n-gram overlap of the pair's informal text with reference corpora (K9.4).

Options: `index` (an `NgramIndex` folder, or several, comma-separated), `min_ngrams` (the run
length that counts as copying; default 1: any shared 13-gram) and `field` (`informal`, the
default, or `formal`). Fails when a run of at least `min_ngrams` matched n-grams is found. The
evidence is offsets into the checked text, n-gram counts and reference document ids — never
reference text, so a reference such as PutnamBench cannot leak through a check result.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from math2.checks.base import Check, CheckEnv, Outcome, Pair, register
from math2.checks.ngrams import NgramIndex
from math2.store.work import Verdict

__all__ = ["CopyCheck"]


@lru_cache(maxsize=8)
def _index(folder: str) -> NgramIndex:
    return NgramIndex.load(Path(folder))


@register("copy")
class CopyCheck(Check):
    @property
    def checker(self) -> str:
        return ",".join(Path(p).name for p in self._folders())

    def _folders(self) -> list[str]:
        raw = self.options.get("index", "")
        folders = raw if isinstance(raw, list) else [p for p in str(raw).split(",") if p]
        if not folders:
            raise ValueError("check copy: option `index` names no n-gram index folder")
        return [str(Path(f)) for f in folders]

    async def run(self, pair: Pair, env: CheckEnv) -> Outcome:
        field = self.options.get("field", "informal")
        text = pair.formal if field == "formal" else pair.informal
        min_ngrams = int(self.options.get("min_ngrams", 1))
        found = []
        total = 0
        for folder in self._folders():
            rep = _index(folder).overlap(text)
            total = max(total, rep.ngrams)
            for s in rep.spans:
                if s.ngrams >= min_ngrams:
                    found.append({"reference": Path(folder).name, **_span(s)})
        evidence = {"field": field, "ngrams": total, "spans": found}
        matched = sum(f["ngrams"] for f in found)
        score = matched / total if total else 0.0
        verdict = Verdict.FAIL if found else Verdict.PASS
        return self.outcome(verdict, score=round(score, 6), evidence=evidence)


def _span(s) -> dict:
    return {"start": s.start, "end": s.end, "ngrams": s.ngrams, "docs": list(s.docs)}
