"""Turning untrusted text into safe HTML: Lean highlighted on the server, LaTeX marked for KaTeX,
docstrings as Markdown.

Everything here escapes first: the only markup in the output is what this module (or the
Markdown renderer, with raw HTML off) writes.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from markdown_it import MarkdownIt
from markupsafe import Markup, escape
from mdit_py_plugins.dollarmath import dollarmath_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import Lean4Lexer

_LEXER = Lean4Lexer()
_FORMATTER = HtmlFormatter(nowrap=True, classprefix="lean-")
# $$…$$, \[…\], $…$, \(…\); a backslash-escaped dollar is text.
_MATH = re.compile(
    r"\$\$(?P<d1>.+?)\$\$|\\\[(?P<d2>.+?)\\\]|(?<![\\$])\$(?P<i1>[^$\n]+?)\$|\\\((?P<i2>.+?)\\\)",
    re.S,
)


def lean_html(code: str | None) -> Markup:
    """Lean 4 source as highlighted HTML spans (pygments escapes every token)."""
    if not code:
        return Markup("")
    return Markup(highlight(code, _LEXER, _FORMATTER))


def lean_css() -> str:
    """The stylesheet of the highlighter's classes."""
    return HtmlFormatter(classprefix="lean-", style="friendly").get_style_defs(".lean")


def math_html(text: str | None) -> Markup:
    """Prose with its LaTeX in `<span class="math">` elements that KaTeX renders in the browser
    with `trust: false` (so `\\href{javascript:…}` and friends stay inert). Text and TeX are
    both escaped; without JavaScript the reader sees the TeX source."""
    if not text:
        return Markup("")
    parts: list[str] = []
    pos = 0
    for m in _MATH.finditer(text):
        parts.append(str(escape(text[pos : m.start()])))
        display = m.group("d1") is not None or m.group("d2") is not None
        tex = next(g for g in (m.group("d1"), m.group("d2"), m.group("i1"), m.group("i2")) if g)
        cls = "math display" if display else "math"
        parts.append(f'<span class="{cls}" data-tex="{escape(tex)}">{escape(m.group(0))}</span>')
        pos = m.end()
    parts.append(str(escape(text[pos:])))
    return Markup("".join(parts))


def _math_span(tex: str, display: bool) -> str:
    cls = "math display" if display else "math"
    delim = "$$" if display else "$"
    return f'<span class="{cls}" data-tex="{escape(tex)}">{escape(delim + tex + delim)}</span>'


def _markdown() -> MarkdownIt:
    """CommonMark with raw HTML off (`<script>` in a docstring is text), no images (nothing is
    fetched for a docstring), links only to what markdown-it's link check lets through (no
    `javascript:`), and `$…$` / `$$…$$` as spans `static/math.js` hands to KaTeX."""
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.disable("image")
    md.use(dollarmath_plugin, allow_labels=False, allow_space=True, allow_digits=False,
           double_inline=True)  # fmt: skip
    md.add_render_rule("math_inline", lambda self, t, i, o, e: _math_span(t[i].content, False))
    md.add_render_rule(
        "math_inline_double", lambda self, t, i, o, e: _math_span(t[i].content, True)
    )
    md.add_render_rule(
        "math_block", lambda self, t, i, o, e: f"<p>{_math_span(t[i].content.strip(), True)}</p>\n"
    )
    return md


_MD = _markdown()


def markdown_html(text: str | None) -> Markup:
    """A docstring (Mathlib writes Markdown with TeX) as HTML: emphasis, code, lists and links
    rendered, raw HTML escaped, maths left to KaTeX."""
    if not text:
        return Markup("")
    return Markup(_MD.render(text))


# Where a crosswalk target of each system can be read; only these fixed https prefixes are links.
_LINKS = {
    "lean4": "https://leanprover-community.github.io/mathlib4_docs/find/?pattern={}#doc",
    "mathlib": "https://leanprover-community.github.io/mathlib4_docs/find/?pattern={}#doc",
    "metamath": "https://us.metamath.org/mpeuni/{}.html",
    "setmm": "https://us.metamath.org/mpeuni/{}.html",
    "wikidata": "https://www.wikidata.org/wiki/{}",
    "isabelle": "https://www.isa-afp.org/search/?s={}",
    "afp": "https://www.isa-afp.org/search/?s={}",
    "mizar": "https://mizar.uwb.edu.pl/version/current/html/{}.html",
}


def crosswalk_url(system: str, target: str) -> str | None:
    """An https link for a declaration of a known system (the target is URL-quoted), else None."""
    pattern = _LINKS.get(system.lower())
    if pattern is None or not target:
        return None
    if system.lower() == "mizar":
        target = target.split(":", 1)[0].lower()
    return pattern.format(quote(target, safe=""))
