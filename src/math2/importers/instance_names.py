"""Anonymous instances named as Lean names them, with what only the whole library tells.

`lean_source.scan_file` names an anonymous instance from its own file (`lean_names`). Two parts
of Lean's rule need the whole library, so `name_instances` renames them after every file is
scanned:

- which classes are Prop-valued and which take instance arguments (an instance binder the rest
  depends on gives no `Of…` part): read from the library's `class` and `structure`
  declarations (`lean_names.class_signatures` on their statements);
- the suffix (`mkBaseNameWithSuffix`): none when a constant of the name (or a prefix of the
  current namespace that is a declaration) is declared in the library, else the whole module
  (`_mathlib_algebra_demo`): an instance about core types only, such as `Inhabited Nat`. (The
  Lean source read for this also appends `_<project>` when no constant comes from the current
  module, but Mathlib at the pin refers to such instances without it, e.g.
  `Complex.instNormedField`, so that step is not applied.)

A constant written `C` inside namespace `A.B` is looked up as `A.B.C`, `A.C`, then `C`; since
`open` and dot notation hide where a constant lives, one whose last part is the last part of
any library declaration also counts as the library's, and no suffix is added when no constant
was recognised at all or a lower-case identifier that may be a constant was met (`sphere`):
the suffix is given only where every constant is known to be foreign.
Then repeats in a file get `_1`, `_2`, … as Lean's `mkUnusedBaseName` does.
"""

from __future__ import annotations

from collections.abc import Iterable

from math2.importers.lean_namegen import instance_name
from math2.importers.lean_names import class_signatures, module_suffix
from math2.importers.lean_notation import is_symbol, variable_letter
from math2.importers.lean_source import SourceFile
from math2.lean.names import in_namespace


def library_classes(files: Iterable[SourceFile]) -> dict[str, tuple[bool, bool]]:
    """Class and structure name (last part) → (Prop-valued, takes instance arguments)."""
    out: dict[str, tuple[bool, bool]] = {}
    for f in files:
        for d in f.declarations:
            if d.kind in ("class", "structure", "class inductive") and d.name:
                header = f"{d.kind} {d.name} {d.statement} where"
                out.update(class_signatures(header))
    return out


def _resolve(const: str, namespace: list[str], names: set[str]) -> str | None:
    """The library name `const` stands for inside `namespace`, innermost first (`_root_.x`
    is `x` alone: `math2.lean.names.in_namespace`); None when none is the library's."""
    return next((n for n in in_namespace(const, ".".join(namespace)) if n in names), None)


def prefix_notation(files: Iterable[SourceFile], names: set[str]) -> dict[str, dict[str, str]]:
    """The library's prefix and closed notation (`𝕎 R`, `𝔸(n; S)`, `𝓢(E, F)`), by the namespace
    it is active in ("" for global notation, `NS` for `scoped[NS]`; postfix notation, `Cᵒᵖ`,
    under `postfix:<scope>`): its first atom → the
    constant it unfolds to, resolved inside the namespace it was declared in; `local` notation
    under `local:<the file's path>` (`𝕎` is `WittVector p` in each Witt vector file). Left
    out: Greek one-letter atoms (`ι`, `η`: variables far more often), atoms starting with an
    ASCII character (`Var[`: replaced in text, they would split identifiers), and atoms that
    several constants share in one scope."""
    found: dict[str, dict[str, set[str]]] = {}
    for f in files:
        for n in f.notations:
            atom = n.atoms[0] if n.atoms else ""
            postfix = n.postfix
            if not (n.leading_atom or postfix) or not n.constants or not is_symbol(atom):
                continue
            if atom[:1].isascii() or variable_letter(atom):
                continue
            ns = n.namespace.split(".") if n.namespace else []
            const = _resolve(n.constants[0], ns, names) or n.constants[0]
            scope = f"local:{f.path}" if n.local else n.scope
            scope = f"postfix:{scope}" if postfix else scope
            found.setdefault(scope, {}).setdefault(atom, set()).add(const)
    return {
        scope: {a: next(iter(cs)) for a, cs in atoms.items() if len(cs) == 1}
        for scope, atoms in found.items()
    }


def active_notation(
    table: dict[str, dict[str, str]], namespace: list[str], file: SourceFile
) -> tuple[dict[str, str], dict[str, str]]:
    """The notation active for an instance inside `namespace` of `file`: the global one, that
    of each enclosing scope and of each namespace the file opens (wherever in the file), and
    the file's local notation: (prefix and closed notation, postfix notation)."""
    scopes = [".".join(namespace[:k]) for k in range(1, len(namespace) + 1)] + file.opens
    prefix: dict[str, str] = {}
    postfix: dict[str, str] = {}
    for scope in ["", *scopes, f"local:{file.path}"]:
        prefix.update(table.get(scope, {}))
        postfix.update(table.get(f"postfix:{scope}", {}))
    return prefix, postfix


def name_instances(
    files: list[SourceFile], more_names: Iterable[str] = (), only: set[str] | None = None
) -> int:
    """Rename every generated instance name in `files` by the full rule; how many changed.
    `more_names`: the library's declarations no file writes out (`@[to_additive]` twins);
    `only`: the paths of the files whose instances are renamed (the tables are still read from
    every file; all by default)."""
    classes = library_classes(files)
    every = {d.name for f in files for d in f.declarations if d.name and not d.generated}
    every |= set(more_names)
    notation = prefix_notation(files, every)
    last_parts = {n.rsplit(".", 1)[-1] for n in every}
    changed = 0
    for f in files:
        if only is not None and f.path not in only:
            continue
        taken: dict[str, int] = {}
        for d in f.declarations:
            if not (d.generated and d.name and d.kind == "instance"):
                continue
            namespace = d.name.split(".")[:-1]
            prefix, postfix = active_notation(notation, namespace, f)
            base, used, unknown = instance_name(d.statement, namespace, classes, prefix, postfix)
            ours = any(
                _resolve(u, namespace, every) or u.rsplit(".", 1)[-1] in last_parts for u in used
            ) or any(".".join(namespace[:k]) in every for k in range(1, len(namespace) + 1))
            # the suffix only where every constant is known to be foreign (none recognised:
            # no suffix, the safer guess)
            name = base if ours or unknown or not used else base + module_suffix(f.module)
            taken[name] = taken.get(name, 0) + 1
            if taken[name] > 1:
                name = f"{name}_{taken[name] - 1}"
            full = ".".join([*namespace, name])
            changed += full != d.name
            d.name = full
    return changed
