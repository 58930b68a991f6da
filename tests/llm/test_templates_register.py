"""Prompt templates (id, version, hash, strict variables) and the model register (X08)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from math2.cli import app
from math2.errors import InputError
from math2.llm import UnregisteredModel, add_model, load_template, load_template_file, require_model

TEMPLATE = '''id = "demo/ask"
version = 2
description = "a test template"
system = "You write Lean 4."
user = """Statement: {{ statement }}
{% for h in hits %}- {{ h }}
{% endfor %}"""
'''


def test_template_renders_and_hashes(tmp_path):
    (tmp_path / "demo").mkdir()
    p = tmp_path / "demo" / "ask.toml"
    p.write_text(TEMPLATE)
    t = load_template("demo/ask", tmp_path)
    assert t.ref == "demo/ask@2" and len(t.hash) == 64
    msgs = t.render(statement="1 + 1 = 2", hits=["Nat.add_comm", "two_mul"])
    assert msgs[0] == {"role": "system", "content": "You write Lean 4."}
    assert "- Nat.add_comm\n- two_mul" in msgs[1]["content"]
    p.write_text(TEMPLATE.replace("Statement:", "Statement :"))
    assert load_template_file(p).hash != t.hash


def test_template_errors_name_the_file(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('id = "x"\nversion = 1\nuser = "{{ a "\n')
    with pytest.raises(InputError, match=r"bad\.toml"):
        load_template_file(p)
    p.write_text('id = "x"\nversion = 1\nuser = "{{ missing }}"\n')
    with pytest.raises(InputError, match="missing"):
        load_template_file(p).render()
    p.write_text('version = 1\nuser = "x"\n')
    with pytest.raises(InputError, match="no `id`"):
        load_template_file(p)


def test_register_refuses_unknown(sqlite_store):
    with sqlite_store.session() as s:
        with pytest.raises(UnregisteredModel, match="math2 models add"):
            require_model(s, "qwq-32b")
        entry, new = add_model(s, "qwq-32b", provider="local vLLM", terms="Apache-2.0")
        assert new
        again, new2 = add_model(s, "qwq-32b", notes="judge")
        assert not new2 and again.id == entry.id
        assert require_model(s, "qwq-32b").notes == "judge"


def test_models_cli(tmp_path):
    db = f"sqlite:///{tmp_path / 'm.db'}"
    assert CliRunner().invoke(app, ["--db", db, "init"]).exit_code == 0  # only init creates
    r = CliRunner().invoke(
        app,
        ["--db", db, "models", "add", "smollm2-135m", "--provider", "HF", "--terms", "Apache-2.0"],
    )
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(app, ["--db", db, "models", "list"])
    assert r.exit_code == 0 and "smollm2-135m" in r.output and "Apache-2.0" in r.output


def test_a_template_string_is_compiled_once(monkeypatch) -> None:
    """Rendering compiles each string once per process (issue 44: four compiles an item in a
    Ray worker's profile), and a render still reads its own variables."""
    from math2.llm import templates

    calls: list[str] = []
    real = templates._ENV.from_string
    monkeypatch.setattr(templates._ENV, "from_string", lambda s: calls.append(s) or real(s))
    templates._compiled.cache_clear()
    t = templates.Template(id="t", version=1, hash="h", path="p", system="S {{ a }}",
                           user="U {{ a }}")  # fmt: skip
    first, again, other = t.render(a=1), t.render(a=1), t.render(a=2)
    assert first == again and other[1]["content"] == "U 2" and first[0]["content"] == "S 1"
    assert calls == ["S {{ a }}", "U {{ a }}"]
