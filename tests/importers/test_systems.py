"""The other systems' importers (Rocq, HOL Light, HOL4, Naproche, NASALib, ACL2) on fixtures
written for math2 in each system's syntax: the awkward forms, per-item licences, `authored`
copied to each mention, a checkout at another commit refused, and the 1000+ list's crosswalk
linked to an imported mention."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import func, select

from math2.crosswalk.cluster import cluster
from math2.errors import InputError
from math2.importers.masking import mask_lisp, mask_ml, mask_percent
from math2.importers.registry import load_builtin_importers
from math2.importers.systems import licence_of_statement
from math2.sources import load_manifest, sync_manifest
from math2.store import Crosswalk, Mention, Run, TextRecord
from tests.build_helpers import pinned_manifest
from tests.conftest import FIXTURES

SYS = FIXTURES / "systems"
# source name -> fixture folder
FOLDERS = {
    "rocq-stdlib": "rocq",
    "hol-light": "hol-light",
    "hol4": "hol4",
    "naproche": "naproche",
    "nasalib": "nasalib",
    "acl2-books": "acl2",
}


def _manifest(tmp_path: Path, pins: dict[str, str]):
    return load_manifest(pinned_manifest(tmp_path, pins))


@pytest.fixture
def manifest(tmp_path: Path):
    return _manifest(tmp_path, {name: "fixture0" for name in FOLDERS})


@pytest.fixture
def corpus(sqlite_store, manifest):
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    return sqlite_store


def _import(store, manifest, name: str, root: Path | None = None):
    spec = load_builtin_importers()[name]
    return spec.run(store, manifest.get(name), root or SYS / FOLDERS[name])


def _mentions(store, name: str) -> dict[str, Mention]:
    from math2.store import Source

    with store.session() as s:
        sid = s.scalar(select(Source.id).where(Source.name == name))
        rows = s.scalars(select(Mention).where(Mention.source_id == sid)).all()
        s.expunge_all()
        return {m.name: m for m in rows}


def test_rocq_sections_modules_and_statements(corpus, manifest) -> None:
    res = _import(corpus, manifest, "rocq-stdlib")
    rows = _mentions(corpus, "rocq-stdlib")
    assert sorted(rows) == [
        "Stdlib.Arith.Demo.Bridge.eq_refl_b",  # `<: S with Module E := M.E` opens a module
        "Stdlib.Arith.Demo.Nat.Inner.twice_zero",
        "Stdlib.Arith.Demo.Nat.sum_to",  # `Local Fixpoint`
        "Stdlib.Arith.Demo.Nat.twice",
        "Stdlib.Arith.Demo.Nat.twice_wd",  # `#[global] Instance`
        "Stdlib.Arith.Demo.ORDER.le",
        "Stdlib.Arith.Demo.ORDER.le_refl",
        "Stdlib.Arith.Demo.ORDER.lt",
        "Stdlib.Arith.Demo.ORDER.t",  # `Parameter Inline t`
        "Stdlib.Arith.Demo.double_plus",  # in a Section: no name part; Variable/Let not read
        "Stdlib.Arith.Demo.str",
        "Stdlib.Arith.Demo.twice_eq",  # after `End ORDER.` the module path is the file's
    ]
    dp = rows["Stdlib.Arith.Demo.double_plus"]
    assert dp.statement == ": forall n : nat, n + n = 2 * n"  # the comment blanked out
    assert (dp.kind, dp.module, dp.extra["line"]) == ("lemma", "Stdlib.Arith.Demo", 11)
    assert rows["Stdlib.Arith.Demo.Nat.twice"].statement == "(n : nat) : nat"  # no body
    assert rows["Stdlib.Arith.Demo.ORDER.le"].statement == "t -> t -> Prop"
    assert rows["Stdlib.Arith.Demo.ORDER.le_refl"].extra["module_type"] is True
    assert all(m.licence == "LGPL-2.1-only" and m.intake_class == "mentions" for m in rows.values())
    assert res.counts["kind lemma"] == 1 and res.counts["files read"] == 1


def test_hol_light_multiline_prove_and_friends(corpus, manifest) -> None:
    res = _import(corpus, manifest, "hol-light")
    rows = _mentions(corpus, "hol-light")
    assert sorted(rows) == sorted(
        [
            "ADD_SYM", "ADD_ASSOC", "num_CASES", "LT_EXISTS", "ADD_AC", "EVEN", "ODD",
            "DIST_ADD2", "DIST_ADD2_REV", "PAIR_EQ", "PAIR_SURJ", "divides", "RTC_RULES",
            "RTC_INDUCT", "RTC_CASES", "INFINITY_AX", "MUL_SYM", "CARD_LE_REFL", "OPEN_UNIV",
        ]
    )  # fmt: skip
    # `let … prove\n (`…`,\n TAC);;` over several lines, with a comment inside the tactic
    assert rows["ADD_SYM"].statement == "!m n. m + n = n + m"
    assert rows["ADD_ASSOC"].statement == "!m n p. m + (n + p) = (m + n) + p"
    assert rows["LT_EXISTS"].extra["by"] == "prove"  # `time prove`
    assert rows["ADD_AC"].kind == "derived" and rows["divides"].kind == "definition"
    assert rows["INFINITY_AX"].kind == "axiom"
    assert rows["MUL_SYM"].statement == "!m n. m * n = n * m"  # not the local lemma's
    # bound again in Examples/: kept once, the Multivariate one, the other noted
    assert rows["OPEN_UNIV"].module == "Multivariate/topology.ml"
    assert rows["OPEN_UNIV"].extra["also_at"] == ["Examples/reload.ml:2"]
    assert res.counts["names bound again (kept once)"] == 1
    assert "NOT_A_THEOREM" not in rows and "helper" not in rows and "counter" not in rows


def test_hol4_new_and_old_syntax(corpus, manifest) -> None:
    _import(corpus, manifest, "hol4")
    rows = _mentions(corpus, "hol4")
    assert sorted(rows) == [
        "demoTheory.ADD_COMM_DEMO",
        "demoTheory.EXP0_DEMO",  # `Theorem NAME[attrs] = thm`
        "demoTheory.MUL_COMM_DEMO",
        "demoTheory.OLD_STYLE",  # store_thm
        "demoTheory.Q_STYLE",  # Q.store_thm
        "demoTheory.SAVED_COPY",  # save_thm
        "demoTheory.double_def",
        "demoTheory.even_cases",  # `Inductive even:` stores four theorems (IndDefLib)
        "demoTheory.even_ind",
        "demoTheory.even_rules",
        "demoTheory.even_strongind",
        "legacyTheory.LEGACY_THM",  # the theory named by new_theory
        "legacyTheory.legacy_def",
    ]  # Triviality, [local], a theorem in a comment or a string: not stored, not read
    assert rows["demoTheory.ADD_COMM_DEMO"].statement == "!m n. m + n = n + m"
    assert rows["demoTheory.MUL_COMM_DEMO"].statement == "∀m n. m * n = n * m"
    assert rows["demoTheory.OLD_STYLE"].statement == "!x. x = x"
    assert rows["legacyTheory.legacy_def"].statement == "legacy = T"  # a “…” quotation
    assert rows["demoTheory.double_def"].kind == "definition"


def test_naproche_forthel_labels(corpus, manifest) -> None:
    _import(corpus, manifest, "naproche")
    rows = _mentions(corpus, "naproche")
    assert sorted(rows) == [
        "examples/demo:Lemma 2.1",  # the title of key-value options
        "examples/demo:WT",  # the \label wins over the title
        "examples/demo:Widget theorem",
        "examples/demo:axiom 1",
        "examples/demo:gadget",
        "examples/demo:signature 1",
    ]  # the theorem outside the forthel block is prose and not read
    assert rows["examples/demo:gadget"].statement == "A gadget is a widget."  # % comment gone
    assert rows["examples/demo:WT"].extra["title"] == "Widget theorem"
    assert all(m.intake_class == "mentions" for m in rows.values())  # GPL: no text


def test_nasalib_library_licence_and_authored(corpus, manifest) -> None:
    res = _import(corpus, manifest, "nasalib")
    rows = _mentions(corpus, "nasalib")
    assert sorted(rows) == [
        "algebra@group",
        "algebra@group.assoc_law",
        "algebra@group.fullset_is_group",
        "algebra@group.inv_exists",
        "algebra@group.left_identity",
        "algebra@group.unit_unique",  # `lemma` in lower case
        "algebra@top",
        "sequences@seq_props",
        "sequences@seq_props.bounded_const",
        "sequences@top",
    ]  # oddlib states a licence math2 cannot read: not imported
    assert rows["algebra@group.left_identity"].statement == "FORALL (x: T): one * x = x"
    # the library's own licence (sequences/top.pvs: CC0) and the pin's where none is stated
    assert rows["sequences@seq_props.bounded_const"].licence == "CC0-1.0"
    assert rows["sequences@seq_props.bounded_const"].extra["licence_source"] == "stated"
    assert rows["algebra@group"].licence == "NASA-1.3"
    assert rows["algebra@group"].extra["licence_source"] == "default"
    assert all(m.intake_class == "mentions" for m in rows.values())  # the manifest's limit
    assert all(m.authored == "mixed" for m in rows.values())  # K6.5, copied to each mention
    assert res.counts["not imported (licence unrecognised)"] == 2
    assert res.counts["licence CC0-1.0"] == 3 and res.counts["licence NASA-1.3"] == 7
    assert any("oddlib/top.pvs: License: the Frobnicator Licence" in n for n in res.notes)


def test_acl2_packages_and_licence_per_book(corpus, manifest) -> None:
    res = _import(corpus, manifest, "acl2-books")
    by_name = _mentions(corpus, "acl2-books")
    assert sorted(by_name) == [
        "arith/natp:ACL2::LOCAL-HELPER",
        "arith/natp:ACL2::Mixed Case Name",  # |…| keeps its case
        "arith/natp:ACL2::NATP-OF-PLUS",
        "arith/natp:ACL2::PLUS-COMM-DISABLED",
        "arith/natp:STD::LEN-OF-CONS",  # the package written in the name
        "arith/pkg:BITOPS::LOGAND-SELF",  # the book's in-package
        "misc/gpl:ACL2::GPL-THM",
    ]  # a macro's `(defthm ,name …)`, a string, a comment: not theorems
    rows = {m.extra["symbol"]: m for m in by_name.values()}  # the symbol as ACL2 prints it
    assert rows["ACL2::LOCAL-HELPER"].extra["local"] is True
    assert rows["ACL2::NATP-OF-PLUS"].extra["local"] is False
    assert rows["ACL2::PLUS-COMM-DISABLED"].kind == "defthmd"
    assert rows["ACL2::NATP-OF-PLUS"].statement == (
        "(implies (and (natp a) (natp b)) (natp (+ a b)))"
    )
    assert rows["ACL2::NATP-OF-PLUS"].module == "arith/natp"
    assert {m.licence for m in rows.values()} == {"BSD-3-Clause", "MIT", "GPL-2.0-or-later"}
    assert rows["BITOPS::LOGAND-SELF"].licence == "MIT"
    assert rows["ACL2::GPL-THM"].intake_class == "mentions"
    assert res.counts["not imported (licence none stated)"] == 1  # misc/nolicence.lisp


def test_no_comment_becomes_text(corpus, manifest) -> None:
    for name in FOLDERS:
        _import(corpus, manifest, name)
    with corpus.session() as s:
        assert s.scalar(select(func.count()).select_from(TextRecord)) == 0
        statements = " ".join(
            s.scalars(select(Mention.statement).where(Mention.statement.is_not(None)))
        )
    # Rocq's `Definition str := "… (* no comment *)"`: its body is its statement, and a
    # string is code, not a comment
    literal = '"a string with . a dot and (* no comment *)"'
    assert f":= {literal}" in statements
    statements = statements.replace(literal, "")
    for word in ("comment", "nested", "Frobnicator", "Copyright"):
        assert word not in statements


def test_reimport_is_a_noop_and_run_is_recorded(corpus, manifest) -> None:
    first = _import(corpus, manifest, "hol4")
    again = _import(corpus, manifest, "hol4")
    assert not first.skipped_already_done and again.skipped_already_done
    with corpus.session() as s:
        run = s.scalar(select(Run).where(Run.job == "import", Run.key == "hol4@fixture0"))
        assert run.status == "done" and run.params["commit"] is None  # not a git checkout
        assert run.stats["declarations"] == 13


def _git_checkout(src: Path, dest: Path) -> str:
    shutil.copytree(src, dest)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}  # fmt: skip
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "fixture"]):
        subprocess.run(["git", *args], cwd=dest, check=True, env=env)
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=dest, check=True, capture_output=True)
    return out.stdout.decode().strip()


@pytest.mark.parametrize("name", sorted(FOLDERS))
def test_checkout_at_another_commit_is_refused(sqlite_store, tmp_path, name) -> None:
    root = tmp_path / "checkout"
    head = _git_checkout(SYS / FOLDERS[name], root)
    manifest = _manifest(tmp_path, {name: "0" * 40})
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    with pytest.raises(InputError, match=f"at commit {head[:12]}.*pins {name} at 000000000000"):
        _import(sqlite_store, manifest, name, root)
    assert _mentions(sqlite_store, name) == {}
    with sqlite_store.session() as s:  # the run says why it failed
        run = s.scalar(select(Run).where(Run.job == "import"))
        assert run.status == "failed" and "checkout is at commit" in run.stats["error"]


def test_checkout_at_the_pin_records_its_commit(sqlite_store, tmp_path) -> None:
    root = tmp_path / "checkout"
    head = _git_checkout(SYS / "hol-light", root)
    manifest = _manifest(tmp_path, {"hol-light": head})
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    res = _import(sqlite_store, manifest, "hol-light", root)
    assert f"at commit {head}" in res.notes[0]
    with sqlite_store.session() as s:
        run = s.scalar(select(Run).where(Run.key == f"hol-light@{head}"))
        assert run.params["commit"] == head and run.params["digest"] == f"git:{head}"


def test_thousand_plus_crosswalk_links_to_imported_mentions(corpus, manifest, tmp_path) -> None:
    thm = tmp_path / "1000-plus" / "_thm"
    thm.mkdir(parents=True)
    (thm / "Q11518.md").write_text(
        "---\n# Commutativity of addition\n\nwikidata: Q11518\nhol_light:\n- status: formalized\n"
        "  library: S\n  identifiers: [ADD_SYM]\nrocq:\n- status: formalized\n  library: S\n"
        "  identifiers: [Stdlib.Arith.Demo.Nat.twice]\n---\n"
    )
    _import(corpus, manifest, "hol-light")
    _import(corpus, manifest, "rocq-stdlib")
    load_builtin_importers()["1000-plus"].run(corpus, manifest.get("1000-plus"), thm.parent)
    with corpus.session() as s:
        rep = cluster(s)
        linked = {
            (c.system, c.target): c.mention_id
            for c in s.scalars(select(Crosswalk).where(Crosswalk.mention_id.is_not(None)))
        }
    assert rep.edges_linked == 2
    assert linked[("hol-light", "ADD_SYM")] == _mentions(corpus, "hol-light")["ADD_SYM"].id
    rocq = _mentions(corpus, "rocq-stdlib")["Stdlib.Arith.Demo.Nat.twice"]
    assert linked[("rocq", "Stdlib.Arith.Demo.Nat.twice")] == rocq.id
    assert _mentions(corpus, "hol-light")["ADD_SYM"].outcome == "node"


def test_a_file_the_lexer_cannot_read_is_reported_not_fatal(corpus, manifest, tmp_path) -> None:
    root = tmp_path / "hol"
    shutil.copytree(SYS / "hol-light", root)
    (root / "broken.ml").write_text("let X = 1;;\n(* never closed\n")
    res = _import(corpus, manifest, "hol-light", root)
    assert res.counts["files not read (lexing failed)"] == 1
    assert any("broken.ml:2: comment (* opened here is never closed" in n for n in res.notes)


def test_an_empty_checkout_is_refused(corpus, manifest, tmp_path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"no HOL4 \*Script.sml theory files"):
        _import(corpus, manifest, "hol4", tmp_path / "empty")


def test_maskers() -> None:
    # OCaml and Rocq lex strings inside comments; Standard ML does not
    assert mask_ml("f", '(* "*)" *) x').code.strip() == "x"
    assert mask_ml("f", '(* " *) x', sml=True).code.strip() == "x"
    with pytest.raises(InputError) as info:
        mask_ml("f.ml", 'let x = 1\n(* "unclosed *)\n')
    assert (info.value.path, info.value.line) == ("f.ml", 2)
    # quotations are opaque: `(*` inside a HOL term is not a comment
    assert mask_ml("f", "`(*) a` x", quotations=True).code == "`(*) a` x"
    # Rocq: "" is a quote inside a string
    assert mask_ml("f", '"a "" (* b" c', doubled_quote_strings=True).code.endswith("c")
    lisp = mask_lisp("f", '(a "b;c" #\\; |d;e| ; gone\n#| x #| y |# z |#)')
    assert "gone" not in lisp.code and "z" not in lisp.code and '"b;c"' in lisp.code
    assert mask_percent("f", "50\\% ok % gone", tex=True).code.rstrip() == "50\\% ok"
    assert mask_percent("f", 'x = "%" % gone').code.rstrip() == 'x = "%"'


@pytest.mark.parametrize(
    ("words", "spdx"),
    [
        ("License: A 3-clause BSD license.  See the LICENSE file", "BSD-3-Clause"),
        ("License: (An MIT/X11-style license)", "MIT"),
        ("distributed under the CC0 1.0 Universal license", "CC0-1.0"),
        (
            "GNU Lesser General Public License, either version 3 of the Licence, or any later",
            "LGPL-3.0-or-later",
        ),
        (
            "GNU General Public License as published; either version 2 of the License",
            "GPL-2.0-only",
        ),
        ("the Frobnicator Licence", None),
        ("GNU General Public License (no version given)", None),
    ],
)
def test_licence_statements(words: str, spdx: str | None) -> None:
    assert licence_of_statement(words) == spdx


def test_agda_unimath_checkout_at_another_commit_is_refused(sqlite_store, tmp_path) -> None:
    root = tmp_path / "agda"
    head = _git_checkout(FIXTURES / "agda-unimath", root)
    manifest = _manifest(tmp_path, {"agda-unimath": "0" * 40})
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    with pytest.raises(InputError, match=f"at commit {head[:12]}"):
        _import(sqlite_store, manifest, "agda-unimath", root)
    assert _mentions(sqlite_store, "agda-unimath") == {}
