"""How Rocq modules are made of other modules, read over a whole library: what a module gets by
`Include` (and by `Module X := A <+ B`), so that the names a user writes — `Nat.add_comm`,
`N.add_comm`, `Z.add_comm` — are mentions of their own, not only the functor's copy
(`Stdlib.Numbers.NatInt.NZAdd.NZAddProp.add_comm`, which no user can name).

`importers.rocq` reads each file into a `FileRead` (its declarations, its modules, its
`Include`s); `Library` reads every file of the checkout once, then gives the import each file's
declarations followed by what the concrete modules of that file include:

- the members of a module are its own declarations, those of the modules nested in it, and the
  members of everything it includes, transitively (a cycle is cut);
- an included name is resolved like a qualified name in Rocq, by its last parts: a module of
  the same file first, else the library's one module with that suffix, else the one whose path
  shares most with the including module's; a name that is no module of the library (a functor
  parameter `U`, `Corelib.Init.Nat` of another library) gives nothing;
- only a concrete module (not a module type, not a functor, not inside one) gets copies; a copy
  keeps the kind and statement of what it copies, names it in `included_from`, and sits at the
  line of the `Include`; a name the module declares itself is not copied over it;
- `Module X := Y.` (no arguments, nothing composed) is another name for `Y` — the same
  constants, or the same functor (`Module Properties := WProperties.`): `X` gets no copies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from math2.errors import InputError
from math2.importers.systems import Decl, Parsed, SystemReader, Unread


@dataclass(frozen=True, slots=True)
class ModuleInfo:
    """A module of a file: its full name, kind (`file`, `module`, `module type`), whether it
    has parameters, and whether it is abstract (a module type or functor, or inside one)."""

    name: str
    kind: str
    functor: bool
    abstract: bool
    file: str
    line: int


@dataclass(frozen=True, slots=True)
class Include:
    """`Include REF` inside module `into` (or `Module into := REF <+ …`)."""

    into: str
    ref: str
    file: str
    line: int
    alias: bool = False  # `Module X := Y.`: one module named, nothing composed


@dataclass(slots=True)
class FileRead:
    """What one `.v` file declares."""

    file: str
    decls: list[Decl] = field(default_factory=list)
    modules: list[ModuleInfo] = field(default_factory=list)
    includes: list[Include] = field(default_factory=list)
    unread: list[Unread] = field(default_factory=list)  # forms seen and not read


@dataclass
class Library:
    """A checkout read whole, so that includes across files can be resolved."""

    read: Callable[[Path, Path, str], FileRead]
    files: Callable[[Path], list[Path]]
    _by_file: dict[str, FileRead | InputError] = field(default_factory=dict)
    _modules: dict[str, ModuleInfo] = field(default_factory=dict)
    _suffixes: dict[str, list[str]] = field(default_factory=dict)
    _own: dict[str, list[Decl]] = field(default_factory=dict)  # module -> its declarations
    _children: dict[str, list[str]] = field(default_factory=dict)
    _includes: dict[str, list[Include]] = field(default_factory=dict)
    _members: dict[str, list[tuple[str, Decl]]] = field(default_factory=dict)
    _root: Path | None = None
    unresolved: int = 0

    def reader(self, source: str, what: str) -> SystemReader:
        """The `SystemReader` of the import: its files, and each file's declarations with what
        its modules include."""
        return SystemReader(source, what, self.files, self.parse)

    def parse(self, root: Path, path: Path, text: str) -> Parsed:
        if self._root != root:
            self._load(root)
        got = self._by_file.get(str(path.relative_to(root)))
        if got is None:  # a file outside the library's list: read alone
            got = self.read(root, path, text)
        if isinstance(got, InputError):
            raise got
        return Parsed([*got.decls, *self._copies(got)], list(got.unread))

    def _load(self, root: Path) -> None:
        from math2.importers.masking import read_source

        self._root = root
        for path in self.files(root):
            rel = str(path.relative_to(root))
            try:
                got = self.read(root, path, read_source(path)[0])
            except InputError as exc:
                self._by_file[rel] = exc
                continue
            self._by_file[rel] = got
            for m in got.modules:
                self._modules.setdefault(m.name, m)
                parent = m.name.rpartition(".")[0]
                if m.kind != "file":
                    self._children.setdefault(parent, []).append(m.name)
                parts = m.name.split(".")
                for i in range(len(parts)):
                    self._suffixes.setdefault(".".join(parts[i:]), []).append(m.name)
            for d in got.decls:
                self._own.setdefault(d.name.rpartition(".")[0], []).append(d)
            for inc in got.includes:
                self._includes.setdefault(inc.into, []).append(inc)

    def _resolve(self, inc: Include) -> str | None:
        found = [
            c
            for c in self._suffixes.get(inc.ref, [])
            if c != inc.into and not inc.into.startswith(f"{c}.")
        ]
        if not found:
            self.unresolved += 1
            return None
        same_file = [c for c in found if self._modules[c].file == inc.file]
        pool = same_file or found

        def shared(c: str) -> int:
            n = 0
            for a, b in zip(c.split("."), inc.into.split("."), strict=False):
                if a != b:
                    break
                n += 1
            return n

        return sorted(pool, key=lambda c: (-shared(c), c))[0]

    def members(self, module: str, seen: frozenset[str] = frozenset()) -> list[tuple[str, Decl]]:
        """(name relative to `module`, declaration) of everything `module` has."""
        if module in self._members:
            return self._members[module]
        if module in seen:  # a cycle: cut
            return []
        seen = seen | {module}
        out = [(d.name.rpartition(".")[2], d) for d in self._own.get(module, [])]
        for child in self._children.get(module, []):
            short = child.rpartition(".")[2]
            out += [(f"{short}.{r}", d) for r, d in self.members(child, seen)]
        for inc in self._includes.get(module, []):
            if (target := self._resolve(inc)) is not None:
                out += self.members(target, seen)
        self._members[module] = out
        return out

    def _copies(self, got: FileRead) -> list[Decl]:
        """The declarations the concrete modules of one file get by what they include."""
        out: list[Decl] = []
        for m in got.modules:
            if m.kind != "module" or m.abstract:
                continue
            own = {r for r, _ in self._members_own(m.name)}
            for inc in self._includes.get(m.name, []):
                target = self._resolve(inc)
                if target is None:
                    continue
                if inc.alias:
                    continue  # another name for the same constants (or the same functor)
                for rel, d in self.members(target):
                    if rel in own:
                        continue
                    own.add(rel)
                    extra = {k: v for k, v in d.extra.items() if k not in _ABSTRACT_MARKS}
                    extra.update(file=inc.file, included_from=d.name)
                    out.append(
                        Decl(
                            name=f"{m.name}.{rel}",
                            kind=d.kind,
                            module=got.modules[0].name,
                            line=inc.line,
                            statement=d.statement,
                            extra=extra,
                        )
                    )
        return out

    def _members_own(self, module: str) -> list[tuple[str, Decl]]:
        """What `module` declares itself (and in its nested modules), without includes."""
        out = [(d.name.rpartition(".")[2], d) for d in self._own.get(module, [])]
        for child in self._children.get(module, []):
            short = child.rpartition(".")[2]
            out += [(f"{short}.{r}", d) for r, d in self._members_own(child)]
        return out


_ABSTRACT_MARKS = ("functor_body", "module_type")
