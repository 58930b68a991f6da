import pytest

from math2.sources.licences import LicenceError, LicenceFamily, family, normalise, options


@pytest.mark.parametrize(
    ("expr", "fam"),
    [
        ("Apache-2.0", LicenceFamily.PERMISSIVE),
        ("MIT", LicenceFamily.PERMISSIVE),
        ("BSD-3-Clause", LicenceFamily.PERMISSIVE),
        ("CC0-1.0", LicenceFamily.PERMISSIVE),
        ("Unlicense", LicenceFamily.PERMISSIVE),
        ("CC-BY-SA-4.0", LicenceFamily.SHARE_ALIKE),
        ("GPL-3.0-only", LicenceFamily.SOFTWARE),
        ("AGPL-3.0-or-later", LicenceFamily.SOFTWARE),
        ("LGPL-2.1-only", LicenceFamily.SOFTWARE),
        ("CECILL-C", LicenceFamily.SOFTWARE),
        ("CC-BY-NC-SA-4.0", LicenceFamily.NONCOMMERCIAL),
        ("CC-BY-NC-4.0", LicenceFamily.NONCOMMERCIAL),
        ("CC-BY-ND-4.0", LicenceFamily.NO_DERIVATIVES),
        ("none", LicenceFamily.NONE),
        ("NONE", LicenceFamily.NONE),
    ],
)
def test_family(expr: str, fam: LicenceFamily) -> None:
    assert family(expr) is fam


def test_or_takes_the_best_choice_and_takes_the_worst_part() -> None:
    # Mizar: GPL or CC BY-SA; the corpus may choose CC BY-SA.
    assert family("GPL-3.0-or-later OR CC-BY-SA-3.0") is LicenceFamily.SHARE_ALIKE
    assert family("MIT AND CC-BY-NC-4.0") is LicenceFamily.NONCOMMERCIAL
    assert options("BSD-3-Clause OR LGPL-2.1-only") == ["BSD-3-Clause", "LGPL-2.1-only"]


def test_normalise_canonical_spelling() -> None:
    assert normalise("mit") == "MIT"
    assert normalise(" apache-2.0 ") == "Apache-2.0"


@pytest.mark.parametrize("bad", ["Foo-1.0", "MIT OR", "", "GPL-3.0 AND ("])
def test_invalid_expressions_are_errors(bad: str) -> None:
    with pytest.raises(LicenceError):
        normalise(bad)


def test_valid_spdx_id_without_rule_is_an_error_not_a_guess() -> None:
    with pytest.raises(LicenceError, match="no intake rule"):
        family("Xnet")
