"""Data is checked against its pin before anything is written: empty data, other data at a
recorded pin, undeclared set.mm symbols, a checkout off its pin; `--force` replaces in one
transaction; a refused import leaves nothing that blocks the next one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from sqlalchemy import func, select

from math2.errors import InputError
from math2.importers import common
from math2.importers.common import ImportConflict, replacing
from math2.importers.mathlib import import_lean_library
from math2.importers.metamath import MetamathError
from math2.importers.setmm import import_setmm
from math2.importers.theorem_lists import import_mathlib_lists
from math2.sources import load_manifest, sync_manifest
from math2.store import Crosswalk, Mention, Node, Run, TextRecord
from tests.build_helpers import SMALL_MM, assert_clean_error, math2, small_manifest, user_env
from tests.conftest import REPO

MANIFEST = load_manifest(REPO / "manifests" / "sources.yaml")
SETMM = MANIFEST.get("setmm")
FIXTURE = REPO / "tests" / "fixtures" / "leanproj"


@pytest.fixture
def corpus(store):
    with store.session() as s:
        sync_manifest(s, MANIFEST)
    return store


def _count(store, model) -> int:
    with store.session() as s:
        return s.scalar(select(func.count()).select_from(model))


def _names(store) -> list[str]:
    with store.session() as s:
        return sorted(s.scalars(select(Mention.name)))


@pytest.mark.parametrize("content", ["", "$( only a comment $)\n", "\n\n  \n"])
def test_empty_setmm_is_refused_and_blocks_nothing(corpus, tmp_path: Path, content) -> None:
    f = tmp_path / "set.mm"
    f.write_text(content)
    with pytest.raises(InputError, match="no \\$a or \\$p statements") as info:
        import_setmm(corpus, SETMM, f)
    assert info.value.path == str(f) and "math2 import setmm" in str(info.value)
    assert _count(corpus, Mention) == 0 and _count(corpus, Run) == 0
    f.write_text(SMALL_MM)
    res = import_setmm(corpus, SETMM, f)
    assert res.counts["mentions"] == 3


def test_an_undeclared_symbol_is_refused_with_its_line(corpus, tmp_path: Path) -> None:
    f = tmp_path / "set.mm"
    f.write_text(SMALL_MM.replace("id $p |- ( ph -> ph )", "id $p |- ( ph -> ch )"))
    with pytest.raises(MetamathError, match="symbol 'ch' is not declared") as info:
        import_setmm(corpus, SETMM, f)
    assert info.value.line == 15 and "intact set.mm" in str(info.value)
    # a $v is active only inside its ${ … $} block
    f.write_text(
        SMALL_MM.replace("  min $e", "  $v ch $.\n  min $e").replace(
            "id $p |- ( ph", "id $p |- ( ch"
        )
    )
    with pytest.raises(MetamathError, match="'ch' is not declared"):
        import_setmm(corpus, SETMM, f)
    f.write_text(SMALL_MM.replace("$c ( )", "$c ( ) ph"))
    with pytest.raises(MetamathError, match="declared twice"):
        import_setmm(corpus, SETMM, f)
    assert _count(corpus, Mention) == 0 and _count(corpus, Run) == 0


def test_other_data_at_a_pin_names_the_way_out_and_force_replaces_it(corpus, tmp_path) -> None:
    f = tmp_path / "set.mm"
    f.write_text(SMALL_MM.replace("id $p", "idx $p"))
    import_setmm(corpus, SETMM, f)
    g = tmp_path / "good.mm"
    g.write_text(SMALL_MM)
    with pytest.raises(ImportConflict) as info:
        import_setmm(corpus, SETMM, g)
    msg = str(info.value)
    assert f"math2 import setmm {g} --force" in msg and "math2 bump setmm" in msg
    with replacing():
        res = import_setmm(corpus, SETMM, g)
    assert res.counts["mentions"] == 3
    assert _names(corpus) == ["ax-mp", "id", "wi"]
    assert _count(corpus, TextRecord) == 2
    with corpus.session() as s:
        runs = s.scalars(select(Run).where(Run.job == "import")).all()
    assert len(runs) == 1 and runs[0].status == "done" and runs[0].params["path"] == str(g)
    assert import_setmm(corpus, SETMM, g).skipped_already_done


def test_force_is_one_transaction(corpus, tmp_path: Path, monkeypatch) -> None:
    f = tmp_path / "set.mm"
    f.write_text(SMALL_MM)
    import_setmm(corpus, SETMM, f)
    g = tmp_path / "other.mm"
    g.write_text(SMALL_MM.replace("id $p", "id2 $p"))

    def broken(*_a, **_k):
        raise RuntimeError("killed half-way through the new rows")

    monkeypatch.setattr("math2.importers.setmm.insert_mentions", broken)
    with replacing(), pytest.raises(RuntimeError):
        import_setmm(corpus, SETMM, g)
    assert _names(corpus) == ["ax-mp", "id", "wi"] and _count(corpus, TextRecord) == 2
    assert not common._FORCE.get()


def test_force_replaces_a_theorem_list(corpus, tmp_path: Path) -> None:
    f = tmp_path / "100.yaml"
    f.write_text("1:\n  title: First\n  decl: a_thm\n2:\n  title: Second\n  decl: b_thm\n")
    entry = MANIFEST.get("mathlib-theorem-lists")
    import_mathlib_lists(corpus, entry, f)
    f.write_text("1:\n  title: First\n  decl: c_thm\n")
    with replacing():
        import_mathlib_lists(corpus, entry, f)
    with corpus.session() as s:
        assert sorted(s.scalars(select(Crosswalk.target))) == ["c_thm"]
        assert sorted(s.scalars(select(Node.key))) == ["w100:1"]


def test_a_checkout_off_its_pin_is_refused(corpus, tmp_path: Path) -> None:
    repo = tmp_path / "mathlib"
    subprocess.run(["cp", "-r", str(FIXTURE), str(repo)], check=True)
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "fixture"], check=True)
    with pytest.raises(InputError, match="manifest pins mathlib at f4a75053ba65") as info:
        import_lean_library(corpus, MANIFEST.get("mathlib"), repo)
    assert "git -C" in str(info.value) and "checkout f4a75053" in str(info.value)
    assert _count(corpus, Mention) == 0 and _count(corpus, Run) == 0


def test_cli_refusal_then_build_then_force(tmp_path: Path) -> None:
    empty = tmp_path / "empty.mm"
    empty.write_text("")
    good = tmp_path / "set.mm"
    good.write_text(SMALL_MM)
    env = user_env(
        tmp_path,
        MATH2_MANIFEST=str(small_manifest(tmp_path)),
        MATH2_DATA__SETMM=str(good),
    )
    assert math2(["init"], env, tmp_path).returncode == 0
    res = math2(["import", "setmm", str(empty)], env, tmp_path)
    assert_clean_error(res, str(empty), "no $a or $p statements", "complete data")
    res = math2(["build"], env, tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "imported  setmm" in res.stdout
    other = tmp_path / "other.mm"
    other.write_text(SMALL_MM.replace("id $p", "id2 $p"))
    res = math2(["import", "setmm", str(other)], env, tmp_path)
    assert_clean_error(res, "--force")
    res = math2(["import", "setmm", str(other), "--force"], env, tmp_path)
    assert res.returncode == 0, res.stderr
    assert "mentions: 3" in res.stdout


def test_force_never_drops_a_persons_binding(corpus, tmp_path: Path) -> None:
    from math2.store import Binding

    f = tmp_path / "set.mm"
    f.write_text(SMALL_MM)
    import_setmm(corpus, SETMM, f)
    with corpus.session() as s:
        node = Node(key="wd:Q1", title="x")
        s.add(node)
        s.flush()
        m = s.scalar(select(Mention).where(Mention.name == "id"))
        s.add(Binding(node_id=node.id, mention_id=m.id, status="confirmed"))
    g = tmp_path / "other.mm"
    g.write_text(SMALL_MM.replace("id $p", "id2 $p"))
    with replacing(), pytest.raises(ImportConflict, match="binding"):
        import_setmm(corpus, SETMM, g)
    assert _names(corpus) == ["ax-mp", "id", "wi"]


def test_debians_setmm_at_another_version_is_refused(corpus, tmp_path, monkeypatch) -> None:
    f = tmp_path / "set.mm"
    f.write_text(SMALL_MM)
    monkeypatch.setattr("math2.importers.setmm.debian_version", lambda _p: "0.0.0~2025-1")
    with pytest.raises(InputError, match=r"is 0\.0\.0~2025-1, the manifest pins setmm at") as info:
        import_setmm(corpus, SETMM, f)
    assert "metamath-databases=0.0.0~20210101.git55fe226-2" in str(info.value)
    assert _count(corpus, Mention) == 0 and _count(corpus, Run) == 0
    monkeypatch.setattr(
        "math2.importers.setmm.debian_version", lambda _p: SETMM.current_pin.version
    )
    assert import_setmm(corpus, SETMM, f).counts["mentions"] == 3
