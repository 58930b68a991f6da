"""The intake class of a source: K6.2's three questions, in order, plus K6.4/K6.8's special rules.

The class is derived from what the manifest records (licence at the pin, kind, system, authored,
red flags, a person's override), never typed into the manifest.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel

from math2.sources.licences import LicenceFamily, family


class IntakeClass(StrEnum):
    """What the corpus takes from a source."""

    REFUSED = "refused"  # red-flag dataset, until a person records an override
    EXCLUDE = "exclude"  # a dataset (or corpus) the corpus does not use at all
    LINK = "link"  # a library the corpus only links to
    REFERENCE = "reference"  # copy-check reference corpus only, never a source
    EVALUATE = "evaluate"  # evaluates the roles; never a mention, statement or exercise
    SEARCH_AID = "search_aid"  # AI-written informal text: search and clustering input only
    CANDIDATES = "candidates"  # matching pairs that the align role must accept first
    FACTS = "facts"  # a list without licence: only which theorem is formalized where
    CROSSWALKS = "crosswalks"  # crosswalk edges (and mentions), no text
    MENTIONS = "mentions"  # mentions and crosswalks, no text
    OPEN_TEXT = "open_text"  # mentions, crosswalks, text into the prose zone with attribution
    OPEN_TEXT_SA = "open_text_sa"  # as open_text, with share-alike


class Rule(StrEnum):
    """The question or rule that decided a class."""

    PRETRAINING = "K6.8 pretraining corpora are not sources"
    RED_FLAG = "K6.8 red flag"
    RED_FLAG_OVERRIDE = "K6.8 red flag, class set by a person"
    Q1 = "K6.2 Q1 usable at all?"
    Q1_CONFIRMED = "K6.2 Q1 no licence, authors' written confirmation"
    BENCHMARK = "K6.8 benchmarks evaluate only"
    SYNTHETIC = "K6.8 synthetic sets evaluate at most"
    AI_INFORMAL = "K6.4 AI-written informal datasets are never node text"
    MATCHING = "K6.7 matching datasets give candidate pairs"
    LIST_FACTS = "K6.7 a list without licence gives facts only"
    LIST = "K6.7 theorem lists give crosswalks"
    LIMIT = "manifest limit (K6.6)"
    Q2 = "K6.2 Q2 text into the prose zone?"


class IntakeDecision(BaseModel):
    """A derived class with the rule that decided it (Q3 answers `bindings`)."""

    intake: IntakeClass
    bindings: bool = False
    share_alike: bool = False
    agent_text: bool = False
    rule: Rule
    reason: str
    licence: str

    @property
    def label(self) -> str:
        """`open_text+bindings` style label for tables."""
        return self.intake.value + ("+bindings" if self.bindings else "")


# A source's kind, as the rules see it.
class Kind(StrEnum):
    """What sort of source a manifest entry is."""

    LIBRARY = "library"
    LIST = "list"
    BENCHMARK = "benchmark"
    SYNTHETIC = "synthetic"
    AI_INFORMAL = "ai_informal"
    MATCHING = "matching"
    PRETRAINING = "pretraining"

    @property
    def is_dataset(self) -> bool:
        """Libraries and lists are not datasets; everything else is."""
        return self not in (Kind.LIBRARY, Kind.LIST)


class Authored(StrEnum):
    """Who wrote a source (K6.5); mixed has the rules of ai."""

    HUMAN = "human"
    AI = "ai"
    MIXED = "mixed"


class Limit(StrEnum):
    """A cap the manifest may put below what the licence allows (never above)."""

    MENTIONS = "mentions"
    CROSSWALKS = "crosswalks"


class RedFlag(StrEnum):
    """Groups of datasets the importer refuses until a person sets their class (K6.8)."""

    THIRD_PARTY_TEXT = "third_party_text"  # informal side copied from a third party (e.g. AoPS)
    UPSTREAM_LICENCE = "upstream_licence"  # licence wider than that of the data it was built from
    MODEL_TERMS = "model_terms"  # made by a model whose terms restrict the use of its output
    UNNAMED_MODEL = "unnamed_model"  # model-written text from a model the dataset does not name
    BENCHMARK_LEAK = "benchmark_leak"  # holds items of a benchmark (contamination)
    PERSONAL_DATA = "personal_data"


class IntakeError(ValueError):
    """Facts that the rules cannot accept (e.g. an override wider than the licence)."""


class IntakeFacts(BaseModel):
    """Everything the rules read; built from a manifest entry at one pin (or one item)."""

    name: str
    kind: Kind
    system: str
    licence: str
    authored: Authored = Authored.HUMAN
    terms: tuple[str, ...] = ()  # extra terms beyond the licence, e.g. "no-ml"
    limit: Limit | None = None
    red_flags: tuple[RedFlag, ...] = ()
    override_class: IntakeClass | None = None
    override_by: str | None = None
    written_confirmation: bool = False
    copy_check_reference: bool = False


_TEXT = {
    LicenceFamily.PERMISSIVE: IntakeClass.OPEN_TEXT,
    LicenceFamily.SHARE_ALIKE: IntakeClass.OPEN_TEXT_SA,
}

LEAN4 = "lean4"


def derive(f: IntakeFacts) -> IntakeDecision:
    """Apply the rules in order; the first that decides gives the class and the reason."""
    agent = f.authored in (Authored.AI, Authored.MIXED)

    def out(cls: IntakeClass, rule: Rule, reason: str, **kw: bool) -> IntakeDecision:
        return IntakeDecision(
            intake=cls, rule=rule, reason=reason, licence=f.licence, agent_text=agent, **kw
        )

    if f.kind is Kind.PRETRAINING:
        if f.copy_check_reference:
            return out(IntakeClass.REFERENCE, Rule.PRETRAINING, "copy-check reference only (K9.4)")
        return out(IntakeClass.EXCLUDE, Rule.PRETRAINING, "a pretraining corpus is not a source")

    fam = family(f.licence)
    no_ml = "no-ml" in f.terms
    noncommercial = "non-commercial" in f.terms or fam is LicenceFamily.NONCOMMERCIAL
    usable = fam is not LicenceFamily.NONE and not noncommercial and not no_ml

    # Q1: can we use it at all?
    if not usable:
        why = (
            "a clause against machine learning"
            if no_ml
            else "a non-commercial licence"
            if noncommercial
            else "no licence"
        )
        if f.kind is Kind.LIST and fam is LicenceFamily.NONE and not noncommercial and not no_ml:
            return out(IntakeClass.FACTS, Rule.LIST_FACTS, "no licence: which theorem is where")
        if f.kind.is_dataset:
            if fam is LicenceFamily.NONE and f.written_confirmation and not noncommercial:
                decided = out(
                    IntakeClass.EVALUATE, Rule.Q1_CONFIRMED, "no licence; authors confirmed terms"
                )
                return _red_flags(f, decided, out)
            return out(IntakeClass.EXCLUDE, Rule.Q1, f"{why}: a dataset is excluded")
        return out(IntakeClass.LINK, Rule.Q1, f"{why}: a library is only linked")

    # Dataset kinds that never put text or bindings into the corpus.
    dataset_rules = {
        Kind.BENCHMARK: (IntakeClass.EVALUATE, Rule.BENCHMARK, "evaluation only"),
        Kind.SYNTHETIC: (IntakeClass.EVALUATE, Rule.SYNTHETIC, "model-made statements"),
        Kind.AI_INFORMAL: (IntakeClass.SEARCH_AID, Rule.AI_INFORMAL, "search aid and clustering"),
        Kind.MATCHING: (IntakeClass.CANDIDATES, Rule.MATCHING, "pairs judged again by align"),
    }
    if f.kind in dataset_rules:
        return _red_flags(f, out(*dataset_rules[f.kind]), out)
    if f.kind is Kind.LIST:
        return out(IntakeClass.CROSSWALKS, Rule.LIST, "list entries become crosswalk edges")

    # A library. Q3 (bindings) is independent of Q2 (text): only Lean 4 libraries, in v1.
    bindings = f.system == LEAN4
    if f.limit is not None:
        cls = IntakeClass.MENTIONS if f.limit is Limit.MENTIONS else IntakeClass.CROSSWALKS
        return out(cls, Rule.LIMIT, f"the manifest takes {f.limit.value} only", bindings=bindings)
    # Q2: can its text go into the prose zone?
    if fam in _TEXT:
        sa = fam is LicenceFamily.SHARE_ALIKE
        why = "with share-alike and attribution" if sa else "with attribution"
        return out(
            _TEXT[fam],
            Rule.Q2,
            f"{fam.value} licence: text {why}",
            bindings=bindings,
            share_alike=sa,
        )
    return out(
        IntakeClass.MENTIONS,
        Rule.Q2,
        f"{fam.value} licence: mentions and crosswalks, no text",
        bindings=bindings,
    )


def _red_flags(f: IntakeFacts, decided: IntakeDecision, out) -> IntakeDecision:
    if not f.red_flags:
        return decided
    flags = ", ".join(flag.value for flag in f.red_flags)
    if f.override_class is None:
        return out(IntakeClass.REFUSED, Rule.RED_FLAG, f"red flags ({flags}); no override recorded")
    # A person lifts the refusal to what the licence gives, or excludes; never wider.
    if f.override_class not in (decided.intake, IntakeClass.EXCLUDE):
        raise IntakeError(
            f"override class {f.override_class.value!r} is wider than the rules allow "
            f"({decided.intake.value!r} or 'exclude')"
        )
    return out(
        f.override_class,
        Rule.RED_FLAG_OVERRIDE,
        f"red flags ({flags}); set by {f.override_by} (licence would give {decided.intake.value})",
    )
