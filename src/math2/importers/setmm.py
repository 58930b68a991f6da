"""Metamath set.mm into the corpus: a mention per `$a`/`$p`, its comment as open text (K6.6)."""

from __future__ import annotations

import re
from dataclasses import asdict
from pathlib import Path

from sqlalchemy.orm import Session

from math2.config import Settings
from math2.errors import InputError
from math2.importers.common import (
    file_digest,
    import_once,
    insert_mentions,
    insert_prose,
    mention_row,
    refuse_empty,
)
from math2.importers.metamath import Database, Statement, is_full_sentence, parse
from math2.importers.registry import ImporterSpec, ImportResult, register
from math2.sources.manifest import SourceEntry
from math2.store import Store
from math2.store.models import Pin, Source

SOURCE = "setmm"
DEBIAN_PATH = Path("/usr/share/metamath/databases/set.mm")
_WS = re.compile(r"\s+")


def locate(settings: Settings) -> tuple[Path | None, str]:
    """set.mm from the settings, else Debian's metamath-databases."""
    for path in (settings.data.setmm, DEBIAN_PATH):
        if path is not None and Path(path).is_file():
            return Path(path), ""
    return None, "set.mm not found: install Debian's metamath-databases or set MATH2_DATA__SETMM"


def debian_version(path: Path) -> str | None:
    """The installed metamath-databases version when `path` is Debian's set.mm, else None."""
    import shutil
    import subprocess

    if path.resolve() != DEBIAN_PATH.resolve() or shutil.which("dpkg-query") is None:
        return None
    res = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", "metamath-databases"],
        capture_output=True,
        text=True,
        check=False,
    )
    return res.stdout.strip() or None if res.returncode == 0 else None


def check_pin(path: Path, entry: SourceEntry) -> None:
    """Debian's set.mm must be the package version the manifest pins (checked before parsing)."""
    pin = entry.current_pin
    want = pin.version if pin else None
    have = debian_version(path)
    if want and have and have != want:
        raise InputError(
            path,
            None,
            f"Debian's metamath-databases here is {have}, the manifest pins {entry.name} at "
            f"{want}: install that version (apt-get install metamath-databases={want}), or "
            f"record the new pin in the manifest and run `math2 bump {entry.name} --to PIN`",
        )


def _who(st: Statement, contributors: dict[str, str]) -> str | None:
    if not st.contributions:
        return None
    first = st.contributions[0].who
    return contributors.get(first, first)


def _attribution(st: Statement, db: Database) -> str:
    who = _who(st, db.contributors)
    date = st.contributions[0].date if st.contributions else None
    by = f", contributed by {who} ({date})" if who else ""
    # CC0 asks for none; K13.8 rule 2 asks for it anyway.
    return f"Metamath set.mm, ~ {st.label}{by}; CC0-1.0 public domain dedication"


def import_setmm(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """Parse first (a malformed file changes nothing), then write everything in one transaction."""
    check_pin(path, entry)

    def read() -> Database:
        db = parse(path)
        refuse_empty(path, len(db.statements), "$a or $p statements", entry.name)
        return db

    def write(s: Session, src: Source, pin: Pin, db: Database) -> dict[str, int]:
        rows = []
        for st in db.statements:
            full = is_full_sentence(st.comment)
            rows.append(
                mention_row(
                    src,
                    pin,
                    st.label,
                    kind=st.kind,
                    module=" / ".join(t for t in st.section if t) or None,
                    statement=f"{st.typecode} {st.math}",
                    docstring=_WS.sub(" ", st.comment).strip() if st.comment else None,
                    allow_completion=st.kind != "syntax",
                    extra={
                        "line": st.line,
                        "keyword": f"${st.keyword}",
                        "section": list(st.section),
                        "contributions": [asdict(c) for c in st.contributions],
                        "discouraged": st.discouraged,
                        "hypotheses": st.hypotheses,
                        # K6.6: W1 once the copy check and body rules pass.
                        "full_sentence": full,
                    },
                )
            )
        ids = insert_mentions(s, rows)
        texts = insert_prose(
            s,
            src,
            pin,
            "comment",
            (
                (mid, row["docstring"], _attribution(st, db), _who(st, db.contributors))
                for mid, row, st in zip(ids, rows, db.statements, strict=True)
                if row["docstring"]
            ),
        )
        return {
            "axioms ($a)": db.axioms,
            "theorems ($p)": db.theorems,
            "mentions": len(ids),
            "texts": texts,
            "full-sentence comments": sum(1 for r in rows if r["extra"]["full_sentence"]),
            "discouraged": sum(1 for r in rows if r["extra"]["discouraged"]),
        }

    return import_once(store, entry, path, file_digest(path), read, write)


register(ImporterSpec(source=SOURCE, locate=locate, run=import_setmm))
