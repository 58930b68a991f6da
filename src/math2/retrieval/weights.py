"""The weights of the search's parts and the levers' defaults, each with how it was measured
(docs/benchmarks.md): what `SearchIndex` (`index.py`) and the fusion (`stage.py`) read. The
fusion's own constants (`RRF_K`, `W_BM25`, `W_DESC`) are `stage.py`'s.
"""

# The dense part reorders the lexical top RERANK_TOP: its cosine rank among them is fused at
# weight W_DENSE. Measured on the dev sets over the full index (docs/benchmarks.md, issue 24.4):
# against the default path, nDCG@10 titles 0.551 -> 0.575, LaTeX 0.183 -> 0.223, Lean 0.419 ->
# 0.564, descriptions 0.394 -> 0.425, docstrings 0.196 -> 0.220. As a retriever of its own top
# 100 fused at 0.3 (before) it added +0.001 on the held-out benchmark and cost Lean-style
# queries: the encoder cannot find a formula among 279k declarations, but it can order 30.
W_DENSE = 1.0
RERANK_TOP = 30
# Search aids' weights in the lexical score, measured over the full index (docs/benchmarks.md,
# issue 24): titles and main results at 0.5 lift descriptions 0.356 -> 0.394 and docstrings
# 0.193 -> 0.196 over stems alone and leave Lean and LaTeX queries level; at 2 titles fall. The
# parents' docstrings lowered titles and descriptions at every weight tried: off (still built,
# so the lever can be measured again; `SearchIndex(..., parents_weight=w)`).
W_AIDS = 0.5
W_PARENTS = 0.0
BETA_PRIOR = 0.25
# The Mathlib words a query's English stands for (`english.py`: `divides` → `dvd`), scored
# apart at this weight (index text v4+). Measured on the dev sets over the full index
# (docs/benchmarks.md, issue 24, branch search2): at 1.5 natural-language descriptions 0.394 ->
# 0.450, slogans 0.237 -> 0.364, held-out docstrings 0.196 -> 0.207; titles, Lean, LaTeX level.
# The English words those Mathlib words translate then count W_TRANSLATED of their weight
# (`positive` pulled `Mathlib.Meta.Positivity.*` over `Nat.factorial_pos`): at 0.4
# descriptions 0.467, slogans 0.441, docstrings 0.210, titles level; at 0.2 titles fall.
# With the table as it is now: descriptions 0.468, slogans 0.446, docstrings 0.213.
# The Mathlib words of a query's LaTeX (`\\sum` → `sum`) are scored here too even though the
# words part already has them (branch latex): LaTeX 0.183 -> 0.230, the other styles level.
W_SYNONYMS = 1.5
W_TRANSLATED = 0.4
# The formula-shape part (`shape.py`, index text v7): its BM25 score is added at W_SHAPE times
# the query's formula share (1 − its prose share, `text.prose_tokens`), so a sentence is
# untouched. Measured on the dev sets over all of Mathlib (docs/benchmarks.md, issue 24, branch
# shape), against the default path without it: Lean 0.419 -> 0.736 nDCG@10, LaTeX 0.230 ->
# 0.478, special cases 0.189 -> 0.308, docstrings 0.213 -> 0.228; titles, descriptions,
# nicknames and slogans unchanged. At 0.25 level with 0.5; at 1.0 LaTeX and Lean fall.
W_SHAPE = 0.5
# Issue 33's query-side levers (index text v9, `levers.py`): the namesakes a query names are
# fused as a part of their own at W_NAMESAKE × their cover; the name words the query's phrases
# stand for in the library's prose (`vocabulary.py`) are scored like the English rows
# (W_VOCABULARY_MEASURED) when turned on. Off by default: measured alone over all of Mathlib it
# lowered titles 0.568 -> 0.438 nDCG@10, descriptions and the users-* natural and special sets
# (docs/benchmarks.md, issue 33); still built, so it can be measured again.
W_NAMESAKE = 1.0
W_VOCABULARY_MEASURED = W_SYNONYMS
W_VOCABULARY = 0.0
# What definitions say (`importers.lean_bodies`), as words: a part of its own, added to the
# lexical score at this weight (its shapes are in the shape part). Measured with every other
# lever on over all of Mathlib (docs/benchmarks.md, issue 33, branch search-levers): the
# users-* sets' held-out-mix mean 0.437 at 0, 0.441 at 0.25, 0.442 at 0.5; the old sets' 0.501,
# 0.495, 0.481 (titles 0.566, 0.557, 0.540); at 1.0 titles fell to 0.485, at 2.0 to 0.268.
# Chosen on those figures (every dev set's, no set's misses read): no set is left unread.
W_BODY = 0.25
# Issue 45 §1's name-part and gloss rankings (`nameparts.py`), fused like the other parts at
# these weights when turned on (`SearchIndex(parts_weight=…, glosses_weight=…)`). Off by
# default: over all of Mathlib on the dev sets (docs/benchmarks.md, issue 45, branch search)
# nDCG@10 fell from 0.422 (both off) to 0.249 (both on at 2 and 1); name parts off 0.348.
W_PARTS_MEASURED = 2.0
W_GLOSSES_MEASURED = 1.0
W_PARTS = 0.0
W_GLOSSES = 0.0
# Issue 45 §3: the learned ranker (`ranker.py`) orders the first stage's candidates where the
# index has one (`math2 index build` builds it; `SearchIndex(use_ranker=False)`,
# `search(..., ranker=False)`, `math2 search --fusion` give the fusion). On by default since
# branch rank45: under cross-validation grouped by target on the dev sets over all of Mathlib
# (docs/benchmarks.md, issue 45 §3, branch rank45), the model mixed with the fusion's order
# (`ranker.MIX`) is not below the fusion beyond twice the standard error of the paired
# difference on any target kind or query style (nDCG@10 0.410 -> 0.473 over 971 queries; the
# largest shortfalls: the 2 field queries 0.167 -> 0, instances 0.571 -> 0.564). Before (branch
# search, the model alone) natural sentences fell 0.479 -> 0.464 and it stayed off. Since
# branch quality45 the mix reads the first stage's strict order (`ranker.ORDER`): 0.479 over
# the same 971 queries, instances 0.544, still not below the fusion beyond noise on any cut.
# Branch qual45c (the name-cover features, the `fields` dev set): 0.499 over 1,003 queries
# (main's default 0.473 in the same run), instances 0.607, above the fusion on every cut.
USE_RANKER = True
