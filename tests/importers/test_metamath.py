"""The Metamath parser: the real set.mm (counts checked against the metamath program) and
malformed databases failing with file and line."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from math2.importers.metamath import MetamathError, is_full_sentence, parse

SETMM = Path("/usr/share/metamath/databases/set.mm")


@pytest.fixture(scope="module")
def setmm():
    if not SETMM.exists():
        import os

        if os.environ.get("CI"):
            pytest.fail("set.mm missing in CI (Debian metamath-databases)")
        pytest.skip("Debian's metamath-databases is not installed")
    return parse(SETMM)


def test_every_axiom_and_theorem_of_setmm_is_found(setmm) -> None:
    assert (setmm.axioms, setmm.theorems) == (2667, 37759)


def test_counts_agree_with_the_metamath_program(setmm, tmp_path: Path) -> None:
    exe = shutil.which("metamath")
    if exe is None:
        pytest.skip("the metamath program is not installed")
    out = subprocess.run(
        [exe, "set scroll continuous", f'read "{SETMM}"', "exit"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    ).stdout
    m = re.search(r"(\d+) are \$a and (\d+) are \$p", out)
    assert m, out[-500:]
    assert (setmm.axioms, setmm.theorems) == (int(m.group(1)), int(m.group(2)))


def test_statement_details(setmm) -> None:
    by = {s.label: s for s in setmm.statements}
    ax = by["ax-mp"]
    assert (ax.keyword, ax.kind, ax.typecode) == ("a", "axiom", "|-")
    assert ax.hypotheses == ["min", "maj"]
    assert ax.contributions[0].who == "NM"
    assert setmm.contributors["NM"] == "Norman Megill"
    py = by["pythag"]
    assert py.kind == "theorem"
    assert py.section[0] == "BASIC REAL AND COMPLEX FUNCTIONS"
    assert py.contributions[0].who == "David A. Wheeler"
    assert "Pythagorean theorem" in (py.comment or "")
    assert by["df-bi"].kind == "definition" and by["wi"].kind == "syntax"
    assert len(setmm.typesetting) == 1 and setmm.jcomments
    assert sum(1 for s in setmm.statements if s.discouraged) > 4000


GOOD = """$( tiny $)
$c ( ) -> wff |- $.
$v ph ps $.
wph $f wff ph $.
wps $f wff ps $.
$(
#*#*#*#*
  A chapter
#*#*#*#*
$)
wi $a wff ( ph -> ps ) $.
${
  min $e |- ph $.
  maj $e |- ( ph -> ps ) $.
  $( Modus ponens, the rule of detachment.  (Contributed by NM, 5-Aug-1993.)
     (New usage is discouraged.) $)
  ax-mp $a |- ps $.
$}
${
  h $e |- ph $.
  $( A theorem with a compressed proof and a comment $( inside $) no, below. $)
  th1 $p |- ph $= ( ) B $.
$}
th2 $p |- ( ph -> ph ) $= ? $.
"""


def test_small_database(tmp_path: Path) -> None:
    bad_comment_free = GOOD.replace(
        "$( A theorem with a compressed proof and a comment $( inside $) no, below. $)",
        "$( Theorem one here. $)",
    )
    f = tmp_path / "t.mm"
    f.write_text(bad_comment_free)
    db = parse(f)
    assert [s.label for s in db.statements] == ["wi", "ax-mp", "th1", "th2"]
    mp = db.statements[1]
    assert mp.section == ("", "A chapter")
    assert mp.discouraged == ["New usage"]
    assert mp.hypotheses == ["min", "maj"]
    assert db.statements[3].hypotheses == []  # scope closed
    assert db.statements[2].comment.strip() == "Theorem one here."


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("$c a $.\n$( never closed\n\nwi $a wff a $.\n", 2, "unterminated comment"),
        ("$c a $.\n\nx $a wff a\n", 3, "without its closing"),
        ("$c a $.\nx y $a wff a $.\n", 2, "one label"),
        ("$c a $.\n$a wff a $.\n", 2, "needs a label"),
        ("$c a $.\n${\n${\n$}\n", 2, "${ is never closed"),
        ("$}\n", 1, "$} without ${"),
        ("$c a $.\nth $p wff a $= ( ) $$ $.\n", 2, "unexpected $"),
        ("$c a $.\nth $p wff a $= ( x ) b!c $.\n", 2, "neither compressed nor normal"),
        ("$c a $.\n$q\n", 2, "unknown keyword"),
        ("$c a $.\nstray\n", 2, "stray text"),
        ("$c a $.\n$( a $( nested $)\n", 2, "$( inside a comment"),
    ],
)
def test_malformed_databases(tmp_path: Path, text: str, line: int, reason: str) -> None:
    f = tmp_path / "bad.mm"
    f.write_text(text)
    with pytest.raises(MetamathError) as info:
        parse(f)
    assert info.value.path == str(f)
    assert info.value.line == line, str(info.value)
    assert reason in info.value.reason


def test_invalid_utf8(tmp_path: Path) -> None:
    f = tmp_path / "bad.mm"
    f.write_bytes(b"$c a $.\n$( caf\xe9 $)\n")
    with pytest.raises(Exception, match=r"bad.mm:2: invalid UTF-8"):
        parse(f)


@pytest.mark.parametrize(
    ("comment", "full"),
    [
        ("Modus ponens, the rule of detachment.  (Contributed by NM, 5-Aug-1993.)", True),
        ("~ ax-mp with the hypotheses swapped, for convenience.", True),
        ("(Contributed by NM, 5-Aug-1993.)", False),
        ("Syntax.", False),
        ("wff variable sequence", False),
        (None, False),
    ],
)
def test_full_sentence(comment, full) -> None:
    assert is_full_sentence(comment) is full
