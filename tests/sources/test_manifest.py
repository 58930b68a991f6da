"""The real manifest, and broken manifests failing with file, line and reason."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from math2.cli import app
from math2.sources import IntakeClass, ManifestError, load_manifest

REPO = Path(__file__).resolve().parents[2]
MANIFEST = REPO / "manifests" / "sources.yaml"

# Every library, list and dataset that K06 names (issue 2), by our manifest name.
K06_SOURCES = {
    "mathlib": "open_text+bindings",
    "setmm": "open_text",
    "agda-unimath": "open_text",
    "afp": None,  # per entry
    "mizar-mml": "crosswalks",
    "rocq-stdlib": "mentions",
    "hol-light": "mentions",
    "hol4": "mentions",
    "naproche": "mentions",
    "nasalib": None,
    "acl2-books": None,
    "tau-ceti": "link",
    "megalodon-munkres": "link",
    "1000-plus": "crosswalks",
    "wiedijk-100": "facts",
    "mathlib-theorem-lists": "crosswalks",
    "theoremgraph": "candidates",
    "stacks-mathlib": "candidates",
    "herald": "search_aid",
    "frenzymath-mathlib-informal": "search_aid",
    "leansearch-v2": "exclude",
    "minif2f": "evaluate",
    "proofnet": "evaluate",
    "formalmath": "evaluate",
    "proverbench": "evaluate",
    "combibench": "evaluate",
    "fate-m": "evaluate",
    "fate-h": "evaluate",
    "fate-x": "evaluate",
    "putnambench": "evaluate",
    "lean-workbook": "refused",
    "goedel-pset": "exclude",
    "numinamath-lean": "refused",
    "openwebmath": "reference",
    "mathpile": "exclude",
}


def test_real_manifest_has_every_k06_source_with_its_class() -> None:
    m = load_manifest(MANIFEST)
    names = {s.name for s in m.sources}
    assert set(K06_SOURCES) <= names
    for name, label in K06_SOURCES.items():
        if label is not None:
            assert m.get(name).decide().label == label, name


def test_per_item_licences_decide_per_item() -> None:
    afp = load_manifest(MANIFEST).get("afp")
    by_licence = {d.licence: d.intake for d in afp.decide_items()}
    assert by_licence == {
        "BSD-3-Clause": IntakeClass.OPEN_TEXT,
        "LGPL-2.1-only": IntakeClass.MENTIONS,
    }
    assert afp.decide(item_licence="BSD-3-Clause").intake is IntakeClass.OPEN_TEXT


def test_putnambench_keeps_its_no_copy_rule() -> None:
    assert "no-copy" in load_manifest(MANIFEST).get("putnambench").terms


GOOD_ENTRY = """\
  - name: lib
    title: A library
    system: lean4
    kind: library
    licence: MIT
    authored: human
    authored_reason: people
    route: scan
    pins:
      - commit: abc
        toolchain: leanprover/lean4:v4.9.0
"""


def write(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "sources.yaml"
    p.write_text(body, encoding="utf-8")
    return p


@pytest.mark.parametrize(
    ("body", "line", "reason"),
    [
        ("version: 1\nsources:\n  - name: x\n   title: [\n", 4, "invalid YAML"),
        ("version: 1\nsources:\n" + GOOD_ENTRY.replace("MIT", "Foo-1.0"), 7, "SPDX"),
        ("version: 1\nsources:\n" + GOOD_ENTRY.replace("    route: scan\n", ""), 3, "route"),
        ("version: 1\nsources:\n" + GOOD_ENTRY + GOOD_ENTRY, 14, "duplicate source name 'lib'"),
        ("version: 1\nversion: 1\nsources: []\n", 2, "duplicate key 'version'"),
        ("version: 1\nsources:\n" + GOOD_ENTRY.replace("lean4", "lean5"), 5, "unknown system"),
        (
            "version: 1\nsources:\n"
            + GOOD_ENTRY.replace("        toolchain: leanprover/lean4:v4.9.0\n", ""),
            3,
            "needs a toolchain",
        ),
        (
            "version: 1\nsources:\n"
            + GOOD_ENTRY.replace("kind: library", "kind: synthetic")
            + "    red_flags: [third_party_text]\n    override: {by: P, date: 2026-01-01, "
            "reason: r, class: search_aid}\n",
            15,
            "wider",
        ),
        ("- just\n- a list\n", 1, "mapping"),
    ],
)
def test_broken_manifest_names_file_line_and_reason(
    tmp_path: Path, body: str, line: int, reason: str
) -> None:
    path = write(tmp_path, body)
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    assert info.value.path == str(path)
    assert info.value.line == line, str(info.value)
    assert reason in info.value.reason


def test_cli_check_prints_every_source_and_exits_2_on_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["sources", "check", str(MANIFEST)])
    assert ok.exit_code == 0, ok.output
    for name in K06_SOURCES:
        assert name in ok.output
    bad = write(tmp_path, "version: 1\nsources:\n" + GOOD_ENTRY.replace("MIT", "Foo-1.0"))
    res = runner.invoke(app, ["sources", "check", str(bad)])
    assert res.exit_code == 2
    assert f"{bad}:7: sources.0.licence: not a valid SPDX" in res.stderr


def test_cli_show(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATH2_MANIFEST", str(MANIFEST))
    res = CliRunner().invoke(app, ["sources", "show", "mathlib"])
    assert res.exit_code == 0, res.output
    assert "f4a75053ba65be55859c28f56b58c48ddff8db5f" in res.output
    assert "open_text+bindings" in res.output
    missing = CliRunner().invoke(app, ["sources", "show", "nope"])
    assert missing.exit_code == 2
