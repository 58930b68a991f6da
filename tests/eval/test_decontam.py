"""13-gram decontamination against every registered benchmark."""

from __future__ import annotations

import random

from math2.eval import BenchmarkItem, Decontaminator, Mode, Registry, shared_registry
from math2.eval.benchmarks import version_from_items
from tests.conftest import benchmark_fixtures

LONG = (
    "Let G be a finite group of order p squared where p is a prime number. "
    "Prove that G is abelian and describe all such groups up to isomorphism."
)


def _registry():
    reg = Registry()
    reg.add(
        version_from_items(
            "toy",
            "v1",
            [
                BenchmarkItem(name="long", informal=LONG, formal="theorem long : True := trivial"),
                BenchmarkItem(name="short", informal="Compute 2 + 2.", formal="theorem s : 2+2=4"),
            ],
        )
    )
    return reg


def test_drop_and_flag_with_counts():
    d = Decontaminator(_registry())
    # a 13-token window of the long text, re-cased and re-punctuated, inside other text
    window = " ".join(LONG.split()[3:17]).upper().replace(" ", "  ")
    recs = [
        {"id": 1, "informal": "An unrelated statement about rings and ideals and modules."},
        {"id": 2, "informal": "Intro. " + window + " Outro."},
        {"id": 3, "informal": "COMPUTE 2 + 2!"},  # very short: equal after normalisation
        {"id": 4, "informal": "Compute 2 + 3."},
        {"id": 5, "formal": "nothing", "informal": 7},  # non-string fields are skipped
    ]
    kept, rep = d.run(recs, ["informal", "formal"], Mode.DROP)
    assert [r["id"] for r in kept] == [1, 4, 5]
    assert rep.records == 5 and rep.contaminated == 2
    assert sum(rep.by_benchmark.values()) == 2 and all("toy@v1" in k for k in rep.by_benchmark)
    flagged, _ = d.run(recs, ["informal"], Mode.FLAG)
    flagged = list(flagged)
    assert len(flagged) == 5 and [r["id"] for r in flagged if "contaminated_by" in r] == [2, 3]


def test_twelve_shared_tokens_are_not_contamination():
    d = Decontaminator(_registry())
    twelve = " ".join(LONG.split()[:12])
    kept, rep = d.run([{"t": twelve + " and then something else entirely"}], ["t"])
    assert len(list(kept)) == 1 and rep.contaminated == 0


def test_planted_shared_benchmark_items_are_found():
    reg = shared_registry(benchmark_fixtures())
    d = Decontaminator(reg)
    rng = random.Random(0)
    words = ["group", "ring", "field", "module", "ideal", "prime", "order", "map", "set", "sum"]
    recs = [{"id": i, "text": " ".join(rng.choices(words, k=30))} for i in range(2000)]
    planted = {}
    versions = list(reg)
    for j in range(20):
        v = versions[j % len(versions)]
        it = v.items[(7 * j) % len(v.items)]
        pos = rng.randrange(len(recs))
        while pos in planted:
            pos = rng.randrange(len(recs))
        recs[pos] = {"id": pos, "text": "Exercise. " + (it.informal if j % 2 else it.formal)}
        planted[pos] = v.label
    kept, rep = d.run(recs, ["text"], Mode.FLAG)
    found = {r["id"]: r["contaminated_by"] for r in kept if "contaminated_by" in r}
    assert set(found) == set(planted)
    assert rep.contaminated == 20


def test_batched_lookup_agrees_with_the_checks_engine():
    """For texts of 13+ tokens and long benchmark texts, the batched tables say what
    `NgramIndex.contains_any` says; batching gives the same answer as one text at a time."""
    from math2.checks.ngrams import NgramIndex

    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(40)]
    bench = [" ".join(rng.choices(vocab, k=rng.randint(20, 40))) for _ in range(30)]
    reg = Registry()
    reg.add(
        version_from_items(
            "rand",
            "v",
            [
                BenchmarkItem(name=f"b{i}", informal=t, formal=f"theorem b{i} : True")
                for i, t in enumerate(bench)
            ],
        )
    )
    d = Decontaminator(reg)
    index = NgramIndex.build([(str(i), t) for i, t in enumerate(bench)], n=13)
    texts = []
    for _ in range(300):
        t = " ".join(rng.choices(vocab, k=rng.randint(13, 50)))
        if rng.random() < 0.3:
            src = rng.choice(bench).split()
            s = rng.randrange(len(src) - 13)
            t = t + " " + " ".join(src[s : s + rng.randint(11, 15)])
        texts.append(t)
    batched = d.hits(texts)
    assert [h is not None for h in batched] == [index.contains_any(t) for t in texts]
    assert batched == [d.hit(t) for t in texts]
    assert 0 < sum(h is not None for h in batched) < len(texts)
