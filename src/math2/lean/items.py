"""Reading items to check from a `.lean` file or a `.jsonl` file, with file:line errors."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from math2.errors import InputError
from math2.lean.checker import CheckItem, Mode
from math2.lean.statement import benchmark_code
from math2.lean.trust import ContextTrust
from math2.util.jsonl import read_jsonl
from math2.util.textlimit import check_strings
from math2.util.yamlfile import decode_utf8

#: The fields a JSONL line may hold its Lean in, in the order they are looked for: the code
#: whole, or a statement (with `header`) as benchmarks name it — DeepSeek-Prover's and FATE's
#: `formal_statement`, `lean4_formalization`, MathForm's harness `ground_truth`.
CODE_FIELDS = ("code", "formal_statement", "lean4_formalization", "ground_truth")


@dataclass
class ItemsRead:
    """The items of a file, and how many were read from each field (`CODE_FIELDS`)."""

    items: list[CheckItem]
    fields: Counter[str] = field(default_factory=Counter)
    # items refused as read (a field over the text limit): id → the one-line reason with the
    # file and line; the file's other items are still checked
    refused: dict[str, str] = field(default_factory=dict)


def load_items(
    path: str | Path,
    mode: Mode | None = None,
    *,
    relaxed: bool = False,
    name: str | None = None,
    trust: ContextTrust = ContextTrust.GENERATED,
) -> list[CheckItem]:
    """Items of a `.lean` file (one item) or a `.jsonl` file (one per line); `read_items` also
    says which field each line's Lean came from."""
    return read_items(path, mode, relaxed=relaxed, name=name, trust=trust).items


def read_items(
    path: str | Path,
    mode: Mode | None = None,
    *,
    relaxed: bool = False,
    name: str | None = None,
    trust: ContextTrust = ContextTrust.GENERATED,
) -> ItemsRead:
    """Items of a `.lean` file (one item) or a `.jsonl` file (one per line).

    A JSONL line has `code`, or `header` + a statement in `formal_statement`,
    `lean4_formalization` or `ground_truth` (the benchmark shapes; the first of `CODE_FIELDS`
    present is read, and counted in `fields`); an id from `id` or `name`; it may choose
    `"mode": "statement"` or `"proof"`, never `plain` (only the caller can relax the rules,
    with `relaxed=True`). `name` is the theorem name a `.lean` file
    must declare, and the default for JSONL lines that name none. A statement ending in `:=` or
    `:= by` (a prover's prompt) gets `sorry` appended. Empty input is an error.

    The theorem an item must declare is `theorem_name` (several, for a multi-part item:
    `theorem_names`); `id` and `name` are only ids (in MathForm's harness format `name` is
    the item's id). `trust` says who wrote the context (the caller's choice, never the data's).
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from exc
    text = decode_utf8(raw, path)
    default = Mode.PLAIN if relaxed else (mode or Mode.STATEMENT)
    if path.suffix == ".lean":
        if not text.strip():
            raise InputError(path, None, "the file is empty: there is nothing to check")
        item = CheckItem(id=path.stem, code=text, mode=default, name=name, trust=trust)
        return ItemsRead([item], Counter({".lean file": 1}))
    if path.suffix != ".jsonl":
        raise InputError(path, None, "expected a .lean or .jsonl file")
    items: list[CheckItem] = []
    fields: Counter[str] = Counter()
    refused: dict[str, str] = {}
    seen: set[str] = set()
    for lineno, obj in read_jsonl(path, check_text=False):
        item_id = str(obj.get("id", obj.get("name", lineno)))
        if item_id in seen:
            raise InputError(path, lineno, f"duplicate id {item_id!r}")
        seen.add(item_id)
        try:
            check_strings(obj, path, lineno)
        except InputError as exc:  # this item is refused; the others are checked
            refused[item_id] = str(exc)
            continue
        where = next((f for f in CODE_FIELDS if f in obj), None)
        if where is None:
            raise InputError(
                path,
                lineno,
                "no Lean to check: a line needs one of the fields "
                + ", ".join(repr(f) for f in CODE_FIELDS)
                + f" (it has {', '.join(repr(k) for k in obj) or 'none'})",
            )
        value = obj[where]
        if not isinstance(value, str):
            raise InputError(path, lineno, f"field {where!r} is {type(value).__name__}, not text")
        fields[where] += 1
        code = value if where == "code" else benchmark_code(obj.get("header") or "", value)
        try:
            items.append(
                CheckItem(
                    id=item_id,
                    code=code,
                    name=obj.get("theorem_name", name),
                    parts=_parts(obj.get("theorem_names"), path, lineno),
                    mode=_item_mode(obj.get("mode"), default, path, lineno),
                    trust=trust,
                )
            )
        except (ValidationError, ValueError) as exc:
            raise InputError(path, lineno, f"bad item: {exc}") from exc
    if not items and not refused:
        raise InputError(path, None, "the file has no items: there is nothing to check")
    return ItemsRead(items, fields, refused)


def _item_mode(value: object, default: Mode, path: Path, lineno: int) -> Mode:
    """The data may ask for statement or proof checks; nothing in it can relax them."""
    if value is None:
        return default
    if value not in (Mode.STATEMENT.value, Mode.PROOF.value):
        raise InputError(
            path,
            lineno,
            f"mode {value!r} is not allowed in the data (statement or proof); relaxing the "
            "checks is only ever a command-line option",
        )
    return Mode(str(value))


def _parts(value: object, path: Path, lineno: int) -> list[str]:
    """`theorem_names`: the targets of a multi-part item, each its own theorem."""
    if value is None:
        return []
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise InputError(path, lineno, "theorem_names must be a non-empty list of names")
    return value
