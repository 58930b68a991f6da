"""The manifest in the store, and K6.3: a licence change at a pin changes the class from there."""

from pathlib import Path

from sqlalchemy import select

from math2.sources import load_manifest, pin_row, sync_manifest
from math2.store import Mention, Pin, Source

TWO_PINS = """\
version: 1
sources:
  - name: lib
    title: A library
    system: lean4
    kind: library
    licence: MIT
    authored: human
    authored_reason: people
    route: scan
    pins:
      - commit: aaa
        toolchain: leanprover/lean4:v4.9.0
"""

RELICENSED = (
    TWO_PINS
    + """\
      - commit: bbb
        toolchain: leanprover/lean4:v4.10.0
        licence: CC-BY-NC-4.0
"""
)


def test_licence_change_at_pin_recomputes_class_and_old_mentions_keep_theirs(
    tmp_path: Path, store
) -> None:
    path = tmp_path / "sources.yaml"
    path.write_text(TWO_PINS)
    with store.session() as s:
        sync_manifest(s, load_manifest(path))
        old = pin_row(s, "lib")
        assert (old.key, old.intake_class, old.bindings) == ("aaa", "open_text", True)
        src = s.scalar(select(Source).where(Source.name == "lib"))
        s.add(
            Mention(
                source_id=src.id,
                pin_id=old.id,
                name="Foo.bar",
                licence=old.licence,
                intake_class=old.intake_class,
                authored="human",
            )
        )

    path.write_text(RELICENSED)
    with store.session() as s:
        rep = sync_manifest(s, load_manifest(path))
        assert rep.new_pins == ["lib@bbb"]
        assert rep.class_changes == ["lib: open_text -> link"]
        new = pin_row(s, "lib")
        assert (new.key, new.licence, new.intake_class, new.bindings) == (
            "bbb",
            "CC-BY-NC-4.0",
            "link",
            False,
        )
        old = pin_row(s, "lib", "aaa")
        assert (old.licence, old.intake_class, old.is_current) == ("MIT", "open_text", False)
        mention = s.scalar(select(Mention).where(Mention.name == "Foo.bar"))
        assert (mention.licence, mention.intake_class, mention.pin_id) == (
            "MIT",
            "open_text",
            old.id,
        )


def test_sync_is_idempotent(tmp_path: Path, sqlite_store) -> None:
    path = tmp_path / "sources.yaml"
    path.write_text(RELICENSED)
    m = load_manifest(path)
    with sqlite_store.session() as s:
        first = sync_manifest(s, m)
    with sqlite_store.session() as s:
        second = sync_manifest(s, m)
        assert len(s.scalars(select(Pin)).all()) == 2
    assert first.added == ["lib"] and second.added == [] and second.updated == []
