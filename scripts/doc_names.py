"""Names the docs mention that the code no longer has.

Reads every `backticked` span of README.md, DESIGN.md and docs/*.md and checks three kinds:

- paths (`lean/syntax.py`, `src/math2/runs/`, `prompts/formalize/`): some file or folder of the
  repository ends with that path;
- dotted names (`math2.retrieval.search`, `env.result_cache(...)`, `Store.writer`): a `math2.…`
  name must import (module, then attributes); any other `a.b` must have its last part defined
  somewhere under src/ (a def, a class, an attribute or a key);
- commands (`math2 search --library all`, or a line of a code block that runs `math2`): the
  command exists and each `--option` is one of its options (read from the typer app, not by
  running it);
- settings (`MATH2_LEAN__WORKERS`): the section and key exist in `math2.config.Settings`; any
  other `MATH2_*` name must be read somewhere in the repository.

    PYTHONPATH=src .venv/bin/python scripts/doc_names.py   # prints FILE:LINE: name (why)

Exit 1 when something is stale. Names of other tools (`lake`, `git`, …) are not checked.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import typer

ROOT = Path(__file__).resolve().parents[1]
SPAN = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"^[\w./-]*[\w-]+(?:/|\.py|\.md|\.toml|\.yaml|\.json|\.sh)$")
DOTTED = re.compile(r"^([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+)(\(.*\))?$")
CODE_DIRS = {"src", "math2", "tests", "benchmarks", "scripts", "prompts", "data", ".ci"}
CODE_DIRS |= {p.name for p in (Path(__file__).resolve().parents[1] / "src" / "math2").iterdir()}
SKIP_PREFIXES = ("http", "www.", "e.g.", "i.e.")
FILE_NAME = re.compile(r"\.(html|png|json|jsonl|parquet|usearch|db|lean|yaml|toml|md|txt|csv)$")


def repo_files() -> list[str]:
    skip = {".git", ".venv", "node_modules", "__pycache__", ".math2"}
    out = []
    for p in ROOT.rglob("*"):
        parts = p.relative_to(ROOT).parts
        if any(part in skip for part in parts):
            continue
        out.append(p.relative_to(ROOT).as_posix() + ("/" if p.is_dir() else ""))
    return out


def source_names() -> dict[str, list[int]]:
    """Every name the Python under src/ defines (def, class, variable, attribute, parameter,
    keyword, a word of a string), with each function's number of parameters (-1 for a name that
    is no function, -2 for a word seen only in a string)."""
    names: dict[str, list[int]] = {}
    for p in (ROOT / "src").rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                params = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
                params = [x for x in params if x not in ("self", "cls")]
                n = len(params) + bool(a.vararg) + bool(a.kwarg)
                names.setdefault(node.name, []).append(n)
                for x in params:
                    names.setdefault(x, []).append(-1)
            elif isinstance(node, ast.ClassDef):
                names.setdefault(node.name, []).append(-1)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.setdefault(node.id, []).append(-1)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.setdefault(node.attr, []).append(-1)
            elif isinstance(node, ast.keyword) and node.arg:
                names.setdefault(node.arg, []).append(-1)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.setdefault(node.target.id, []).append(-1)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                for word in re.findall(r"[A-Za-z_]\w*", node.value):  # keys, check names
                    names.setdefault(word, []).append(-2)
    return names


def cli_commands() -> dict[str, set[str]]:
    """'math2 a b' -> its --options (a group's options too)."""
    from math2.cli import app

    root = typer.main.get_command(app)
    found: dict[str, set[str]] = {}

    def walk(cmd, path: str) -> None:  # typer's own click: duck-typed
        opts = {o for p in cmd.params for o in getattr(p, "opts", []) + p.secondary_opts}
        found[path] = opts | {"--help"}
        for name, sub in (getattr(cmd, "commands", None) or {}).items():
            walk(sub, f"{path} {name}")

    walk(root, "math2")
    return found


def check_setting(name: str, mentioned: str) -> str | None:
    """Why `MATH2_SECTION__KEY` (or `MATH2_KEY`) names no setting, or None. A `MATH2_*` name
    that is no setting must at least be read somewhere in the repository (`mentioned`)."""
    from math2.config import Settings

    rest = name.removeprefix("MATH2_").lower()
    section, _, key = rest.partition("__")
    field = Settings.model_fields.get(section)
    if not _:
        return None if field is not None or name in mentioned else "no such setting"
    if field is None:
        return f"no settings section {section!r}"
    keys = getattr(field.annotation, "model_fields", {})
    return None if not key or key in keys else f"no setting {section}.{key}"


def check_path(name: str, files: list[str]) -> bool:
    name = name.lstrip("./")
    return any(f == name or f.endswith("/" + name) for f in files)


def check_dotted(name: str, call: str | None, names: dict[str, list[int]]) -> str | None:
    """Why `name` (with `call`, its written arguments) is stale, or None. A dotted name whose
    first part the Python never defines (a Lean name: `Nat.Prime`) is not checked."""
    parts = name.split(".")
    if parts[0] != "math2":
        if not any(n != -2 for n in names.get(parts[0], [])):
            return None  # not a name the Python defines outside its strings
        arities = names.get(parts[-1])
        if arities is None:
            return "not defined in src/"
        functions = [n for n in arities if n >= 0]
        if call and call.strip("()").strip() and functions and not any(functions):
            return "takes no arguments in src/"
        return None
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                try:  # a submodule not yet imported
                    obj = importlib.import_module(f"{obj.__name__}.{attr}")
                    continue
                except (ImportError, AttributeError):
                    return "does not import"
            obj = getattr(obj, attr)
        return None
    return "does not import"


def check_command(span: str, commands: dict[str, set[str]]) -> str | None:
    words = span.split()
    if len(words) > 1 and words[1] in ("…", "..."):
        return None  # `math2 … --executor ray`: any command
    path = "math2"
    for w in words[1:]:
        alternatives = [f"{path} {a}" for a in w.split("|")]
        if all(a in commands for a in alternatives):
            path = alternatives[0]
        else:
            break
    options = re.findall(r"(?<![\w-])(--[A-Za-z][\w-]*|-k)\b", span)  # [--opt], a|--opt too
    allowed = commands[path] | commands["math2"]
    parent = path.rsplit(" ", 1)[0]
    for other, opts in commands.items():  # `math2 runs list | show ID [--item K]`: siblings
        if other.rsplit(" ", 1)[0] == parent and other.rsplit(" ", 1)[-1] in words:
            allowed |= opts
    bad = [o for o in options if o not in allowed]
    return f"options {bad} not in `{path}`" if bad else None


def main() -> int:
    files = repo_files()
    names = source_names()
    commands = cli_commands()
    mentioned = "\n".join(
        p.read_text(encoding="utf-8", errors="replace")
        for d in ("src", "tests", "scripts", "benchmarks", ".ci")
        for p in (ROOT / d).rglob("*")
        if p.is_file() and p.suffix in {".py", ".sh", ".toml", ".yaml", ""}
    )
    docs = [ROOT / "README.md", ROOT / "DESIGN.md", *sorted((ROOT / "docs").glob("*.md"))]
    stale = 0
    for doc in docs:
        fenced = False
        for lineno, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            spans = SPAN.findall(line)
            command = re.sub(r"^\s*(\$\s+)?(\S+=\S+\s+)*", "", line)
            if fenced and command.startswith("math2 "):  # a command line in a code block
                spans = [command.split("  #")[0].split(" # ")[0]]
            for env in re.findall(r"\bMATH2_[A-Z0-9_]*[A-Z0-9]_?_?", line):
                if why := check_setting(env, mentioned):
                    stale += 1
                    print(f"{doc.relative_to(ROOT)}:{lineno}: {env} ({why})")
            for span in spans:
                span = span.strip()
                why = None
                spaced = " " in span and not span.startswith("math2 ") and not DOTTED.match(span)
                if span.startswith(SKIP_PREFIXES) or spaced:
                    continue
                if span.startswith("math2 "):
                    why = check_command(span, commands)
                elif PATH.match(span) and (
                    span.split("/")[0] in CODE_DIRS
                    or span.endswith(".py")
                    or (span.startswith("docs/") and span.endswith(".md"))
                ):
                    if not check_path(span, files):
                        why = "no such file or folder"
                elif (m := DOTTED.match(span)) and not (PATH.match(span) or FILE_NAME.search(span)):
                    why = check_dotted(m.group(1), m.group(2), names)
                if why:
                    stale += 1
                    print(f"{doc.relative_to(ROOT)}:{lineno}: `{span}` ({why})")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
