"""Naproche: a mention per theorem-like environment (`theorem`, `lemma`, `proposition`,
`corollary`, `definition`, `axiom`, `signature`, starred or not) that Naproche reads as
ForTheL, and per top-level section of a plain `.ftl` file.

In the formalizations' `.ftl.tex` files (and their language variants, `.ftl.en.tex`) that is,
as Naproche's own TeX lexer decides (`SAD.Parser.TEX.Token.environment`): an environment
inside a `forthel` block, or one whose options begin with the flag `forthel`
(`\\begin{proposition}[forthel]`, `[forthel,title=…]`) outside a block. Every other
theorem-like environment is the document's prose: it is not read and is counted
(`environment outside ForTheL`), as are `convention`s (notation, not statements). A mention is
named by the file (its path under `math/`, without `.ftl.tex`) and the environment's `\\label`
(`examples/tarski:KT`), else its `name=` or `title=` option, else its kind and number in the
file (`examples/cantor:theorem 1`); the statement is the environment's ForTheL text with `%`
comments blanked.

A plain `.ftl` file (Naproche's FTL syntax: `Theorem Cantor. Let M be a set. …`, `#`
comments) gives a mention per section `Signature|Definition|Axiom|Theorem|Lemma|Proposition|
Corollary [label].`, named by the file with its `.ftl` (`examples/cantor.ftl:Cantor`, else
`…:theorem 1`), its statement the text up to the proof, the next section, an instruction or a
blank line. GPL-3.0: mentions and crosswalks only (K6.6)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from math2.importers.masking import mask_hash, mask_percent
from math2.importers.registry import ImportResult, register
from math2.importers.systems import (
    Decl,
    Parsed,
    SystemReader,
    Unread,
    clean_statement,
    git_checkout,
    glob_files,
    import_checkout,
)
from math2.sources.manifest import SourceEntry
from math2.store import Store

SOURCE = "naproche"
ENVIRONMENTS = (
    "theorem", "lemma", "proposition", "corollary", "definition", "axiom", "signature"
)  # fmt: skip
_BLOCK = re.compile(r"\\begin\{forthel\}(.*?)\\end\{forthel\}", re.S)
_ENV = re.compile(
    rf"\\begin\{{(?P<env>{'|'.join(ENVIRONMENTS)}|convention)(?P<star>\*?)\}}"
    r"(?:\s*\[(?P<options>[^\]]*)\])?(?:\s*\\label\{(?P<label>[^}]*)\})?"
)
_SUFFIX = re.compile(r"\.ftl(\.[a-z]{2})?\.tex$")
OUTSIDE = "environment outside ForTheL"
CONVENTION = "convention (notation, not a statement)"
# FTL: a section header at the start of a line (keywords in any case, as Naproche's lexer).
_FTL_SECTION = re.compile(
    rf"^[ \t]*(?P<env>{'|'.join(ENVIRONMENTS)})(?:[ \t]+(?P<label>[A-Za-z0-9_']+))?[ \t]*\.",
    re.M | re.I,
)
_FTL_END = re.compile(
    rf"\n[ \t]*\n|^[ \t]*(?:proof\b|\[|(?:{'|'.join(ENVIRONMENTS)})\b)", re.M | re.I
)


def _options(options: str) -> tuple[bool, dict[str, str]]:
    """(whether the first option is the flag `forthel`, the `key=value` options), commas
    inside braces kept (`for={map,function}`)."""
    parts, depth, cur = [], 0, ""
    for c in options:
        depth += {"{": 1, "}": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    parts.append(cur)
    parts = [p.strip() for p in parts]
    kv = dict(p.split("=", 1) for p in parts if "=" in p)
    flags = [p for p in parts if p and "=" not in p]
    forthel = bool(parts) and parts[0] == "forthel"
    if not kv and not forthel and flags:  # `[Cantor]`: a title
        kv = {"title": options.strip()}
    return forthel, {k.strip(): v.strip().strip("{}") for k, v in kv.items()}


def _module(root: Path, path: Path) -> tuple[str, str]:
    base = root / "math" if (root / "math").is_dir() else root
    rel = path.relative_to(base).as_posix() if path.is_relative_to(base) else path.name
    return rel, _SUFFIX.sub("", rel)


class _Names:
    """A file's mention names: a key used twice gets its number (`Cantor (2)`)."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.numbers: Counter[str] = Counter()
        self.used: Counter[str] = Counter()

    def name(self, env: str, key: str | None) -> str:
        self.numbers[env] += 1
        key = key or f"{env} {self.numbers[env]}"
        self.used[key] += 1
        return f"{self.module}:{key}" + (f" ({self.used[key]})" if self.used[key] > 1 else "")


def parse_tex(root: Path, path: Path, text: str) -> Parsed:
    """The ForTheL environments of one `.ftl.tex` file (see the module docstring)."""
    view = mask_percent(path, text, tex=True)
    rel, module = _module(root, path)
    blocks = [(b.start(1), b.end(1)) for b in _BLOCK.finditer(view.code)]
    names = _Names(module)
    out = Parsed([])
    for m in _ENV.finditer(view.code):
        env, line = m.group("env"), view.line(m.start())
        flagged, opts = _options(m.group("options") or "")
        inside = any(s <= m.start() < e for s, e in blocks)
        if not (inside or flagged):
            out.unread.append(Unread(OUTSIDE, line))
            continue
        if env == "convention":
            out.unread.append(Unread(CONVENTION, line))
            continue
        stop = next((e for s, e in blocks if s <= m.start() < e), len(view.code))
        end = view.code.find(f"\\end{{{env}{m.group('star')}}}", m.end(), stop)
        body = view.code[m.end() : end if end >= 0 else stop]
        title = opts.get("title") or None
        label = (m.group("label") or "").strip() or None
        out.decls.append(
            Decl(
                name=names.name(env, label or opts.get("name") or title),
                kind=env,
                module=module,
                line=line,
                statement=clean_statement(body),
                extra={"title": title, "label": label, "file": rel},
            )
        )
    return out


def parse_ftl(root: Path, path: Path, text: str) -> Parsed:
    """The top-level sections of one plain `.ftl` file."""
    view = mask_hash(path, text)
    rel, _ = _module(root, path)
    names = _Names(rel)
    out = Parsed([])
    for m in _FTL_SECTION.finditer(view.code):
        env = m.group("env").lower()
        end = _FTL_END.search(view.code, m.end())
        label = m.group("label")
        out.decls.append(
            Decl(
                name=names.name(env, label),
                kind=env,
                module=rel,
                line=view.line(m.start()),
                statement=clean_statement(view.code[m.end() : end.start() if end else None]),
                extra={"label": label, "file": rel},
            )
        )
    return out


def parse_file(root: Path, path: Path, text: str) -> Parsed:
    """A `.ftl.tex` (or language variant) or a plain `.ftl` file."""
    return parse_ftl(root, path, text) if path.suffix == ".ftl" else parse_tex(root, path, text)


READER = SystemReader(
    SOURCE,
    "ForTheL .ftl.tex and .ftl files",
    glob_files("**/*.ftl.tex", "**/*.ftl.??.tex", "**/*.ftl", under="math"),
    parse_file,
)


def import_naproche(store: Store, entry: SourceEntry, path: Path) -> ImportResult:
    """The Naproche checkout at its pin (its `math/` formalizations)."""
    return import_checkout(store, entry, path, READER)


register(git_checkout(SOURCE, "naproche_dir", "Naproche checkout", import_naproche))
