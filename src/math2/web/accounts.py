"""Reviewer accounts (local users with argon2-hashed passwords, the `reviewers` table) and their
signed-in sessions (the `web_sessions` table: a session ends when its row goes)."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, func, select

from math2.errors import Math2Error
from math2.store import Reviewer, Store, WebSession

_hasher = PasswordHasher()
# Verified when a name is unknown, so that a wrong name and a wrong password take the same time.
_DUMMY = _hasher.hash("not a password of anyone")
MIN_PASSWORD = 8
SESSION_HOURS = 12


class AccountError(Math2Error):
    """A reviewer account cannot be created or changed as asked."""


@dataclass(frozen=True)
class ReviewerInfo:
    """One account as `math2 reviewers list` shows it."""

    username: str
    active: bool
    sessions: int
    created_at: dt.datetime | None


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _aware(t: dt.datetime) -> dt.datetime:
    return t if t.tzinfo else t.replace(tzinfo=dt.UTC)  # SQLite hands back naive times


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def add_reviewer(store: Store, username: str, password: str) -> None:
    """Create a reviewer, or set a new password for an existing one (and reactivate it); a new
    password ends every session of the account."""
    username = username.strip()
    if not username or len(username) > 200 or any(c.isspace() for c in username):
        raise AccountError(f"bad reviewer name {username!r}: 1-200 characters, no spaces")
    if len(password) < MIN_PASSWORD:
        raise AccountError(f"the password must have at least {MIN_PASSWORD} characters")
    digest = _hasher.hash(password)
    with store.session() as s:
        row = s.scalar(select(Reviewer).where(Reviewer.username == username))
        if row is None:
            s.add(Reviewer(username=username, password_hash=digest, active=True))
        else:
            row.password_hash = digest
            row.active = True
            s.execute(delete(WebSession).where(WebSession.reviewer_id == row.id))


def _existing(s, username: str) -> Reviewer:
    row = s.scalar(select(Reviewer).where(Reviewer.username == username))
    if row is None:
        raise AccountError(f"there is no reviewer {username!r} (see `math2 reviewers list`)")
    return row


def deactivate_reviewer(store: Store, username: str) -> int:
    """Stop an account from signing in and end its sessions (how many ended); its reviews stay.
    `math2 reviewers add` with a new password reactivates it."""
    with store.session() as s:
        row = _existing(s, username)
        row.active = False
        return s.execute(delete(WebSession).where(WebSession.reviewer_id == row.id)).rowcount


def remove_reviewer(store: Store, username: str) -> None:
    """Delete an account and its sessions. Its reviews and grades keep the name they were
    signed with (they are records of what a person decided)."""
    with store.session() as s:
        row = _existing(s, username)
        s.execute(delete(WebSession).where(WebSession.reviewer_id == row.id))
        s.delete(row)


def list_reviewers(store: Store) -> list[ReviewerInfo]:
    """Every account with its number of live sessions, by name."""
    now = _now()
    with store.session() as s:
        live = dict(
            s.execute(
                select(WebSession.reviewer_id, func.count())
                .where(WebSession.expires_at > now)
                .group_by(WebSession.reviewer_id)
            ).all()
        )
        return [
            ReviewerInfo(r.username, bool(r.active), live.get(r.id, 0), r.created_at)
            for r in s.scalars(select(Reviewer).order_by(Reviewer.username))
        ]


def authenticate(store: Store, username: str, password: str) -> str | None:
    """The reviewer's name when the password is right and the account active, else None.

    Slow on purpose (argon2): call it from a worker thread, never on the event loop."""
    with store.session() as s:
        row = s.scalar(select(Reviewer).where(Reviewer.username == username))
        digest = row.password_hash if row is not None and row.password_hash else _DUMMY
        try:
            ok = _hasher.verify(digest, password)
        except (VerificationError, InvalidHashError):
            ok = False
        if row is None or not row.active or not row.password_hash or not ok:
            return None
        if _hasher.check_needs_rehash(row.password_hash):
            row.password_hash = _hasher.hash(password)
        return row.username


def session_key(store: Store) -> str:
    """The key that signs session cookies: generated once into the store (`web_secrets`) and
    kept, so a restart, and every server process over the store, keep the sessions. The first
    writer wins (`INSERT … ON CONFLICT DO NOTHING`), racing processes read the same key."""
    from math2.store.models import WebSecret
    from math2.store.upsert import conflict_stmt

    with store.session() as s:
        dialect = s.get_bind().dialect.name
        s.execute(
            conflict_stmt(dialect, WebSecret.__table__, ("name",)),
            {"name": "session", "value": secrets.token_urlsafe(48)},
        )
    with store.session() as s:
        return s.scalar(select(WebSecret.value).where(WebSecret.name == "session")) or ""


def has_password(store: Store, username: str) -> bool:
    """Whether `username` is an active account with a password (whose check costs a hash)."""
    with store.session() as s:
        row = s.execute(
            select(Reviewer.active, Reviewer.password_hash).where(Reviewer.username == username)
        ).first()
    return row is not None and bool(row.active) and bool(row.password_hash)


def start_session(store: Store, username: str) -> str:
    """A new session of an active reviewer: the token for the cookie (only its digest is kept)."""
    token = secrets.token_urlsafe(32)
    now = _now()
    with store.session() as s:
        row = _existing(s, username)
        if not row.active:
            raise AccountError(f"reviewer {username!r} is deactivated")
        s.execute(delete(WebSession).where(WebSession.expires_at <= now))  # tidy expired ones
        s.add(
            WebSession(
                digest=_digest(token),
                reviewer_id=row.id,
                created_at=now,
                expires_at=now + dt.timedelta(hours=SESSION_HOURS),
            )
        )
    return token


def session_reviewer(store: Store, token: str | None) -> str | None:
    """The active reviewer whose live session this token is, else None (checked per request)."""
    if not token or not isinstance(token, str) or len(token) > 200:
        return None
    with store.session() as s:
        row = s.execute(
            select(Reviewer.username, Reviewer.active, WebSession.expires_at)
            .join(WebSession, WebSession.reviewer_id == Reviewer.id)
            .where(WebSession.digest == _digest(token))
        ).first()
    if row is None or not row.active or _aware(row.expires_at) <= _now():
        return None
    return row.username


def end_session(store: Store, token: str | None) -> None:
    """Sign out: the session's row goes, so a copy of the cookie opens nothing any more."""
    if token and isinstance(token, str):
        with store.session() as s:
            s.execute(delete(WebSession).where(WebSession.digest == _digest(token)))


def active_reviewer(store: Store, username: str | None) -> str | None:
    """`username` when it names an active reviewer (checked on every request), else None."""
    if not username:
        return None
    with store.session() as s:
        row = s.scalar(select(Reviewer).where(Reviewer.username == username))
        return row.username if row is not None and row.active else None
