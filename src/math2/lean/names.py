"""Names as Lean writes and prints them.

A Lean name is a list of components. In source a component is written bare when it is an
identifier (`mul_inv_cancel'`, `ε₀`, `ℝ≥0` is not one) or between guillemets otherwise
(`«two plus two»`, `«a.b»`: the dot is part of the component). Lean prints a name the same way
(`Name.toString` with escaping): components joined by `.`, each bare when its first character is
an identifier start and the rest identifier characters, else `«…»`. `#print axioms` answers
`'NAME' depends on axioms: […]` or `'NAME' does not depend on any axioms` with NAME printed so;
errors quote names with `'…'` (Lean ≤ 4.9) or `` `…` `` (later). Names are compared as their
components, so a name reads the same however it was spelled or escaped.

Lean's identifier characters (`isIdFirst`, `isIdRest`): ASCII letters and `_`; Greek letters
but λ Π Σ, Coptic, polytonic Greek, the letter-like block (ℕ ℝ ℂ), mathematical script and
double-struck letters, and (since Lean 4.21) Latin-1 and Latin Extended-A letters; after the
first, also ASCII digits, `'`, `!`, `?` and sub-scripts. Other scripts (Cyrillic, CJK, …) need
guillemets.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from collections.abc import Set as AbstractSet


def _letter_like(o: int) -> bool:
    return (
        _greek(o)
        or 0x3CA <= o <= 0x3FB
        or 0x1F00 <= o <= 0x1FFE
        or 0x2100 <= o <= 0x214F
        or 0x1D49C <= o <= 0x1D59F
        or (0xC0 <= o <= 0xFF and o not in (0xD7, 0xF7))
        or 0x100 <= o <= 0x17F
    )


def id_first(ch: str) -> bool:
    """Lean's `isIdFirst`."""
    return ("a" <= ch <= "z") or ("A" <= ch <= "Z") or ch == "_" or _letter_like(ord(ch))


def id_rest(ch: str) -> bool:
    """Lean's `isIdRest`."""
    if id_first(ch) or "0" <= ch <= "9" or ch in "'!?":
        return True
    o = ord(ch)
    return 0x2080 <= o <= 0x209C or 0x1D62 <= o <= 0x1D6A or o == 0x2C7C


def plain_variable_name(name: str) -> bool:
    """A name of the kind a binder takes by custom and no library constant has: one Latin or
    Greek letter, then only digits, sub-scripts and primes (`x`, `G`, `α`, `x₁`, `h'`, `n0`).
    `ℕ`, `ℝ`, `𝓝` (the letter-like and mathematical letters the library's notations use) and
    longer words (`Real`, `exp`) are not plain."""
    if not name or not ((name[0].isascii() and name[0].isalpha()) or _greek(ord(name[0]))):
        return False
    return all(c in "'" or "0" <= c <= "9" or 0x2080 <= ord(c) <= 0x2089 for c in name[1:])


def _greek(o: int) -> bool:
    """A Greek letter Lean takes as an identifier start (λ Π Σ are syntax)."""
    return (0x3B1 <= o <= 0x3C9 and o != 0x3BB) or (0x391 <= o <= 0x3A9 and o not in (0x3A0, 0x3A3))


def bare(component: str) -> bool:
    """Whether Lean prints a component without guillemets."""
    if _PLAIN_PART.fullmatch(component):
        return True
    return bool(component) and id_first(component[0]) and all(id_rest(c) for c in component[1:])


_PLAIN_PART = re.compile(r"[A-Za-z_][A-Za-z0-9_'!?]*")


def parts(name: str) -> tuple[str, ...]:
    """The components of a name as written or printed (`Foo.«a b».c'` → Foo, a b, c'); a
    leading `_root_` is kept (callers resolve it)."""
    if "«" not in name:
        return tuple(name.split("."))
    out: list[str] = []
    cur: list[str] = []
    i, n = 0, len(name)
    while i < n:
        ch = name[i]
        if ch == "«":
            j = name.find("»", i + 1)
            if j < 0:  # unterminated: the rest is the component
                cur.append(name[i + 1 :])
                break
            cur.append(name[i + 1 : j])
            i = j + 1
            continue
        if ch == ".":
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    out.append("".join(cur))
    return tuple(out)


def printed(components: tuple[str, ...] | list[str]) -> str:
    """A name as Lean prints it (`Name.toString`): each component bare or in guillemets."""
    return ".".join(c if bare(c) else f"«{c}»" for c in components)


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_'!?]*(?:\.[A-Za-z_][A-Za-z0-9_'!?]*)*")


def canonical(name: str) -> str:
    """A name however spelled (escaped where it need not be, `_root_.` in front) in Lean's
    printed form: two spellings of one name give one string."""
    if _PLAIN.fullmatch(name) and not name.startswith("_root_."):
        return name  # ASCII components, printed as they are
    p = parts(name)
    while len(p) > 1 and p[0] == "_root_":
        p = p[1:]
    return printed(p)


def in_namespace(written: str, namespace: str) -> Iterator[str]:
    """The full names `written` may stand for where it is written inside `namespace`, as Lean
    resolves a name, innermost first, in printed form: `x` written in `A.B` may be `A.B.x`,
    `A.x` or `x`. A name written `_root_.x` is `x` alone."""
    written_parts = parts(written)
    if len(written_parts) > 1 and written_parts[0] == "_root_":
        yield canonical(written)
        return
    space = parts(namespace) if namespace else ()
    for k in range(len(space), -1, -1):
        yield printed((*space[:k], *written_parts))


def same(a: str | None, b: str | None) -> bool:
    """Whether two spellings name the same constant."""
    return a is not None and b is not None and canonical(a) == canonical(b)


# Words Lean's parser reads as keywords: a component spelled like one is written in
# guillemets in the code math2 sends (`#print axioms «at»`), although Lean prints it bare.
KEYWORDS = frozenset(
    {"at", "by", "calc", "do", "else", "end", "fun", "from", "have", "if", "in", "let", "match",
     "show", "then", "theorem", "def", "lemma", "where", "with", "instance", "structure",
     "class", "open", "namespace", "section", "variable", "universe", "example", "import",
     "abbrev", "inductive", "deriving", "mutual", "local", "private", "protected",
     "noncomputable", "partial", "unsafe", "suffices", "obtain", "Type", "Sort", "Prop",
     "forall", "exists"}
)  # fmt: skip


def source(name: str) -> str:
    """A name as math2 writes it in code it sends Lean (`#print axioms NAME`): printed form, with
    keyword-like components in guillemets too."""
    return ".".join(
        c if bare(c) and c not in KEYWORDS else f"«{c}»" for c in parts(canonical(name))
    )


def rooted(name: str) -> str:
    """`_root_.` and the name's `source`: how math2 names a constant in the commands it appends
    after an item (`#print axioms`, `#check @`), so that a namespace the item leaves open, or a
    name it declares inside one (`Foo.Foo.t` under `namespace Foo`), cannot redirect it."""
    return "_root_." + source(name)


# A printed name: components bare (identifier characters and anything Lean would not print
# bare but has no quote, space or bracket) or «…», joined by dots.
_COMPONENT = r"(?:«[^»\n]*»|[^\s.«»`‘’\"()\[\]{},:;]+)"
NAME = _COMPONENT + r"(?:\." + _COMPONENT + r")*"
_AXIOMS_SUBJECT = re.compile(
    r"^\s*'(?P<name>" + NAME + r")'\s+(?:depends on axioms|does not depend on any axioms)"
)
# A name quoted in a message: 'x' (old), `x` (new), ‘x’, or «x» alone.
QUOTED = (
    r"(?:'(?P<q1>" + NAME + r")'(?![\w'])|`(?P<q2>" + NAME + r")`|‘(?P<q3>" + NAME + r")’"
    r"|(?P<q4>«[^»\n]*»(?:\." + _COMPONENT + r")*))"
)
_QUOTED = re.compile(QUOTED)


def axioms_subject(info: str) -> str | None:
    """The constant a `#print axioms` answer is about, in printed form (None: not one)."""
    m = _AXIOMS_SUBJECT.search(info)
    return canonical(m.group("name")) if m else None


def quoted_name(m: re.Match[str]) -> str | None:
    """The name a match of QUOTED holds, in printed form."""
    for g in ("q1", "q2", "q3", "q4"):
        v = m.groupdict().get(g)
        if v:
            return canonical(v)
    return None


def first_quoted(text: str) -> str | None:
    """The first name quoted in a message, in printed form."""
    m = _QUOTED.search(text)
    return quoted_name(m) if m else None


# Letters of other scripts that look like Latin letters (Greek, Cyrillic, dotless i): a name
# spelled with them reads as the Latin name a person expects.
_LOOK_ALIKE = str.maketrans(
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧοιαρτυχκνАВЕКМНОРСТХУаеорсхуіјѕԁԛԝıЅІЈ",
    "ABEZHIKMNOPTYXoiaptuxkvABEKMHOPCTXYaeopcxyijsdqwiSIJ",
)


def has_look_alike(text: str) -> bool:
    """Whether a text holds a letter that looks like a Latin one (a cheap test first)."""
    return not text.isascii() and latin_skeleton(text) != text


def latin_skeleton(name: str) -> str:
    """The name with look-alike letters of other scripts replaced by the Latin letters they
    look like (`Νat` with a Greek Nu → `Nat`)."""
    return name.translate(_LOOK_ALIKE)


def mixed_script(name: str) -> str | None:
    """The Latin name a name of mixed scripts reads as (`Νat` with a Greek Nu, `lοg` with a
    Greek omicron: Latin letters beside look-alikes of others), or None. What a reader asks
    where it has no table of names to compare with (fail closed); `αβ` is not one."""
    plain = name.replace("«", "").replace("»", "").split(".")[-1]
    if len(plain) < 2 or not any(c.isascii() and c.isalpha() for c in plain):
        return None
    skeleton = latin_skeleton(plain)
    return skeleton if skeleton != plain else None


def look_alike_of(name: str, known: AbstractSet[str]) -> str | None:
    """The Latin name in `known` that `name` only looks like (None: it is not a look-alike).
    Single letters are not looked at (α and a are different variables by custom)."""
    plain = name.replace("«", "").replace("»", "")
    if len(plain.split(".")[-1]) < 2:
        return None
    skeleton = latin_skeleton(plain)
    return skeleton if skeleton != plain and skeleton in known else None
