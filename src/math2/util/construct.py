"""Pydantic models built from values already of their fields' types, as `model_construct`
builds them but without its per-field alias and default lookups: a search builds two or three
models per hit (`Hit`, `SearchHit`), 4–9 µs each with `model_construct`, a few milliseconds
of a query at k = 100 (issue 45 §6, docs/benchmarks.md `cost45b`)."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_FIELDS: dict[type[BaseModel], tuple[tuple[str, ...], frozenset[str]] | None] = {}
_set = object.__setattr__


def _plain_fields(cls: type[BaseModel]) -> tuple[tuple[str, ...], frozenset[str]] | None:
    """The field names of a model that `model_construct` fills from values alone (no alias,
    no extra kept, no root model, no post-init hook, no private attributes), else None."""
    if cls not in _FIELDS:
        fields = cls.__pydantic_fields__
        plain = not (
            cls.__pydantic_root_model__
            or cls.__pydantic_post_init__
            or cls.__private_attributes__
            or cls.model_config.get("extra") == "allow"
            or any(f.alias is not None or f.validation_alias is not None for f in fields.values())
        )
        _FIELDS[cls] = (tuple(fields), frozenset(fields)) if plain else None
    return _FIELDS[cls]


def construct(cls: type[M], values: dict[str, Any]) -> M:
    """`cls.model_construct(**values)` where `values` gives every field (the same instance:
    its fields in the model's order, all of them set); any other model or a missing or extra
    field goes through `model_construct` itself."""
    plain = _plain_fields(cls)
    if plain is None or len(values) != len(plain[0]):
        return cls.model_construct(**values)
    names, every = plain
    try:
        fields = {name: values[name] for name in names}
    except KeyError:
        return cls.model_construct(**values)
    m = cls.__new__(cls)
    _set(m, "__dict__", fields)
    _set(m, "__pydantic_fields_set__", set(every))
    _set(m, "__pydantic_extra__", None)
    _set(m, "__pydantic_private__", None)
    return m
