"""Prompts as versioned template files; every call records the template's id and hash.

A template is a TOML file `src/math2/prompts/<role>/<name>.toml` (or in a folder the caller
names) with `id`, `version`, an optional `description`, and `system` / `user` strings in Jinja2
(undefined variables are errors). Its hash is the SHA-256 of the file's bytes, so any edit,
even of whitespace, is a new hash in the attempts that used it.
"""

from __future__ import annotations

import hashlib
import tomllib
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import jinja2
from pydantic import BaseModel

from math2.errors import InputError

_ENV = jinja2.Environment(
    undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True
)


@lru_cache(maxsize=256)
def _compiled(source: str) -> jinja2.Template:
    """A template string compiled once per process (compiling cost 1-3.4 ms a render: four
    a formalize item, measured in a Ray run's item worker, issue 44)."""
    return _ENV.from_string(source)


class Template(BaseModel):
    """A loaded prompt template."""

    id: str
    version: int
    hash: str
    path: str
    description: str = ""
    system: str | None = None
    user: str
    max_tokens: int | None = None  # the stage's token budget (the CLI may override it)

    @property
    def ref(self) -> str:
        """`id@version`, as recorded with each call."""
        return f"{self.id}@{self.version}"

    def render(self, **variables: Any) -> list[dict[str, str]]:
        """The chat messages for these variables."""
        msgs = []
        try:
            if self.system:
                msgs.append(
                    {"role": "system", "content": _compiled(self.system).render(**variables)}
                )
            msgs.append({"role": "user", "content": _compiled(self.user).render(**variables)})
        except jinja2.TemplateError as exc:
            raise InputError(self.path, None, f"template {self.ref}: {exc}") from exc
        return msgs


def builtin_dir() -> Path:
    """The folder of the templates that ship with math2."""
    return Path(str(files("math2") / "prompts"))


def load_template_file(path: Path) -> Template:
    """Read one template file."""
    try:
        raw = path.read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(path, None, f"cannot read template: {exc}") from exc
    for field in ("id", "version", "user"):
        if field not in data:
            raise InputError(path, None, f"template has no `{field}`")
    try:
        _ENV.parse(data["user"])
        if data.get("system"):
            _ENV.parse(data["system"])
    except jinja2.TemplateSyntaxError as exc:
        raise InputError(path, exc.lineno, f"template syntax: {exc.message}") from exc
    budget = data.get("max_tokens")
    if budget is not None and (
        not isinstance(budget, int) or isinstance(budget, bool) or budget < 1
    ):
        raise InputError(path, None, f"max_tokens must be a positive integer, not {budget!r}")
    return Template(
        max_tokens=budget,
        id=data["id"],
        version=int(data["version"]),
        hash=hashlib.sha256(raw).hexdigest(),
        path=str(path),
        description=data.get("description", ""),
        system=data.get("system"),
        user=data["user"],
    )


@lru_cache(maxsize=256)
def _load(template_id: str, folder: str) -> Template:
    path = Path(folder) / f"{template_id}.toml"
    if not path.exists():
        raise InputError(path, None, f"no template {template_id!r}")
    t = load_template_file(path)
    if t.id != template_id:
        raise InputError(path, None, f"template file says id {t.id!r}, expected {template_id!r}")
    return t


def load_template(template_id: str, folder: Path | None = None) -> Template:
    """A template by id (`role/name`), from `folder` if given and present there, else built in."""
    if folder is not None and (Path(folder) / f"{template_id}.toml").exists():
        return _load(template_id, str(folder))
    return _load(template_id, str(builtin_dir()))
