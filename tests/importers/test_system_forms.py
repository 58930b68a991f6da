"""Every importer of the other systems accounts for what it read (issue 43 §1): on a fixture
written for math2 that holds every form the real source uses, the import's counts equal an
independent reading of the same files — a deliberately simple counter here (regular
expressions over the fixture, or the fixture's own `[thm]` annotations), not the importer's
code — and each form seen and not read is counted and named."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import select

from math2.importers.registry import load_builtin_importers
from math2.sources import load_manifest, sync_manifest
from math2.store import Mention, Source
from tests.build_helpers import pinned_manifest
from tests.conftest import FIXTURES

FORMS = FIXTURES / "system_forms"


@pytest.fixture
def manifest(tmp_path: Path):
    names = ("hol-light", "hol4", "naproche", "nasalib", "rocq-stdlib", "acl2-books")
    return load_manifest(pinned_manifest(tmp_path, {n: "fixture0" for n in names}))


@pytest.fixture
def corpus(sqlite_store, manifest):
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    return sqlite_store


def _import(store, manifest, name: str, folder: str):
    return load_builtin_importers()[name].run(store, manifest.get(name), FORMS / folder)


def _mentions(store, name: str) -> dict[str, Mention]:
    with store.session() as s:
        sid = s.scalar(select(Source.id).where(Source.name == name))
        rows = s.scalars(select(Mention).where(Mention.source_id == sid)).all()
        s.expunge_all()
        return {m.name: m for m in rows}


def _kinds(counts: dict[str, int]) -> dict[str, int]:
    return {k.removeprefix("kind "): n for k, n in counts.items() if k.startswith("kind ")}


def _not_read(counts: dict[str, int]) -> dict[str, int]:
    return {k.removeprefix("not read: "): n for k, n in counts.items() if k.startswith("not read")}


# --- HOL4 -------------------------------------------------------------------------------


def _hol4_by_regex(text: str) -> tuple[set[str], Counter[str]]:
    """The names a HOL4 script stores, read by one regex per form (no lexer: the fixture has
    no comment that holds a form), and the forms that store nothing math2 reads."""
    text = re.sub(r"\(\*.*?\*\)", "", text, flags=re.S)
    names: set[str] = set()
    unread: Counter[str] = Counter()
    for kw, name, attrs in re.findall(
        r"^(Theorem|Triviality|Definition)\s+(\w+)(\[[^\]]*\])?", text, re.M
    ):
        if kw == "Triviality" or "local" in attrs:
            unread[kw if kw == "Triviality" else "local"] += 1
        else:
            names.add(name)
    for name in re.findall(r"^Inductive\s+(\w+)", text, re.M):
        names |= {f"{name}_{s}" for s in ("rules", "ind", "strongind", "cases")}
    for name in re.findall(r"^CoInductive\s+(\w+)", text, re.M):
        names |= {f"{name}_{s}" for s in ("rules", "coind", "cases")}
    names |= set(
        re.findall(
            r"(?:store_thm|save_thm|new_specification|new_axiom|new_infixl_definition)\s*\(\s*\"(\w+)\"",
            text,
        )
    )
    names |= set(re.findall(r"\{name\s*=\s*\"(\w+)\"", text))
    names |= {f"{n}_TY_DEF" for n in re.findall(r"new_type_definition\s*\(\s*\"(\w+)\"", text)}
    names |= {f"{n}_def" for n in re.findall(r"[tx]Define\s+\"(\w+)\"", text)}
    names |= {f"{n}_def" for n in re.findall(r"\bz?Define\s*`\s*\(?\s*([a-z]\w*)\s+\w", text)}
    rel = r"(?:\(!\w+(?: \w+)*\.\s*)?(?:[^`]*==>\s*)?"
    for stem in re.findall(rf"\bHol_reln\s*`\s*\(?\s*{rel}(\w+)", text):
        names |= {f"{stem}_{s}" for s in ("rules", "ind", "strongind", "cases")}
    for stem in re.findall(r"xHol_reln\s+\"(\w+)\"", text):
        names |= {f"{stem}_{s}" for s in ("rules", "ind", "strongind", "cases")}
    for stem in re.findall(r"Hol_coreln\s*`\s*!\w+\.\s*[^`]*==>\s*(\w+)", text):
        names |= {f"{stem}_{s}" for s in ("rules", "coind", "cases")}
    unread["Datatype"] = len(re.findall(r"^Datatype:", text, re.M))
    unread["rebound"] = len(re.findall(r"\[allow_rebind\]", text)) - 1  # all but the last
    return names, unread


def test_hol4_counts_equal_an_independent_reading(corpus, manifest) -> None:
    script = FORMS / "hol4" / "src" / "forms" / "formsScript.sml"
    names, unread = _hol4_by_regex(script.read_text())
    res = _import(corpus, manifest, "hol4", "hol4")
    rows = _mentions(corpus, "hol4")
    assert {n.removeprefix("formsTheory.") for n in rows} == names
    assert res.counts["declarations"] == len(names) == 38
    assert sum(_kinds(res.counts).values()) == len(names)  # kinds counted after de-duplication
    got = _not_read(res.counts)
    assert got["Triviality (not stored in the theory)"] == unread["Triviality"] == 1
    assert got["[local] theorem (not stored)"] == unread["local"] == 1
    assert got["Datatype (the theorems it stores)"] == unread["Datatype"] == 1
    assert got["binding replaced by a later one of the same name ([allow_rebind])"] == 1
    assert unread["rebound"] == 1
    assert got["save_thm with a name math2 cannot read"] == 1  # `save_thm (name, th)`
    assert got["Define with a name math2 cannot read"] == 1  # `x +++ y = …`: an infix
    # last binding wins; `Inductive reach:` does not shadow the theorem `reach`
    assert rows["formsTheory.REBOUND"].statement == "second = second"
    assert rows["formsTheory.reach"].kind == "theorem"
    assert rows["formsTheory.reach_rules"].kind == "inductive"
    assert rows["formsTheory.lessr_cases"].kind == "inductive"  # read from the rule's head
    assert rows["formsTheory.pos_TY_DEF"].kind == "definition"
    assert rows["formsTheory.CHOICE_AX"].kind == "axiom"
    assert rows["formsTheory.triple_def"].statement == "triple n = 3 * n"
    first = "not read: [local] theorem (not stored) 1, e.g. src/forms/formsScript.sml:32"
    assert first in res.notes


# --- Naproche ---------------------------------------------------------------------------

_WORDS = r"(?:theorem|lemma|proposition|corollary|definition|axiom|signature)"
_THEOREM_LIKE = _WORDS + r"\*?"


def _naproche_by_regex(folder: Path) -> tuple[int, int, int]:
    """(environments Naproche reads as ForTheL, theorem-like environments it does not,
    sections of the plain .ftl files), by regular expressions."""
    read = prose = sections = 0
    for f in folder.rglob("*.tex"):
        text = re.sub(r"(?<!\\)%.*", "", f.read_text())
        blocks = "".join(re.findall(r"\\begin\{forthel\}(.*?)\\end\{forthel\}", text, re.S))
        inside = len(re.findall(rf"\\begin\{{{_THEOREM_LIKE}\}}", blocks))
        flagged = len(re.findall(rf"\\begin\{{{_THEOREM_LIKE}\}}\[forthel", text))
        every = len(re.findall(rf"\\begin\{{{_THEOREM_LIKE}\}}", text))
        read += inside + flagged
        prose += every - inside - flagged
    for f in folder.rglob("*.ftl"):
        text = re.sub(r"#.*", "", f.read_text())
        sections += len(re.findall(rf"^\s*{_WORDS}(?:\s+\w+)?\s*\.", text, re.M | re.I))
    return read, prose, sections


def test_naproche_counts_equal_an_independent_reading(corpus, manifest) -> None:
    read, prose, sections = _naproche_by_regex(FORMS / "naproche")
    res = _import(corpus, manifest, "naproche", "naproche")
    rows = _mentions(corpus, "naproche")
    assert (read, prose, sections) == (7, 3, 7)
    assert res.counts["declarations"] == len(rows) == read + sections
    assert res.counts["files read"] == 2
    assert _not_read(res.counts) == {
        "environment outside ForTheL": prose,
        "convention (notation, not a statement)": 1,
    }
    assert "examples/flagged:proposition 1" in rows  # `\begin{proposition}[forthel]`
    assert rows["examples/flagged:twin"].extra["title"] == "Twin"
    assert "examples/flagged:GIZ_AX" in rows  # the `name=` option
    assert rows["examples/widgets.ftl:Main"].statement == (
        "Let W be a widget set. Every element of W is a widget."
    )
    assert rows["examples/widgets.ftl:helper"].kind == "lemma"  # keywords in any case
    assert not any("Fake" in n for n in rows)  # a `#` comment


# --- NASALib ----------------------------------------------------------------------------

_FORMULA_WORDS = "LEMMA|THEOREM|COROLLARY|PROPOSITION|AXIOM"


def test_nasalib_counts_equal_an_independent_reading(corpus, manifest) -> None:
    text = re.sub(r"%.*", "", (FORMS / "nasalib" / "structures" / "searching.pvs").read_text())
    formulas = re.findall(
        rf"^\s*(\w+)\s*(?:\[.*?\]\])?(?:\[[^\]]*\])?\s*:\s*(?:{_FORMULA_WORDS})\b",
        text,
        re.M | re.I,
    )
    others = re.findall(
        r"^\s*[\w, ]+:\s*(?:VAR|TYPE|NONEMPTY_TYPE)\b|^\s*(?:JUDGEMENT|CONVERSION|AUTO_REWRITE)",
        text,
        re.M,
    )
    res = _import(corpus, manifest, "nasalib", "nasalib")
    rows = _mentions(corpus, "nasalib")
    assert len(formulas) == 6 and len(others) == 7
    assert {n.rsplit(".", 1)[-1] for n in rows if "." in n} == set(formulas)
    assert res.counts["declarations"] == len(formulas) + 1  # and the theory
    assert sum(_not_read(res.counts).values()) == len(others)
    found = rows["structures@searching.find_first_sound"]
    assert found.extra["parameters"] == "[S: TYPE]"
    assert found.statement == "FORALL (B: [nat -> S], w: S): TRUE"  # not cut at `FORALL (…):`
    assert rows["structures@searching.colon_below"].kind == "theorem"
    assert rows["structures@searching.lower_case_split"].statement == "y = y"


# --- HOL Light --------------------------------------------------------------------------


def test_hol_light_counts_equal_the_fixtures_annotations(corpus, manifest) -> None:
    theorems = not_theorems = 0
    what: Counter[str] = Counter()
    for f in (FORMS / "hol-light").rglob("*.ml"):
        text = f.read_text()
        theorems += len(re.findall(r"\[thm\]", text))
        for w in re.findall(r"\[not: (\w+)\]", text):
            what[w] += 1
            not_theorems += 1
    res = _import(corpus, manifest, "hol-light", "hol-light")
    rows = _mentions(corpus, "hol-light")
    assert (theorems, not_theorems) == (15, 6)
    assert res.counts["declarations"] == len(rows) == theorems
    assert _not_read(res.counts) == {f"{w} (not a theorem)": n for w, n in what.items()}
    for name in ("GROUPISH_ID", "GROUPISH_MUL", "SPLIT_RIGHT", "lower_abs", "pair_add_th"):
        assert name in rows
    assert "GROUPISH_PROPERTIES" not in rows  # `as X` names the list, not a theorem
    assert "TWO_PLUS_TWO" in rows  # a conversion applied to a term is a theorem
    assert "SERIES_CONV" in rows  # named like a conversion, made by `prove`
    assert "NUM_ADD_FORM_CONV" not in rows and "counter" not in rows and "helper" not in rows


def test_hol_light_licence_per_file(corpus, manifest) -> None:
    _import(corpus, manifest, "hol-light", "hol-light")
    rows = _mentions(corpus, "hol-light")
    assert rows["FLOATY_THM"].licence == "GPL-1.0-or-later"  # `License: GPL`, no version
    assert rows["FLOATY_THM"].extra["licence_source"] == "stated"
    assert rows["CHOICE_THM"].licence == "CC0-1.0 OR MIT"  # the choices math2 knows
    assert rows["ADD_ZERO_FORM"].licence == "BSD-2-Clause"  # "the same license as HOL Light"
    assert all(m.intake_class == "mentions" for m in rows.values())


# --- Rocq -------------------------------------------------------------------------------

_ROCQ_DECL = re.compile(
    r"^\s*(?:#\[\w+\]\s*)?(?:Local\s+|Program\s+)?(?:Theorem|Lemma|Fact|Remark|Corollary|"
    r"Proposition|Definition|Example|Fixpoint|CoFixpoint|Inductive|CoInductive|Variant|Record|"
    r"Structure|Class|Instance|Axiom|Parameter)\s+(\w+)",
    re.M,
)
_ROCQ_UNREAD = {
    "Variable, Hypothesis, Context, Let (section-local, not in the library)": (
        r"^\s*(?:Variables?|Hypothes[ie]s|Context|Let)\b"
    ),
    "Abbreviation (another name for a term)": r"^\s*(?:Abbreviation|Notation\s+\w+\s*:=)",
    "Notation, Infix (syntax, not a statement)": r"^\s*(?:Notation\s+\"|Infix\b)",
    "Ltac, Tactic Notation (a tactic, not a statement)": r"^\s*(?:Ltac|Tactic Notation)\b",
    "Scheme (the induction principles it defines)": r"^\s*Scheme\b",
    "Add Morphism, Relation, Ring, Field, Setoid (the instances it declares)": (
        r"^\s*Add\s+(?:Parametric\s+)?(?:Morphism|Relation|Ring|Field|Setoid)\b"
    ),
    "Coercion, Canonical with a body (the constant it defines)": (
        r"^\s*(?:Coercion|Canonical)\b[^.\n]*:="
    ),
    "Declare Instance, Declare Module (a parameter of a module type)": (
        r"^\s*Declare\s+(?:Instance|Module)\b"
    ),
    "Instance without a name (Rocq makes one up)": r"Instance\s*:",
}


def _rocq_by_regex(text: str) -> tuple[Counter[str], Counter[str]]:
    """The short names a Rocq file declares (with those a module gets by `Include`-ing a
    functor of the file), and each form not read, by one regex per form."""
    text = re.sub(r"\(\*.*?\*\)", "", text, flags=re.S)
    names = Counter(_ROCQ_DECL.findall(text))
    names.update(
        p for ps in re.findall(r"^\s*Parameters\s+\(([\w ]+):", text, re.M) for p in ps.split()
    )
    for functor in re.findall(r"^\s*Include\s+(\w+)", text, re.M):
        body = re.search(rf"^\s*Module {functor} \(.*?^\s*End {functor}\.", text, re.M | re.S)
        assert body is not None
        names.update(_ROCQ_DECL.findall(body.group(0)))
    unread = Counter({form: len(re.findall(rx, text, re.M)) for form, rx in _ROCQ_UNREAD.items()})
    return names, unread


def test_rocq_counts_equal_an_independent_reading(corpus, manifest) -> None:
    every = FORMS / "rocq" / "theories" / "Forms" / "Every.v"
    names, unread = _rocq_by_regex(every.read_text())
    res = _import(corpus, manifest, "rocq-stdlib", "rocq")
    rows = _mentions(corpus, "rocq-stdlib")
    assert Counter(n.rpartition(".")[2] for n in rows) == names
    assert res.counts["declarations"] == sum(names.values()) == 31
    assert _not_read(res.counts) == +unread
    assert sum(unread.values()) == 20 and len(+unread) == len(_ROCQ_UNREAD)
    assert rows["Stdlib.Forms.Every.NatWidgets.t_eq"].extra["included_from"] == (
        "Stdlib.Forms.Every.WidgetProps.t_eq"
    )
    assert "Stdlib.Forms.Every.gadget_symmetry" not in rows  # an Abbreviation: counted
    assert not any("in_a_comment" in n for n in rows)


# --- ACL2 -------------------------------------------------------------------------------

_ACL2_UNREAD = {
    "defun, define, defun-sk, … (a definition)": r"defun|defund|defun-sk|define|defchoose|defstub",
    "defrule, defruled, def-gl-thm, … (a theorem math2 does not read)": (
        r"defrule|defruled|def-gl-thm"
    ),
    "defequiv, defcong, defrefinement (the theorems they make)": r"defequiv|defcong|defrefinement",
    "defmacro (a macro)": r"defmacro",
}


def test_acl2_counts_equal_an_independent_reading(corpus, manifest) -> None:
    text = (FORMS / "acl2" / "books" / "forms" / "every.lisp").read_text()
    text = re.sub(r"#\|.*?\|#", "", text, flags=re.S)
    text = re.sub(r'"[^"]*"', '""', text)
    text = re.sub(r";.*", "", text)
    written = re.findall(r"\((?:defthmd?|defaxiom)\s+(\|[^|]*\||[^\s()]+)", text)
    templates = [n for n in written if n.startswith(",")]
    names = {n.rpartition(":")[2].strip("|").upper() for n in written if not n.startswith(",")}
    again = len(written) - len(templates) - len(names)
    unread = {
        form: len(re.findall(rf"\((?:{heads})\s", text)) for form, heads in _ACL2_UNREAD.items()
    }
    res = _import(corpus, manifest, "acl2-books", "acl2")
    rows = _mentions(corpus, "acl2-books")
    assert {m.extra["symbol"].rpartition(":")[2].upper() for m in rows.values()} == names
    assert res.counts["declarations"] == len(rows) == len(names) == 10
    assert _not_read(res.counts) == {
        **unread,
        "defthm in a macro's template (named when the macro expands)": len(templates),
        "a name its book states again (kept once: the exported one, else the first)": again,
    }
    assert (len(templates), again, sum(unread.values())) == (1, 1, 16)
    assert res.counts["kind defaxiom"] == 1
    assert rows["forms/every:ACL2::HELPER-LEMMA"].extra["local"] is False  # exported wins
    assert rows["forms/every:STD::GADGET-P-OF-NIL"].licence == "BSD-3-Clause"


def test_math2_import_prints_what_was_not_read(tmp_path: Path, store) -> None:
    from typer.testing import CliRunner

    from math2.cli import app

    manifest = pinned_manifest(tmp_path, {"hol4": "fixture0"})
    env = {"MATH2_MANIFEST": str(manifest), "MATH2_CONFIG": str(tmp_path / "none.toml")}
    args = ["--db", str(store.engine.url), "import", "hol4", str(FORMS / "hol4")]
    res = CliRunner().invoke(app, args, env=env, terminal_width=400)
    assert res.exit_code == 0, res.output
    output = " ".join(res.output.split())  # the console wraps long lines
    assert "not read: Datatype (the theorems it stores): 1" in output  # the counts
    assert (
        "not read: Triviality (not stored in the theory) 1, e.g. src/forms/formsScript.sml:26"
        in (res.output)
    )  # the notes
