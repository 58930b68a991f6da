"""The n-gram engine: tokenisation, planted paragraphs, persistence, no reference text out."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from math2.checks.ngrams import (
    NgramIndex,
    NgramIndexError,
    iter_jsonl_texts,
    ngram_hashes,
    normalize,
    token_spans,
    tokens,
)

WORDS = [
    "let",
    "be",
    "a",
    "prime",
    "group",
    "ring",
    "field",
    "module",
    "space",
    "map",
    "function",
    "integer",
    "real",
    "natural",
    "number",
    "set",
    "subset",
    "element",
    "order",
    "finite",
    "infinite",
    "continuous",
    "compact",
    "open",
    "closed",
    "bounded",
    "sequence",
    "series",
    "limit",
    "sum",
    "product",
    "proof",
    "show",
    "that",
    "then",
    "there",
    "exists",
    "every",
    "and",
    "or",
    "not",
    "if",
    "only",
    "each",
    "some",
    "all",
    "any",
    "unique",
]


def _prose(rng: random.Random, n_words: int) -> str:
    out = []
    for i in range(n_words):
        w = rng.choice(WORDS)
        out.append(w.capitalize() if i % 11 == 0 else w)
        if i % 11 == 10:
            out[-1] += rng.choice([".", ",", ";"])
    return " ".join(out)


def test_tokenisation_convention():
    assert normalize("Let $x^2+1$, Prove: F(x)!") == "let x21 prove fx"
    assert tokens("Let $x^2+1$ -- , Prove:\u00a0F(x)!") == ["let", "x21", "prove", "fx"]
    # non-ASCII letters are kept; only ASCII is lower-cased
    assert tokens("Ω ≤ Émile") == ["Ω", "≤", "Émile"]


def test_token_spans_agree_with_tokens():
    rng = random.Random(1)
    alphabet = list("abcXYZ ,.;:()-\t\n\u00a0\u2003∀ℝé")
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        spans = token_spans(text)
        assert [normalize(text[a:b]) for a, b in spans] == tokens(text)


def test_hashes_are_positional_and_stable():
    toks = ["a", "b", "c", "d", "e"]
    h = ngram_hashes(toks, 3)
    assert len(h) == 3 and h.dtype == np.uint64
    assert len(set(h.tolist())) == 3
    assert ngram_hashes(["c", "b", "a", "d", "e"], 3)[0] != h[0]  # order matters
    assert len(ngram_hashes(toks, 6)) == 0
    # the same n-gram anywhere has the same hash
    assert ngram_hashes(["x", "a", "b", "c"], 3)[1] == h[0]
    with pytest.raises(ValueError):
        ngram_hashes(toks, 0)


def test_finds_a_planted_paragraph_in_a_long_text():
    rng = random.Random(7)
    refs = [(f"ref-{i}", _prose(rng, 400)) for i in range(50)]
    planted_doc = "ref-31"
    ref_words = dict(refs)[planted_doc].split()
    paragraph = " ".join(ref_words[100:160])  # 60 words copied
    before, after = _prose(random.Random(99), 5000), _prose(random.Random(98), 5000)
    text = before + "\n\n" + paragraph.upper() + "\n\n" + after  # case changes do not hide it
    index = NgramIndex.build(refs, n=13)
    rep = index.overlap(text)
    big = [s for s in rep.spans if s.ngrams >= 20]
    assert len(big) == 1
    span = big[0]
    assert planted_doc in span.docs
    assert span.ngrams == 60 - 13 + 1
    start = len(before) + 2
    assert span.start == start and span.end == start + len(paragraph)
    # random prose over a 60-word vocabulary shares no 13-gram by chance
    assert rep.matched == span.ngrams
    assert index.hits(text) == rep.matched and index.contains_any(text)
    assert not index.contains_any(before)


def test_no_reference_text_in_any_output(tmp_path):
    secret = (
        "Let k be the number of real solutions of the polynomial equation in the unit square "
        "such that every coefficient is an odd integer and determine the largest such k"
    )
    index = NgramIndex.build([("putnam-1999-a1", secret)], n=5)
    rep = index.overlap("Prelude. " + secret + " Coda.")
    assert rep.matched == len(tokens(secret)) - 4
    dumped = json.dumps(rep.to_dict())
    folder = index.save(tmp_path / "idx")
    stored = b"".join(p.read_bytes() for p in folder.iterdir())
    words = tokens(secret)
    for i in range(len(words) - 2):
        frag = " ".join(secret.split()[i : i + 3])
        assert frag not in dumped
        assert frag.encode() not in stored


def test_save_load_shards_and_errors(tmp_path):
    rng = random.Random(3)
    refs = [(f"d{i}", _prose(rng, 200)) for i in range(20)]
    index = NgramIndex.build(refs, n=8, shard_ngrams=500)
    assert len(index._shards) > 2
    index.save(tmp_path / "i")
    again = NgramIndex.load(tmp_path / "i")
    probe = refs[12][1][:600] + " " + _prose(rng, 100)
    assert again.overlap(probe) == index.overlap(probe)
    assert again.overlap(probe).spans[0].docs[0] == "d12"
    with pytest.raises(NgramIndexError, match=r"no meta\.json"):
        NgramIndex.load(tmp_path / "absent")
    (tmp_path / "i" / "meta.json").write_text("{trunc")
    with pytest.raises(NgramIndexError, match="unreadable"):
        NgramIndex.load(tmp_path / "i")


def test_empty_and_short_texts():
    index = NgramIndex.build([("a", "one two three")], n=13)
    assert index.size == 0
    rep = index.overlap("")
    assert rep.ngrams == 0 and rep.fraction == 0.0 and rep.spans == ()


def test_jsonl_reader_names_the_bad_line(tmp_path):
    p = tmp_path / "ref.jsonl"
    p.write_text('{"text": "a b c"}\n\n{"text": 3}\n')
    it = iter_jsonl_texts(p)
    assert next(it) == ("ref.jsonl:1", "a b c")
    with pytest.raises(NgramIndexError, match=r"ref.jsonl:3"):
        next(it)
    # read by math2.util.jsonl: bytes that are not UTF-8 or a line that is no JSON object are
    # errors at their line too, never a traceback
    p.write_bytes(b'{"text": "a"}\n{"text": "\xff"}\n')
    with pytest.raises(NgramIndexError, match=r"ref.jsonl:2: not UTF-8"):
        list(iter_jsonl_texts(p))
    p.write_text('{"text": "a"}\n[1]\n')
    with pytest.raises(NgramIndexError, match=r"ref.jsonl:2: each line must be a JSON object"):
        list(iter_jsonl_texts(p))
