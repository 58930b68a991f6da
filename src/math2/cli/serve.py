"""`math2 serve` (the web app) and `math2 reviewers add|list|deactivate|remove` (accounts for
reviewing and grading)."""

from __future__ import annotations

import getpass
import os
import socket
import sys
from pathlib import Path
from typing import Annotated

import typer

from math2.cli._common import _store, app, err, fail, out, state

reviewers_app = typer.Typer(help="Reviewer accounts for the web app.", no_args_is_help=True)
app.add_typer(reviewers_app, name="reviewers")


def _read_password(name: str, from_stdin: bool) -> str:
    """The password from stdin's first line, or typed twice at a prompt."""
    if from_stdin or not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass(f"password for {name}: ")
    if first != getpass.getpass("again: "):
        raise fail("the two passwords differ")
    return first


def _add(name: str, from_stdin: bool) -> None:
    from math2.web.accounts import AccountError, add_reviewer

    password = _read_password(name, from_stdin)
    try:
        add_reviewer(_store(migrate=True), name, password)
    except AccountError as exc:
        raise fail(str(exc)) from exc
    out.print(f"reviewer {name} can sign in")


@reviewers_app.command("add")
def reviewers_add(
    name: Annotated[str, typer.Argument(help="The reviewer's sign-in name.")],
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from stdin.")
    ] = False,
) -> None:
    """Create a reviewer (or set a new password); the password is stored argon2-hashed."""
    _add(name, password_stdin)


@reviewers_app.command("list")
def reviewers_list() -> None:
    """Every reviewer account: active or not, and how many signed-in sessions it has."""
    from math2.web.accounts import list_reviewers

    rows = list_reviewers(_store(migrate=True))
    if not rows:
        out.print("no reviewers (add one with `math2 reviewers add NAME`)")
    for r in rows:
        state_ = "active" if r.active else "deactivated"
        out.print(f"{r.username}\t{state_}\t{r.sessions} session(s)")


def _change(name: str, how) -> None:
    from math2.web.accounts import AccountError

    try:
        how(_store(migrate=True), name)
    except AccountError as exc:
        raise fail(str(exc)) from exc


@reviewers_app.command("deactivate")
def reviewers_deactivate(
    name: Annotated[str, typer.Argument(help="The reviewer's sign-in name.")],
) -> None:
    """Stop a reviewer from signing in and end their sessions now (`add` reactivates)."""
    from math2.web.accounts import deactivate_reviewer

    _change(name, deactivate_reviewer)
    out.print(f"reviewer {name} is deactivated; their sessions have ended")


@reviewers_app.command("remove")
def reviewers_remove(
    name: Annotated[str, typer.Argument(help="The reviewer's sign-in name.")],
) -> None:
    """Delete a reviewer account and its sessions (their reviews keep their name)."""
    from math2.web.accounts import remove_reviewer

    _change(name, remove_reviewer)
    out.print(f"reviewer {name} is removed")


def _loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _proxy_secret(value: str | None, path: Path | None) -> str | None:
    """The proxy's secret from the flag or the file's first line; a short one is refused."""
    from math2.web.app import MIN_PROXY_SECRET

    if path is not None:
        try:
            value = path.read_text(encoding="utf-8").splitlines()[0].strip() if path else None
        except (OSError, UnicodeDecodeError, IndexError) as exc:
            raise fail(
                f"--trusted-header-secret-file {path}: cannot read a secret ({exc})"
            ) from exc
    if value is None:
        return None
    if len(value) < MIN_PROXY_SECRET:
        raise fail(
            f"the proxy's secret has {len(value)} characters; give {MIN_PROXY_SECRET} or more "
            "(e.g. `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
        )
    return value


@app.command("serve")
def serve(
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    host: Annotated[
        str, typer.Option(help="Address to listen on (127.0.0.1: this machine only).")
    ] = "127.0.0.1",
    add_reviewer: Annotated[
        str | None,
        typer.Option(
            "--add-reviewer",
            help="Create this reviewer (password from the prompt or stdin) and exit.",
        ),
    ] = None,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="With --add-reviewer: read it from stdin.")
    ] = False,
    trusted_header: Annotated[
        str | None,
        typer.Option(
            help="A header set by a reverse proxy to the signed-in reviewer's name; needs "
            "--trust-proxy and the proxy's secret (--trusted-header-secret-file), and is believed "
            "only from the proxy's address with that secret."
        ),
    ] = None,
    trusted_header_secret: Annotated[
        str | None,
        typer.Option(
            help="The secret the proxy adds in X-Math2-Proxy-Secret with every request (32 or "
            "more characters; compared in constant time): without it the identity header counts "
            "for no one. Prefer --trusted-header-secret-file (a flag shows in the process list).",
        ),
    ] = None,
    trusted_header_secret_file: Annotated[
        Path | None,
        typer.Option(help="A file whose first line is that secret."),
    ] = None,
    trust_proxy: Annotated[
        list[str] | None,
        typer.Option(
            "--trust-proxy",
            help="A reverse proxy (an address, a network such as 10.0.0.0/24, or 'loopback' for "
            "127.0.0.1 and ::1) whose X-Forwarded-For/-Proto and --trusted-header are believed "
            "(repeatable; none by default).",
        ),
    ] = None,
    https_only: Annotated[
        bool, typer.Option(help="Send the session cookie over HTTPS only (behind TLS).")
    ] = False,
    uds: Annotated[
        Path | None,
        typer.Option(
            help="Listen on this unix socket instead of TCP (--host and --port unused): made "
            "with mode 0660, so only this user and its group (the proxy's) can connect; every "
            "peer is then the proxy, whose X-Forwarded-For and --trusted-header are believed.",
        ),
    ] = None,
) -> None:
    """Browse the corpus, review agent text and bindings, grade audits (until interrupted).

    Sessions are signed with MATH2_WEB_SECRET, or a key generated once into the store and kept
    (a restart keeps the sessions)."""
    if add_reviewer:
        _add(add_reviewer, password_stdin)
        return
    if trusted_header and not (trust_proxy or uds):
        raise fail(
            "--trusted-header needs --trust-proxy ADDRESS (the proxy that sets it; "
            "'loopback' when it runs on this machine): otherwise anyone could send the header"
        )
    secret_ = _proxy_secret(trusted_header_secret, trusted_header_secret_file)
    if trusted_header and secret_ is None:
        raise fail(
            "--trusted-header needs --trusted-header-secret-file FILE (a secret the proxy adds in "
            "X-Math2-Proxy-Secret): a process on the proxy's machine could otherwise send the "
            "header and decide as any reviewer"
        )
    from math2.web.proxy import ProxyError, TrustedProxies

    try:
        proxies = TrustedProxies.parse(trust_proxy or [], unix_socket=uds is not None)
    except ProxyError as exc:
        raise fail(str(exc)) from exc
    if uds is None and not _loopback(host):
        plain = "" if https_only else " (without --https-only, over plain HTTP)"
        err.print(
            f"[yellow]warning:[/] listening on {host}, not loopback: every machine that can "
            f"reach it can open the site and try to sign in{plain}",
            highlight=False,
        )
    import uvicorn

    from math2.web import create_app

    app_ = create_app(
        _store(),
        Path(state.settings.retrieval.index_dir),
        secret=os.environ.get("MATH2_WEB_SECRET"),
        trusted_header=trusted_header,
        trusted_header_secret=secret_,
        trusted_proxies=proxies,
        https_only=https_only,
    )
    # The app reads forwarded headers itself, from --trust-proxy peers only (math2.web.proxy):
    # uvicorn's own reading, which trusts 127.0.0.1 by default, stays off.
    allow = proxies.as_strings()
    if uds is None:
        out.print(f"math2 on http://{host}:{port}/")
        uvicorn.run(
            app_,
            host=host,
            port=port,
            log_level="warning",
            proxy_headers=False,
            forwarded_allow_ips=allow,
        )
        return
    sock = _unix_socket(uds)
    out.print(f"math2 on unix:{uds} (mode 0660)")
    try:
        uvicorn.run(
            app_, fd=sock.fileno(), log_level="warning", proxy_headers=False,
            forwarded_allow_ips=allow,
        )  # fmt: skip
    finally:
        sock.close()
        uds.unlink(missing_ok=True)


def _unix_socket(path: Path) -> socket.socket:
    """A listening unix socket at `path`, mode 0660 from its creation (uvicorn's own `--uds`
    makes it 0666: any local user could connect); a stale socket there (left by a server that
    was stopped with a signal) is replaced."""
    import stat

    if path.exists() or path.is_symlink():
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise fail(f"--uds {path}: there is a file there that is not a socket; remove it")
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o117)
    try:
        sock.bind(str(path))
    except OSError as exc:
        sock.close()
        raise fail(f"--uds {path}: cannot listen there ({exc.strerror})") from exc
    finally:
        os.umask(old)
    os.chmod(path, 0o660)
    sock.listen(2048)
    return sock
