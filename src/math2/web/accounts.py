"""Reviewer accounts: local users with argon2-hashed passwords, in the `reviewers` table."""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select

from math2.errors import Math2Error
from math2.store import Reviewer, Store

_hasher = PasswordHasher()
# Verified when a name is unknown, so that a wrong name and a wrong password take the same time.
_DUMMY = _hasher.hash("not a password of anyone")
MIN_PASSWORD = 8


class AccountError(Math2Error):
    """A reviewer account cannot be created as asked."""


def add_reviewer(store: Store, username: str, password: str) -> None:
    """Create a reviewer, or set a new password for an existing one (and reactivate it)."""
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


def authenticate(store: Store, username: str, password: str) -> str | None:
    """The reviewer's name when the password is right and the account active, else None."""
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


def active_reviewer(store: Store, username: str | None) -> str | None:
    """`username` when it names an active reviewer (checked on every request), else None."""
    if not username:
        return None
    with store.session() as s:
        row = s.scalar(select(Reviewer).where(Reviewer.username == username))
        return row.username if row is not None and row.active else None
