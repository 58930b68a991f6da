"""Checks on (informal, formal) pairs: registered checks with typed verdicts, batteries, storage.

    from math2.checks import Battery, CheckEnv, Pair, default_config, run_checks

    battery = Battery.from_config(default_config(judges=["qwq-32b"], translator="m"))
    outcomes = await battery.run(Pair(id="x", informal=text, formal=lean), CheckEnv(ctx=ctx))

Checks: the lints (`lint.*`, no model), `copy` (n-gram overlap with reference corpora, the
engine in `ngrams.py` that 13-gram decontamination reuses), `compile` (math2.lean),
`consistency` (the six defect kinds) and `backtranslation` (back-translation + NLI). A verdict is
pass, fail, error (undecided: never a pass) or skip. `run_checks` runs a battery over a JSONL
file of pairs on `math2.runs` and stores each verdict in `check_results`.
"""

from math2.checks import copy as _copy  # noqa: F401  (registers the copy check)
from math2.checks import model as _model  # noqa: F401  (registers the model checks)
from math2.checks.base import (
    Check,
    CheckEnv,
    Outcome,
    Pair,
    UnknownCheck,
    check_names,
    make_check,
    pair_key,
    register,
)
from math2.checks.battery import (
    Battery,
    BatteryConfig,
    CheckSpec,
    default_config,
    load_config,
    overall,
    record_outcomes,
    stored_outcomes,
)
from math2.checks.job import CheckedPair, run_checks
from math2.checks.lints import LINTS, lint_all
from math2.checks.model import NLIVerdict
from math2.checks.ngrams import DEFAULT_N, NgramIndex, NgramIndexError, Overlap, Span
from math2.checks.pairs import read_pairs

__all__ = [
    "DEFAULT_N",
    "LINTS",
    "Battery",
    "BatteryConfig",
    "Check",
    "CheckEnv",
    "CheckSpec",
    "CheckedPair",
    "NLIVerdict",
    "NgramIndex",
    "NgramIndexError",
    "Outcome",
    "Overlap",
    "Pair",
    "Span",
    "UnknownCheck",
    "check_names",
    "default_config",
    "lint_all",
    "load_config",
    "make_check",
    "overall",
    "pair_key",
    "read_pairs",
    "record_outcomes",
    "register",
    "run_checks",
    "stored_outcomes",
]
