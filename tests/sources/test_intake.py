"""K6.2's three questions and K6.4/K6.8's special rules, one rule at a time."""

import pytest

from math2.sources.intake import (
    Authored,
    IntakeClass,
    IntakeError,
    IntakeFacts,
    Kind,
    Limit,
    RedFlag,
    Rule,
    derive,
)


def facts(**kw) -> IntakeFacts:
    base = dict(name="x", kind=Kind.LIBRARY, system="lean4", licence="Apache-2.0")
    return IntakeFacts(**{**base, **kw})


# Q1: can we use it at all?
@pytest.mark.parametrize("licence", ["none", "CC-BY-NC-SA-4.0", "CC-BY-NC-4.0"])
def test_q1_unusable_library_is_link(licence: str) -> None:
    d = derive(facts(licence=licence))
    assert (d.intake, d.rule, d.bindings) == (IntakeClass.LINK, Rule.Q1, False)


@pytest.mark.parametrize("kind", [Kind.BENCHMARK, Kind.SYNTHETIC, Kind.AI_INFORMAL, Kind.MATCHING])
def test_q1_unusable_dataset_is_exclude(kind: Kind) -> None:
    assert derive(facts(kind=kind, licence="none")).intake is IntakeClass.EXCLUDE
    assert derive(facts(kind=kind, licence="CC-BY-NC-4.0")).intake is IntakeClass.EXCLUDE


def test_q1_clause_against_machine_learning() -> None:
    d = derive(facts(licence="MIT", terms=("no-ml",)))
    assert d.intake is IntakeClass.LINK
    assert "machine learning" in d.reason
    assert derive(facts(kind=Kind.BENCHMARK, terms=("no-ml",))).intake is IntakeClass.EXCLUDE


def test_q1_dataset_without_licence_evaluates_only_with_written_confirmation() -> None:
    assert derive(facts(kind=Kind.SYNTHETIC, licence="none")).intake is IntakeClass.EXCLUDE
    d = derive(facts(kind=Kind.SYNTHETIC, licence="none", written_confirmation=True))
    assert (d.intake, d.rule) == (IntakeClass.EVALUATE, Rule.Q1_CONFIRMED)
    # A confirmation does not lift a non-commercial licence.
    nc = facts(kind=Kind.SYNTHETIC, licence="CC-BY-NC-4.0", written_confirmation=True)
    assert derive(nc).intake is IntakeClass.EXCLUDE


# Q2: can its text go into the prose zone?
@pytest.mark.parametrize("licence", ["Apache-2.0", "MIT", "BSD-2-Clause", "CC0-1.0", "Unlicense"])
def test_q2_permissive_gives_open_text(licence: str) -> None:
    d = derive(facts(licence=licence, system="metamath"))
    assert (d.intake, d.rule, d.share_alike) == (IntakeClass.OPEN_TEXT, Rule.Q2, False)


def test_q2_cc_by_sa_gives_open_text_with_share_alike() -> None:
    d = derive(facts(licence="CC-BY-SA-4.0", system="agda"))
    assert (d.intake, d.share_alike) == (IntakeClass.OPEN_TEXT_SA, True)


@pytest.mark.parametrize("licence", ["GPL-3.0-only", "AGPL-3.0-only", "LGPL-2.1-only", "CECILL-C"])
def test_q2_software_licences_give_mentions_only(licence: str) -> None:
    d = derive(facts(licence=licence, system="rocq"))
    assert (d.intake, d.rule) == (IntakeClass.MENTIONS, Rule.Q2)


def test_q2_manifest_limit_caps_below_licence() -> None:
    d = derive(facts(licence="BSD-2-Clause", system="hol-light", limit=Limit.MENTIONS))
    assert (d.intake, d.rule) == (IntakeClass.MENTIONS, Rule.LIMIT)
    d = derive(facts(licence="CC-BY-SA-3.0", system="mizar", limit=Limit.CROSSWALKS))
    assert d.intake is IntakeClass.CROSSWALKS


# Q3: can it give bindings? Only Lean 4 libraries, in v1.
def test_q3_only_lean4_libraries_bind() -> None:
    assert derive(facts(system="lean4")).bindings is True
    assert derive(facts(system="isabelle")).bindings is False
    assert derive(facts(system="metamath", licence="CC0-1.0")).bindings is False
    gpl_lean = derive(facts(system="lean4", licence="GPL-3.0-only"))
    assert (gpl_lean.intake, gpl_lean.bindings) == (IntakeClass.MENTIONS, True)
    assert derive(facts(system="lean4", kind=Kind.BENCHMARK)).bindings is False
    assert derive(facts(system="lean4", licence="none")).bindings is False
    assert derive(facts()).label == "open_text+bindings"


# Special rules
def test_benchmarks_evaluate_only_and_synthetic_sets_at_most() -> None:
    assert derive(facts(kind=Kind.BENCHMARK)).rule is Rule.BENCHMARK
    assert derive(facts(kind=Kind.BENCHMARK)).intake is IntakeClass.EVALUATE
    assert derive(facts(kind=Kind.SYNTHETIC)).intake is IntakeClass.EVALUATE


def test_ai_written_informal_datasets_are_search_aids() -> None:
    d = derive(facts(kind=Kind.AI_INFORMAL, authored=Authored.AI))
    assert (d.intake, d.rule, d.bindings) == (IntakeClass.SEARCH_AID, Rule.AI_INFORMAL, False)


def test_matching_datasets_give_candidates_even_when_share_alike() -> None:
    d = derive(facts(kind=Kind.MATCHING, licence="CC-BY-SA-4.0", system="multiple"))
    assert d.intake is IntakeClass.CANDIDATES


def test_pretraining_corpora_are_not_sources() -> None:
    ref = derive(facts(kind=Kind.PRETRAINING, licence="ODC-By-1.0", copy_check_reference=True))
    assert (ref.intake, ref.rule) == (IntakeClass.REFERENCE, Rule.PRETRAINING)
    assert derive(facts(kind=Kind.PRETRAINING, licence="ODC-By-1.0")).intake is IntakeClass.EXCLUDE
    mathpile = derive(facts(kind=Kind.PRETRAINING, licence="CC-BY-NC-SA-4.0"))
    assert mathpile.intake is IntakeClass.EXCLUDE


def test_lists() -> None:
    assert derive(facts(kind=Kind.LIST, licence="Unlicense")).intake is IntakeClass.CROSSWALKS
    d = derive(facts(kind=Kind.LIST, licence="none", system="multiple"))
    assert (d.intake, d.rule) == (IntakeClass.FACTS, Rule.LIST_FACTS)


def test_red_flag_dataset_refused_until_a_person_overrides() -> None:
    flagged = facts(kind=Kind.SYNTHETIC, red_flags=(RedFlag.THIRD_PARTY_TEXT,))
    d = derive(flagged)
    assert (d.intake, d.rule) == (IntakeClass.REFUSED, Rule.RED_FLAG)
    assert "third_party_text" in d.reason
    ok = derive(
        flagged.model_copy(
            update={
                "override_class": IntakeClass.EVALUATE,
                "override_by": "A. Person on 2026-11-30",
            }
        )
    )
    assert (ok.intake, ok.rule) == (IntakeClass.EVALUATE, Rule.RED_FLAG_OVERRIDE)
    assert "A. Person" in ok.reason
    excl = derive(flagged.model_copy(update={"override_class": IntakeClass.EXCLUDE}))
    assert excl.intake is IntakeClass.EXCLUDE


def test_override_cannot_grant_more_than_the_licence() -> None:
    flagged = facts(
        kind=Kind.SYNTHETIC, red_flags=(RedFlag.MODEL_TERMS,), override_class=IntakeClass.SEARCH_AID
    )
    with pytest.raises(IntakeError, match="wider"):
        derive(flagged)


def test_red_flag_does_not_lift_an_unusable_licence() -> None:
    d = derive(
        facts(
            kind=Kind.SYNTHETIC,
            licence="none",
            red_flags=(RedFlag.MODEL_TERMS,),
            override_class=IntakeClass.EVALUATE,
        )
    )
    assert d.intake is IntakeClass.EXCLUDE


def test_ai_and_mixed_libraries_mark_their_text_as_agent_text() -> None:
    assert derive(facts(authored=Authored.AI)).agent_text is True
    assert derive(facts(authored=Authored.MIXED)).agent_text is True
    assert derive(facts(authored=Authored.HUMAN)).agent_text is False
