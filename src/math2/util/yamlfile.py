"""YAML loading that remembers where each key stood and reports duplicate keys."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from math2.errors import InputError
from math2.util.textlimit import check_text


class LineDict(dict):
    """A mapping from YAML that knows the line of itself and of each key."""

    line: int = 0
    key_lines: dict[Any, int]


class LineList(list):
    """A sequence from YAML that knows the line of itself and of each item."""

    line: int = 0
    item_lines: list[int]


@dataclass(frozen=True)
class DuplicateKey:
    """A key given twice in one mapping: YAML keeps the last, we report both."""

    key: Any
    first_line: int
    line: int
    first_value: Any = None  # the value YAML would have dropped


class _Loader(yaml.SafeLoader):
    def __init__(self, stream: str):
        super().__init__(stream)
        self.duplicates: list[DuplicateKey] = []


def _construct_mapping(loader: _Loader, node: yaml.MappingNode, deep: bool = False) -> LineDict:
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError as exc:
            raise yaml.constructor.ConstructorError(
                None, None, "found an unhashable key", key_node.start_mark
            ) from exc
        line = key_node.start_mark.line + 1
        if key in out:
            loader.duplicates.append(DuplicateKey(key, out.key_lines[key], line, out[key]))
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = line
    return out


def _construct_sequence(loader: _Loader, node: yaml.SequenceNode, deep: bool = False) -> LineList:
    out = LineList(loader.construct_object(child, deep=True) for child in node.value)
    out.line = node.start_mark.line + 1
    out.item_lines = [child.start_mark.line + 1 for child in node.value]
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def parse_yaml(
    text: str, path: str | Path, *, line_offset: int = 0
) -> tuple[Any, list[DuplicateKey]]:
    """Parse YAML text; a syntax error becomes an InputError with the file and line."""
    loader = _Loader(text)
    try:
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + line_offset if mark else None
        col = mark.column + 1 if mark else None
        reason = " ".join(p for p in (exc.context, exc.problem) if p) or "invalid YAML"
        raise InputError(path, line, f"invalid YAML: {reason}", column=col) from exc
    except yaml.YAMLError as exc:
        raise InputError(path, None, f"invalid YAML: {exc}") from exc
    finally:
        loader.dispose()
    if line_offset:
        _shift(data, line_offset)
        loader.duplicates = [
            DuplicateKey(d.key, d.first_line + line_offset, d.line + line_offset, d.first_value)
            for d in loader.duplicates
        ]
    _check_sizes(data, path, getattr(data, "line", None), "")
    return data, loader.duplicates


def _check_sizes(data: Any, path: str | Path, line: int | None, where: str) -> None:
    """Every string scalar within the text limit (`math2.util.textlimit`), named by its line
    and its key path."""
    if isinstance(data, str):
        check_text(data, f"{where!r}" if where else "the value", path, line)
    elif isinstance(data, LineDict):
        for k, v in data.items():
            key = f"{where}.{k}" if where else str(k)
            _check_sizes(v, path, data.key_lines.get(k, line), key)
    elif isinstance(data, LineList):
        for i, v in enumerate(data):
            _check_sizes(v, path, data.item_lines[i], f"{where}[{i}]")


def _shift(data: Any, offset: int) -> None:
    if isinstance(data, LineDict):
        data.line += offset
        data.key_lines = {k: v + offset for k, v in data.key_lines.items()}
        for v in data.values():
            _shift(v, offset)
    elif isinstance(data, LineList):
        data.line += offset
        data.item_lines = [v + offset for v in data.item_lines]
        for v in data:
            _shift(v, offset)


def load_yaml(path: str | Path) -> tuple[Any, list[DuplicateKey]]:
    """Read and parse a YAML file (UTF-8); undecodable bytes are an InputError."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise InputError(p, None, f"cannot read: {exc.strerror or exc}") from exc
    return parse_yaml(decode_utf8(raw, p), p)


def decode_utf8(raw: bytes, path: str | Path) -> str:
    """Decode UTF-8 or raise an InputError naming the line of the first bad byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(path, line, f"invalid UTF-8 at byte {exc.start}") from exc


def line_of(data: Any, loc: tuple[Any, ...]) -> int | None:
    """The line of the deepest node along a pydantic-style location path."""
    line = getattr(data, "line", None)
    node = data
    for part in loc:
        if isinstance(node, LineDict) and part in node:
            line = node.key_lines.get(part, line)
            node = node[part]
        elif isinstance(node, LineList) and isinstance(part, int) and 0 <= part < len(node):
            line = node.item_lines[part]
            node = node[part]
        else:
            break
    return line
