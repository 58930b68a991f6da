"""One size limit on every text input: a longer text is refused naming the file, the line and
the field, before anything is written — in each command that reads text, and on web forms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from math2.cli import app
from math2.errors import InputError
from math2.util.jsonl import read_jsonl
from math2.util.textlimit import DEFAULT_MAX_TEXT_CHARS, set_text_limit, text_limit
from math2.util.yamlfile import parse_yaml
from tests.conftest import benchmark_fixtures

BIG = "x" * 4_000_000  # 4 MB of informal text


@pytest.fixture(autouse=True)
def _default_limit():
    yield
    set_text_limit(DEFAULT_MAX_TEXT_CHARS)


@pytest.fixture
def env(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 't.db'}")
    monkeypatch.setenv("MATH2_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("MATH2_BENCHMARKS", str(benchmark_fixtures()))  # `eval decontam` reads them
    return tmp_path


def _jsonl(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return str(path)


def test_a_long_string_anywhere_in_a_line_names_file_line_and_field(tmp_path) -> None:
    f = tmp_path / "a.jsonl"
    _jsonl(f, [{"id": 1, "informal": "fine"}, {"id": 2, "meta": {"notes": ["ok", BIG]}}])
    with pytest.raises(InputError) as exc:
        list(read_jsonl(f))
    assert str(exc.value).startswith(f"{f}:2: field 'meta.notes[1]' is 4,000,000 characters")
    assert "the limit is 100,000" in str(exc.value)


def test_a_line_far_over_the_limit_is_not_even_parsed(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("math2.util.jsonl.LINE_CAP_BYTES", 160)
    set_text_limit(10)
    f = tmp_path / "a.jsonl"
    f.write_text('{"id": 1}\n' + '{"t": "' + "y" * 500 + '"}\n', "utf-8")
    with pytest.raises(InputError, match=r"a.jsonl:2: the line is over 160 bytes"):
        list(read_jsonl(f))


def test_yaml_scalars_name_their_line_and_key(tmp_path) -> None:
    set_text_limit(20)
    text = "sources:\n  - name: ok\n    notes: " + "z" * 30 + "\n"
    with pytest.raises(InputError) as exc:
        parse_yaml(text, tmp_path / "sources.yaml")
    assert "sources.yaml:3: 'sources[0].notes' is 30 characters; the limit is 20" in str(exc.value)


@pytest.mark.parametrize(
    "command",
    [
        ["formalize", "{big}", "--model", "m", "--judge", "j"],
        ["check", "{big}"],
        ["eval", "decontam", "{big}", "{out}", "--field", "informal"],
        ["copy-index", "{big}", "--out", "{out}", "--field", "informal"],
    ],
    ids=lambda c: " ".join(c[:2]) if c[0] == "eval" else c[0],
)
def test_every_command_that_reads_text_refuses_4_mb(env, command) -> None:
    assert CliRunner().invoke(app, ["init"]).exit_code == 0
    big = _jsonl(
        env / "in.jsonl",
        [
            {"id": 1, "informal": "One is one.", "formal": "theorem a : 1 = 1"},
            {"id": 2, "informal": BIG, "formal": "theorem b : 1 = 1"},
        ],
    )
    args = [a.format(big=big, out=env / "out") for a in command]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    out = res.output.replace("\n", "")
    assert "in.jsonl:2: field 'informal' is 4,000,000 characters" in out, res.output
    assert "Traceback" not in res.output
    assert not (env / "out").exists()


def test_the_limit_is_configured_once(env, monkeypatch) -> None:
    assert CliRunner().invoke(app, ["init"]).exit_code == 0
    monkeypatch.setenv("MATH2_INPUT__MAX_TEXT_CHARS", "50")
    # the manifest is text too: its long notes are now refused, by file and line
    res = CliRunner().invoke(app, ["sources", "check"])
    assert res.exit_code == 2 and "sources.yaml:" in res.output and "the limit is 50" in res.output
    assert text_limit() == 50
    long_terms = "t" * 51
    res = CliRunner().invoke(app, ["models", "add", "m", "--provider", "p", "--terms", long_terms])
    assert res.exit_code == 2 and "--terms is 51 characters; the limit is 50" in res.output
    assert "m " not in CliRunner().invoke(app, ["models", "list"]).output.split("\n", 3)[-1]
