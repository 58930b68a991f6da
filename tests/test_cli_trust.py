"""What a new user meets: clear errors (exit 2, one line, no traceback), read-only commands that
create nothing, concurrent builds that wait, and search right after `math2 build`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.build_helpers import SMALL_MM, assert_clean_error, math2, small_manifest, user_env


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "set.mm").write_text(SMALL_MM)
    return tmp_path


def _env(home: Path, **extra: str) -> dict[str, str]:
    return user_env(
        home,
        MATH2_MANIFEST=str(small_manifest(home)),
        MATH2_DATA__SETMM=str(home / "set.mm"),
        **extra,
    )


def test_a_store_of_random_bytes(home: Path) -> None:
    (home / "math2.db").write_bytes(os.urandom(4096))
    for cmd in (["report"], ["build"], ["init"]):
        res = math2(cmd, _env(home), home)
        assert_clean_error(res, str(home / "math2.db"), "not a SQLite database")


def test_a_truncated_store(home: Path) -> None:
    env = _env(home)
    assert math2(["build"], env, home).returncode == 0
    db = home / "math2.db"
    with db.open("r+b") as fh:
        fh.truncate(db.stat().st_size // 3)
    assert_clean_error(math2(["report"], env, home), str(db), "truncated")


@pytest.mark.parametrize(
    "url,needle",
    [
        ("mysql://user:pw@localhost/corpus", "mysql is not supported"),
        ("postgresql://u@127.0.0.1:{port}/corpus", "cannot reach the PostgreSQL server"),
    ],
)
def test_unsupported_and_unreachable_databases(home: Path, url: str, needle: str) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = _env(home, MATH2_DB_URL=url.format(port=port))
    for cmd in (["report"], ["build"]):
        assert_clean_error(math2(cmd, env, home), needle)


def test_a_locked_store(home: Path) -> None:
    env = _env(home)
    assert math2(["init"], env, home).returncode == 0
    from math2.store import StoreLock, open_store

    store = open_store(env["MATH2_DB_URL"])
    with store.session() as s:  # held by a live process: this test
        s.add(StoreLock(name="build", holder=f"{socket.gethostname()}:{os.getpid()}"))
    res = math2(["build", "--no-wait"], env, home)
    assert_clean_error(res, "math2.db", "in use by another math2 build", "--no-wait")
    res = math2(["import", "setmm", "--no-wait"], env, home)
    assert_clean_error(res, "in use by another math2 build")
    store.close()


def test_two_concurrent_builds_on_one_new_store(home: Path) -> None:
    env = _env(home)
    cmd = [sys.executable, "-m", "math2", "build"]
    procs = [
        subprocess.Popen(cmd, env=env, cwd=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    outs = [(p.wait(timeout=600), *(x.decode() for x in p.communicate())) for p in procs]
    for rc, out, err in outs:
        assert rc == 0, (out, err)
        assert "Traceback" not in err and "IntegrityError" not in err and "UNIQUE" not in err
    assert sum("already imported at this pin" in out for _, out, _ in outs) == 1


def test_read_only_commands_create_no_files(tmp_path: Path) -> None:
    env = user_env(tmp_path)
    del env["MATH2_DB_URL"]  # the default: ./math2.db
    work = tmp_path / "work"
    work.mkdir()
    for cmd in (["report"], ["select"], ["search", "x", "--library", "setmm"]):
        res = math2(cmd, env, work)
        assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
        assert list(work.iterdir()) == [], cmd
    assert "math2 init" in math2(["report"], env, work).stderr


def test_a_sqlite_url_in_a_missing_folder(tmp_path: Path) -> None:
    env = user_env(tmp_path, MATH2_DB_URL=f"sqlite:///{tmp_path / 'no' / 'such' / 'c.db'}")
    for cmd in (["init"], ["build"], ["report"]):
        assert_clean_error(math2(cmd, env, tmp_path), "does not exist")
    assert not (tmp_path / "no").exists()


def test_import_of_an_unknown_source_and_without_a_store(home: Path) -> None:
    env = _env(home)
    res = math2(["import", "setmm"], env, home)
    assert_clean_error(res, "no store at", "math2 init")
    assert not (home / "math2.db").exists()
    assert math2(["init"], env, home).returncode == 0
    res = math2(["import", "nosuchsource"], env, home)
    assert_clean_error(res, "no source named 'nosuchsource'", "setmm", "math2 sources check")


def test_search_works_right_after_build(home: Path) -> None:
    env = _env(home)
    res = math2(["build"], env, home)
    assert res.returncode == 0, res.stderr
    assert "search index setmm" in res.stdout and "BM25 over 2 declarations" in res.stdout
    res = math2(["search", "modus ponens detachment", "--library", "setmm", "-k", "1"], env, home)
    assert res.returncode == 0, res.stderr
    assert "ax-mp" in res.stdout
    again = math2(["build"], env, home)
    assert "up to date (2 declarations)" in again.stdout
