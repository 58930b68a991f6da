"""`math2 build` has the data sets it imports as it has Mathlib: read from MATH2_DATA__DIR or the
data cache, else fetched at the pin (here from a local repository over file://); offline, or
refused by a hash, the build says so on the source's line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.build_helpers import SMALL_MM, assert_clean_error, math2, small_manifest, user_env
from tests.conftest import FIXTURES
from tests.data.helpers import commit, manifest, sha

PAGES = {
    f"_thm/{p.name}": p.read_text(encoding="utf-8")
    for p in sorted((FIXTURES / "lists" / "1000-plus" / "_thm").glob("*.md"))
}


@pytest.fixture(scope="module")
def upstream(tmp_path_factory) -> tuple[Path, str]:
    repo = tmp_path_factory.mktemp("upstream") / "thousand"
    return repo, commit(repo, {**PAGES, "index.md": "site\n"}, "the list")


def _env(home: Path, repo: Path, pin: str, **extra: str) -> dict[str, str]:
    (home / "set.mm").write_text(SMALL_MM)
    ds = {
        "name": "1000-plus",
        "title": "a 1000+-shaped list written for the tests",
        "repository": "https://example.org/never-fetched.git",
        "commit": pin,
        "licence": "Unlicense",
        "folder": "crosswalk/1000-plus",
        "fetch": "git",
        "files": {p: sha(t) for p, t in PAGES.items()},
    }
    return user_env(
        home,
        MATH2_MANIFEST=str(small_manifest(home, ("setmm", "1000-plus"))),
        MATH2_DATA__SETMM=str(home / "set.mm"),
        MATH2_DATA__EXTERNAL=str(manifest(home / "external.yaml", [ds])),
        MATH2_DATA__SET_URLS=json.dumps({"1000-plus": f"file://{repo}"}),
        **extra,
    )


def test_build_fetches_the_list_it_imports(upstream, tmp_path: Path) -> None:
    repo, pin = upstream
    env = _env(tmp_path, repo, pin)
    res = math2(["build"], env, tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "imported  1000-plus" in res.stdout and "entries: 5" in res.stdout
    assert "git fetch: " in res.stderr and "check 1000-plus: 5/5 files (100%) in " in res.stderr
    assert (tmp_path / "cache" / "data" / "crosswalk" / "1000-plus" / "_thm").is_dir()
    assert res.stdout.strip().splitlines()[-1].endswith("; exit 0")
    again = math2(["build"], env, tmp_path)  # from the cache: no fetch
    assert again.returncode == 0 and "git fetch" not in again.stderr, again.stderr


def test_offline_the_build_says_how_to_get_the_list(upstream, tmp_path: Path) -> None:
    repo, pin = upstream
    res = math2(["build", "--offline"], _env(tmp_path, repo, pin), tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr  # no Mathlib in this manifest
    flat = " ".join(res.stdout.split())
    line = flat[flat.index("skipped 1000-plus") :][:500]
    assert "not fetched (--offline)" in line and "math2 data fetch 1000-plus" in line, line
    assert "MATH2_DATA__DIR" in line and "Traceback" not in res.stderr


def test_a_given_folder_with_an_altered_page_is_refused(upstream, tmp_path: Path) -> None:
    repo, pin = upstream
    given = tmp_path / "given" / "crosswalk" / "1000-plus"
    for p, text in PAGES.items():
        (given / p).parent.mkdir(parents=True, exist_ok=True)
        (given / p).write_text(text, encoding="utf-8")
    bad = given / "_thm" / "Q11518.md"
    bad.write_text(PAGES["_thm/Q11518.md"] + "# one more line\n", encoding="utf-8")
    env = _env(tmp_path, repo, pin, MATH2_DATA__DIR=str(tmp_path / "given"))
    res = math2(["build"], env, tmp_path)
    flat = " ".join(res.stdout.split())
    line = flat[flat.index("skipped 1000-plus") :][:600]
    assert f"{bad}: refused" in line and sha(bad.read_text()) in line, line
    assert "git fetch" not in res.stderr  # a refused file is not fetched over
    # asked for by name, the list is not imported: one `error:` line naming the file and both
    # hashes, exit 2, no traceback
    res = math2(["import", "1000-plus"], env, tmp_path)
    pinned = sha(PAGES["_thm/Q11518.md"])
    assert_clean_error(
        res, "1000-plus not imported", f"{bad}: refused", sha(bad.read_text()), pinned
    )
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
