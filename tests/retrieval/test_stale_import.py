"""An index is built only from a library read by this math2's Lean scanner: a store whose
Mathlib an older scanner read (review of main, issue 45 stop: fields the scanner no longer
invents, `lean_source 4`) is refused with the command that reads it again."""

from pathlib import Path

import pytest
from sqlalchemy import select

from math2.importers.lean_source import READER
from math2.retrieval.build import StaleImport
from math2.retrieval.index import build_index
from math2.store.work import Run


def _read_by(store, reader: str) -> None:
    with store.session() as s:
        mathlib = select(Run).where(Run.job == "import", Run.key.startswith("mathlib@"))
        run = s.scalars(mathlib).one()
        digest = str(run.params["digest"]).split("; read by ")[0]
        run.params = {**run.params, "digest": f"{digest}; read by {reader}"}
        s.commit()


def test_a_library_read_by_an_older_scanner_is_not_indexed(store, tmp_path: Path) -> None:
    build_index(store, tmp_path / "ok", "mathlib", limit=5)  # read by this scanner: built
    _read_by(store, "lean_source 3")
    with pytest.raises(StaleImport, match="read by lean_source 3; this math2 reads "
                       + READER + r": run `math2 import mathlib`"):  # fmt: skip
        build_index(store, tmp_path / "index", "mathlib", limit=5)
    assert not (tmp_path / "index").exists()  # refused before anything was written
