"""The sources manifest (`manifests/sources.yaml`): typed entries, errors with file and line."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from math2.errors import InputError
from math2.sources.intake import (
    Authored,
    IntakeClass,
    IntakeDecision,
    IntakeError,
    IntakeFacts,
    Kind,
    Limit,
    RedFlag,
    derive,
)
from math2.sources.licences import LicenceError, normalise, options
from math2.util.yamlfile import line_of, load_yaml

SYSTEMS = frozenset(
    {
        "lean4",
        "metamath",
        "agda",
        "isabelle",
        "mizar",
        "rocq",
        "hol-light",
        "hol4",
        "naproche",
        "pvs",
        "acl2",
        "megalodon",
        "multiple",  # lists and matching datasets that span systems
        "none",  # informal-only corpora
    }
)
TERMS = frozenset({"no-ml", "non-commercial", "no-copy"})


class ManifestError(InputError):
    """The manifest is broken: file, line and reason."""


def _licence(value: str) -> str:
    try:
        return normalise(value)
    except LicenceError as exc:
        raise ValueError(str(exc)) from exc


Name = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=80)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Pin(_Strict):
    """A point in a source's history: a commit (+ toolchain) or a version, and the licence there."""

    commit: str | None = None
    version: str | None = None
    toolchain: str | None = None
    date: dt.date | None = None
    licence: str | None = None

    _check_licence = field_validator("licence")(lambda v: None if v is None else _licence(v))

    @model_validator(mode="after")
    def _has_id(self) -> Pin:
        if not (self.commit or self.version):
            raise ValueError("a pin needs a commit or a version")
        return self

    @property
    def key(self) -> str:
        """What identifies the pin within its source."""
        return self.commit or self.version or ""


class Override(_Strict):
    """A person's decision on a red-flag dataset."""

    by: str = Field(min_length=1)
    date: dt.date
    reason: str = Field(min_length=1)
    intake: IntakeClass = Field(alias="class")


class Confirmation(_Strict):
    """The authors' written confirmation of terms for a dataset with no licence."""

    by: str = Field(min_length=1)
    date: dt.date
    reference: str = Field(min_length=1)


class SourceEntry(_Strict):
    """One library, list or dataset of the manifest."""

    name: Name
    title: str = Field(min_length=1)
    system: str
    kind: Kind
    licence: str
    per_item_licence: bool = False
    authored: Authored
    authored_reason: str = Field(min_length=1)
    route: str = Field(min_length=1)
    url: str | None = None
    pins: list[Pin] = Field(default_factory=list)
    unpinned_reason: str | None = None
    terms: list[str] = Field(default_factory=list)
    limit: Limit | None = None
    limit_reason: str | None = None
    red_flags: list[RedFlag] = Field(default_factory=list)
    override: Override | None = None
    written_confirmation: Confirmation | None = None
    copy_check_reference: bool = False
    notes: str | None = None
    # An AI-written dataset: the model that wrote its text as its card names it; None when the
    # card names none, recorded as `unknown` (X08).
    model: str | None = None

    _check_licence = field_validator("licence")(_licence)

    @field_validator("system")
    @classmethod
    def _system(cls, v: str) -> str:
        if v not in SYSTEMS:
            raise ValueError(f"unknown system {v!r} (one of: {', '.join(sorted(SYSTEMS))})")
        return v

    @field_validator("terms")
    @classmethod
    def _terms(cls, v: list[str]) -> list[str]:
        bad = sorted(set(v) - TERMS)
        if bad:
            raise ValueError(f"unknown terms {bad} (known: {sorted(TERMS)})")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> SourceEntry:
        if not self.pins and not self.unpinned_reason:
            raise ValueError("no pins: record one, or say why in unpinned_reason")
        if self.system == "lean4" and self.kind is Kind.LIBRARY:
            for pin in self.pins:
                if pin.commit and not pin.toolchain:
                    raise ValueError(f"pin {pin.commit}: a Lean 4 library pin needs a toolchain")
        if self.limit is not None and not self.limit_reason:
            raise ValueError("a limit needs a limit_reason")
        if self.override is not None and not self.red_flags:
            raise ValueError("an override is only for a dataset with red_flags")
        if self.per_item_licence and self.kind is not Kind.LIBRARY:
            raise ValueError("per_item_licence is for libraries")
        if self.model is not None and self.kind is not Kind.AI_INFORMAL:
            raise ValueError("model is for AI-written informal datasets")
        return self

    @property
    def current_pin(self) -> Pin | None:
        """The pin the importers read: the last one listed."""
        return self.pins[-1] if self.pins else None

    def licence_at(self, pin: Pin | None = None) -> str:
        """The licence in force at a pin (K6.3: read again at each pin)."""
        pin = pin if pin is not None else self.current_pin
        return pin.licence if pin is not None and pin.licence else self.licence

    def facts(self, pin: Pin | None = None, item_licence: str | None = None) -> IntakeFacts:
        """The inputs of the rules at a pin, or for one item of a per-item-licence library."""
        return IntakeFacts(
            name=self.name,
            kind=self.kind,
            system=self.system,
            licence=normalise(item_licence) if item_licence else self.licence_at(pin),
            authored=self.authored,
            terms=tuple(self.terms),
            limit=self.limit,
            red_flags=tuple(self.red_flags),
            override_class=self.override.intake if self.override else None,
            override_by=f"{self.override.by} on {self.override.date}" if self.override else None,
            written_confirmation=self.written_confirmation is not None,
            copy_check_reference=self.copy_check_reference,
        )

    def decide(self, pin: Pin | None = None, item_licence: str | None = None) -> IntakeDecision:
        """The derived intake class at a pin (or for one item)."""
        return derive(self.facts(pin, item_licence))

    def decide_items(self) -> list[IntakeDecision]:
        """For a per-item-licence library, one decision per licence an item may carry."""
        return [self.decide(item_licence=opt) for opt in options(self.licence_at())]


class Manifest(_Strict):
    """The whole manifest file."""

    version: int = Field(ge=1, le=1)
    sources: list[SourceEntry]
    path: str = ""
    digest: str = ""

    def get(self, name: str) -> SourceEntry:
        """The entry called `name`; KeyError if there is none."""
        for s in self.sources:
            if s.name == name:
                return s
        raise KeyError(name)


def load_manifest(path: str | Path) -> Manifest:
    """Load and validate a manifest; any fault is a ManifestError with file and line."""
    path = Path(path)
    try:
        data, duplicates = load_yaml(path)
    except InputError as exc:
        raise ManifestError(exc.path, exc.line, exc.reason, exc.column) from exc
    if duplicates:
        d = duplicates[0]
        raise ManifestError(path, d.line, f"duplicate key {d.key!r} (first at line {d.first_line})")
    if not isinstance(data, dict):
        raise ManifestError(path, 1, "the manifest must be a mapping with 'version' and 'sources'")
    for field in ("path", "digest"):
        if field in data:
            raise ManifestError(path, line_of(data, (field,)), f"unknown top-level key {field!r}")
    try:
        manifest = Manifest.model_validate(
            {**data, "path": str(path), "digest": hashlib.sha256(path.read_bytes()).hexdigest()}
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        where = ".".join(str(p) for p in loc)
        msg = err["msg"].removeprefix("Value error, ")
        raise ManifestError(path, line_of(data, loc), f"{where}: {msg}") from exc
    seen: dict[str, int] = {}
    for i, src in enumerate(manifest.sources):
        line = line_of(data, ("sources", i))
        if src.name in seen:
            raise ManifestError(
                path, line, f"duplicate source name {src.name!r} (first at line {seen[src.name]})"
            )
        seen[src.name] = line or 0
        try:
            for pin in src.pins or [None]:
                src.decide(pin)
        except IntakeError as exc:
            raise ManifestError(path, line_of(data, ("sources", i, "override")), str(exc)) from exc
    return manifest
