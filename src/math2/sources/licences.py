"""SPDX licences sorted into the families that K6.2's questions ask about."""

from __future__ import annotations

import re
from enum import StrEnum
from functools import lru_cache

from license_expression import (
    AND,
    OR,
    ExpressionError,
    LicenseSymbol,
    get_spdx_licensing,
)


class LicenceFamily(StrEnum):
    """What a licence allows math2 to do with a source, most favourable first."""

    PERMISSIVE = "permissive"  # Apache, MIT, BSD, CC0, Unlicense…: text with attribution
    SHARE_ALIKE = "share_alike"  # CC BY-SA: text with share-alike and attribution
    SOFTWARE = "software"  # GPL, AGPL, LGPL, CeCILL…: mentions and crosswalks only
    NO_DERIVATIVES = "no_derivatives"  # CC …-ND: may not adapt the text, so no prose
    NONCOMMERCIAL = "noncommercial"  # CC …-NC: not usable at all
    NONE = "none"  # no licence: not usable at all


_RANK = {family: i for i, family in enumerate(LicenceFamily)}

NO_LICENCE = "none"

# Ordered: the first pattern that matches an SPDX id decides its family.
_PATTERNS: list[tuple[re.Pattern[str], LicenceFamily]] = [
    (re.compile(r"-NC(-|$)"), LicenceFamily.NONCOMMERCIAL),
    (re.compile(r"-ND(-|$)"), LicenceFamily.NO_DERIVATIVES),
    (re.compile(r"^CC-BY-SA-"), LicenceFamily.SHARE_ALIKE),
    (re.compile(r"^CC-BY-\d"), LicenceFamily.PERMISSIVE),
    (
        re.compile(
            r"^(Apache-|MIT(-|$)|BSD-|0BSD$|CC0-|Unlicense$|ISC$|Zlib$|BSL-1\.0$|PSF-2\.0$"
            r"|Python-2\.0|PDDL-|ODC-By-|WTFPL$|X11$|Artistic-2\.0$|NCSA$|HPND$)"
        ),
        LicenceFamily.PERMISSIVE,
    ),
    (
        re.compile(r"^(A?GPL-|LGPL-|CECILL|MPL-|EPL-|EUPL-|NASA-1\.3$|OSL-|CDDL-|ODbL-|LPPL-)"),
        LicenceFamily.SOFTWARE,
    ),
]


class LicenceError(ValueError):
    """A licence string that is not a valid SPDX expression, or one math2 has no rule for."""


@lru_cache(maxsize=1)
def _licensing():
    return get_spdx_licensing()


def family_of_id(spdx_id: str) -> LicenceFamily:
    """The family of one SPDX id; an id with no rule here is an error, never a guess."""
    if spdx_id == NO_LICENCE:
        return LicenceFamily.NONE
    for pattern, family in _PATTERNS:
        if pattern.search(spdx_id):
            return family
    raise LicenceError(
        f"licence {spdx_id!r} is a valid SPDX id but math2 has no intake rule for it "
        "(add it to math2.sources.licences)"
    )


@lru_cache(maxsize=512)
def normalise(expression: str) -> str:
    """Validate an SPDX expression (or 'none') and return its canonical spelling."""
    expression = expression.strip()
    if expression.lower() == NO_LICENCE:
        return NO_LICENCE
    try:
        parsed = _licensing().parse(expression, validate=True, strict=True)
    except ExpressionError as exc:
        raise LicenceError(f"not a valid SPDX licence expression: {expression!r} ({exc})") from exc
    if parsed is None:
        raise LicenceError("empty licence expression")
    for sym in _licensing().license_symbols(parsed):
        family_of_id(sym.key)
    return str(parsed)


def family(expression: str) -> LicenceFamily:
    """The family of an SPDX expression: OR takes the best choice, AND the worst part."""
    canonical = normalise(expression)
    if canonical == NO_LICENCE:
        return LicenceFamily.NONE
    return _family_of(_licensing().parse(canonical))


def _family_of(node) -> LicenceFamily:
    if isinstance(node, LicenseSymbol):
        return family_of_id(node.key)
    parts = [_family_of(arg) for arg in node.args]
    if isinstance(node, OR):
        return min(parts, key=_RANK.__getitem__)
    if isinstance(node, AND):
        return max(parts, key=_RANK.__getitem__)
    # WITH exceptions (e.g. GPL-2.0 WITH Classpath-exception) keep the licence's family.
    return _family_of(node.args[0])


def options(expression: str) -> list[str]:
    """The alternatives of a top-level OR (per-item licences list what items may carry)."""
    canonical = normalise(expression)
    if canonical == NO_LICENCE:
        return [NO_LICENCE]
    parsed = _licensing().parse(canonical)
    if isinstance(parsed, OR):
        return [str(arg) for arg in parsed.args]
    return [canonical]
