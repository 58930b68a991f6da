"""`math2 reviewers add` and `math2 serve --add-reviewer`: accounts from the command line."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from math2.cli import app
from math2.store import open_store
from math2.web import authenticate


def test_reviewer_accounts_from_the_command_line(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    assert CliRunner().invoke(app, ["--db", db, "init"]).exit_code == 0  # only init creates
    res = CliRunner().invoke(
        app, ["--db", db, "reviewers", "add", "carol", "--password-stdin"], input="a long secret\n"
    )
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(
        app,
        ["--db", db, "serve", "--add-reviewer", "dave", "--password-stdin"],
        input="another one\n",
    )
    assert res.exit_code == 0, res.output
    store = open_store(db)
    assert authenticate(store, "carol", "a long secret") == "carol"
    assert authenticate(store, "dave", "another one") == "dave"
    res = CliRunner().invoke(
        app, ["--db", db, "reviewers", "add", "erin", "--password-stdin"], input="short\n"
    )
    assert res.exit_code == 2 and "at least 8" in res.output
    assert authenticate(store, "erin", "short") is None
    store.close()


def test_list_deactivate_and_remove_reviewers(tmp_path: Path) -> None:
    from math2.web.accounts import session_reviewer, start_session

    db = str(tmp_path / "m.db")
    run = CliRunner().invoke
    assert run(app, ["--db", db, "init"]).exit_code == 0  # only init and build make a store
    assert (
        run(
            app,
            ["--db", db, "reviewers", "add", "carol", "--password-stdin"],
            input="a long secret\n",
        ).exit_code
        == 0
    )
    store = open_store(db)
    token = start_session(store, "carol")
    res = run(app, ["--db", db, "reviewers", "list"])
    assert res.exit_code == 0 and "carol active 1 session(s)" in " ".join(res.output.split())
    res = run(app, ["--db", db, "reviewers", "deactivate", "carol"])
    assert res.exit_code == 0, res.output
    assert session_reviewer(store, token) is None  # the session ended with the account
    assert authenticate(store, "carol", "a long secret") is None
    listed = run(app, ["--db", db, "reviewers", "list"]).output
    assert "carol deactivated 0 session(s)" in " ".join(listed.split())
    res = run(app, ["--db", db, "reviewers", "remove", "carol"])
    assert res.exit_code == 0
    assert "carol" not in run(app, ["--db", db, "reviewers", "list"]).output
    res = run(app, ["--db", db, "reviewers", "remove", "carol"])
    assert res.exit_code == 2 and "no reviewer 'carol'" in res.output
    store.close()


def test_serve_refuses_a_trusted_header_without_a_trusted_proxy(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    res = CliRunner().invoke(
        app, ["--db", db, "serve", "--host", "0.0.0.0", "--trusted-header", "X-Remote-User"]
    )
    assert res.exit_code == 2 and "--trust-proxy" in res.output


def test_serve_refuses_a_bad_proxy_address(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    res = CliRunner().invoke(app, ["--db", db, "serve", "--trust-proxy", "not-an-ip"])
    assert res.exit_code == 2
    said = " ".join(res.output.split())
    assert "--trust-proxy 'not-an-ip' is not an IP address or network" in said


def test_serve_leaves_forwarded_headers_to_the_app(tmp_path: Path, monkeypatch) -> None:
    import uvicorn

    db = str(tmp_path / "m.db")
    assert CliRunner().invoke(app, ["--db", db, "init"]).exit_code == 0
    seen: dict = {}
    monkeypatch.setattr(uvicorn, "run", lambda app_, **kw: seen.update(kw, app=app_))
    res = CliRunner().invoke(app, ["--db", db, "serve"])
    assert res.exit_code == 0, res.output
    assert seen["proxy_headers"] is False and seen["forwarded_allow_ips"] == []
    assert not seen["app"].state.trusted_proxies
    args = ["--trust-proxy", "10.0.0.0/24", "--trust-proxy", "loopback"]
    res = CliRunner().invoke(app, ["--db", db, "serve", "--trusted-header", "X-Remote-User", *args])
    assert res.exit_code == 2 and "--trusted-header-secret-file" in res.output  # no secret
    short = tmp_path / "short"
    short.write_text("too short\n")
    secret = tmp_path / "secret"
    secret.write_text("k" * 43 + "\n")
    header = ["--trusted-header", "X-Remote-User"]
    res = CliRunner().invoke(
        app, ["--db", db, "serve", *header, "--trusted-header-secret-file", str(short), *args]
    )
    assert res.exit_code == 2 and "9 characters; give 32 or more" in res.output
    res = CliRunner().invoke(
        app, ["--db", db, "serve", *header, "--trusted-header-secret-file", str(secret), *args]
    )
    assert res.exit_code == 0, res.output
    assert seen["app"].state.trusted_header_secret == b"k" * 43
    assert seen["forwarded_allow_ips"] == ["10.0.0.0/24", "127.0.0.1/32", "::1/128"]
    assert "10.0.0.9" in seen["app"].state.trusted_proxies
