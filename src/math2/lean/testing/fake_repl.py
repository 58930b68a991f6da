"""A fake Lean REPL: the real framing over stdin/stdout, scripted behaviours, no Lean.

Run it as `python -m math2.lean.testing.fake_repl [options]`. It reads requests (a JSON object
and a blank line) and answers like leanprover-community/repl: a pretty-printed JSON object and a
blank line. Behaviours are chosen by directives in a command's text (`-- fake: <directive>`):

    hang              never answer
    crash             print "Stack overflow detected. Aborting." and abort (SIGABRT)
    oom               allocate past RLIMIT_AS and die like Lean does, with nothing on stdout
    slow SECONDS      take that long
    alloc MEGABYTES   keep that much more memory (to test recycling)
    error KIND NAME   answer with an error of KIND (unknown_identifier, unknown_constant,
                      type_mismatch, synth_instance, unsolved_goals, parse_error, heartbeat,
                      rewrite_failed, motive, function_expected)
                      in the wording of --wording (old: Lean ≤ 4.9, new: Lean ≥ 4.19)
    garbage           answer with something that is not JSON
    axiom NAME        the environment gains axiom NAME (seen by `#print axioms`)
    uses DECL AXIOM   only declaration DECL depends on AXIOM (seen by `#print axioms DECL`)

`--library FILE` (JSON: name → {"type": …, "axioms": […]}) stands for the pinned build's library:
`#print axioms NAME` and `#check @NAME` answer from it, and a declaration whose type is
`type_of% @NAME` has that type and NAME's axioms (an unknown NAME is an unknown identifier).
`#check @X` of a declaration of the command answers its signature as written. math2's
elaborated-type commands (`math2.lean.elaborated`) are answered by `fake_elab`: the signature
with explicitly written instance arguments shown as Lean shows them, and its instance table.
Under `set_option autoImplicit false` a name only auto-binding would bind is an unknown
identifier. Every sorry word (`rules.SORRY_WORDS`: `stop` too) marks a declaration as Lean does.

Without directives: `import` lines load a header (taking --header-delay); declarations are
tracked one by one (`fake_env`: every declaration kind, full names under namespaces): one whose
own text holds `sorry` gets the `declaration uses sorry` warning at its name and a sorry with a
proof state, and depends on `sorryAx`, as does one that mentions it — not its neighbours in the
same command; `#print axioms X` and `#check @X` read X as Lean prints names (`foo'`,
`«two plus two»`) and answer with X printed so. Each command takes --check-delay.
With `--replay NAME.expected.out` it answers with the recorded frames instead, in order.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from math2.lean.names import NAME, canonical
from math2.lean.rules import SORRY_WORDS
from math2.lean.testing.fake_elab import explicit_type, unbound_names, used_instances
from math2.lean.testing.fake_env import (
    STANDARD,
    WORDING,
    declarations,
    resolve,
    scope_at,
    settle,
)

_DIRECTIVE = re.compile(r"--\s*fake:\s*(\w+)(?:[ \t]+([^\n]*))?")
_PRINT_AXIOMS = re.compile(r"#print\s+axioms\s+(" + NAME + ")")
_CHECK = re.compile(r"^#check\s+@(" + NAME + r")\s*$", re.M)
_TYPE_OF = re.compile(r"type_of%\s*@([^\s()⟨⟩]+)")
# math2's elaborated-type commands (math2.lean.elaborated): a `#check @X` under `pp.all`, and
# the `#eval` that lists the instance constants of X's type.
_ELAB_CHECK = re.compile(
    r"^set_option pp\.all true in (?:set_option \S+ \S+ in )*#check @(" + NAME + r")\s*$", re.M
)
_ELAB_EVAL = re.compile(r"^#eval show _root_\.Lean\.CoreM .*?find\? `(" + NAME + r")\)", re.M)

JSON = dict[str, Any]


@dataclass
class Env:
    """An environment: each declaration's axioms, and the axioms every declaration gains."""

    decls: dict[str, set[str]] = field(default_factory=dict)
    axioms: set[str] = field(default_factory=set)


class Fake:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.envs: dict[int, Env] = {}
        self.proof_states: set[int] = set()
        self.next_ps = 0
        self.hoard: list[bytearray] = []
        library = getattr(args, "library", None)
        self.library: dict[str, JSON] = {}
        if library:
            with open(library, encoding="utf-8") as fh:
                self.library = json.load(fh)

    def new_env(
        self,
        base: Env | None,
        decls: dict[str, set[str]] | None = None,
        axioms: set[str] | None = None,
    ) -> int:
        env = Env(dict(base.decls) if base else {}, set(base.axioms) if base else set())
        env.decls.update(decls or {})
        env.axioms |= axioms or set()
        eid = len(self.envs)
        self.envs[eid] = env
        return eid

    def version(self) -> str:
        """Its answer to `#eval Lean.versionString`: its kind and a digest of its scripting."""
        from math2.lean.identity import fake_version

        kind = getattr(self.args, "kind", "fake-repl")
        behaviour = {
            "wording": self.args.wording,
            "rule": getattr(self.args, "rule", []),
            "replay": getattr(self.args, "replay", None),
            "library": self.library,
        }
        return fake_version(kind, behaviour)

    def command(self, req: JSON) -> JSON:
        cmd = req["cmd"]
        if cmd.strip() == "#eval Lean.versionString":
            return {"messages": [_msg("info", 1, 0, json.dumps(self.version()))], "env": 0}
        base = None
        if req.get("env") is not None:
            if req["env"] not in self.envs:
                return {"message": "Unknown environment."}
            base = self.envs[req["env"]]
        delay = self.args.check_delay
        if re.search(r"^\s*import\s", cmd, re.M):
            delay = self.args.header_delay
        messages: list[JSON] = []
        sorries: list[JSON] = []
        axioms: set[str] = set()
        per_decl: dict[str, set[str]] = {}
        # --rule 'REGEX=>DIRECTIVE': a directive for commands that match (math2 strips comments
        # before compiling, so a test of generated code cannot rely on `-- fake:` lines).
        extra = [d for pat, d in getattr(self.args, "rule", []) if re.search(pat, cmd)]
        found = [(m.group(1), (m.group(2) or "").strip()) for m in _DIRECTIVE.finditer(cmd)]
        for d in extra:
            what, _, arg = d.partition(" ")
            found.append((what, arg.strip()))
        for what, arg in found:
            if what == "hang":
                time.sleep(10**6)
            elif what == "crash":
                sys.stderr.write("Stack overflow detected. Aborting.\n")
                sys.stderr.flush()
                os.abort()
            elif what == "oom":
                self.oom()
            elif what == "slow":
                delay = float(arg)
            elif what == "alloc":
                block = bytearray(int(float(arg) * 2**20))
                for i in range(0, len(block), 4096):  # touch every page so RSS grows
                    block[i] = 1
                self.hoard.append(block)
            elif what == "garbage":
                return {"__garbage__": True}
            elif what == "axiom":
                axioms.add(arg)
            elif what == "uses":  # `uses DECL AXIOM`: only DECL depends on AXIOM
                decl, _, ax = arg.partition(" ")
                per_decl.setdefault(decl, set()).add(ax.strip())
            elif what == "error":
                kind, _, name = arg.partition(" ")
                text = WORDING[self.args.wording][kind].format(n=name or "x")
                messages.append(_msg("error", 1, 0, text))
        time.sleep(delay)
        known = {n: set(lib.get("axioms", [])) for n, lib in self.library.items()}
        known.update({n: set(a) for n, a in (base.decls if base else {}).items()})
        env_axioms = axioms | (set(base.axioms) if base else set())
        decls = declarations(cmd)
        signatures: dict[str, str] = {}
        for d in decls:
            sig = d.signature
            for ref in _TYPE_OF.findall(sig):
                if ref not in self.library:
                    text = WORDING[self.args.wording]["unknown_identifier"].format(n=ref)
                    messages.append(_msg("error", d.line, 0, text))
                    continue
                sig = sig.replace(f"type_of% @{ref}", self.library[ref].get("type", ""))
                per_decl.setdefault(d.name, set()).update(self.library[ref].get("axioms", []))
            signatures[d.name] = sig
            if d.own_sorry:
                messages.append(_msg("warning", d.line, d.column, "declaration uses `sorry`"))
                sorries.append(
                    {
                        "proofState": self.next_ps,
                        "pos": {"line": d.line, "column": 0},
                        "goal": "⊢ " + d.name,
                        "endPos": {"line": d.line, "column": 5},
                    }
                )
                self.proof_states.add(self.next_ps)
                self.next_ps += 1
        # `autoImplicit false` (math2's preamble): a name only auto-binding would bind is an
        # unknown identifier (not modelled under an `open`: the double cannot resolve it).
        if re.search(r"set_option autoImplicit false", cmd) and not re.search(
            r"^open\s", cmd, re.M
        ):
            for d in decls:
                if d.kind in ("theorem", "lemma", "def", "abbrev", "example"):
                    names = set(known) | {x.name for x in decls}
                    for n in unbound_names(cmd, d.signature, names):
                        text = WORDING[self.args.wording]["unknown_identifier"].format(n=n)
                        messages.append(_msg("error", d.line, d.column, text))
        settle(decls, known, env_axioms, per_decl)
        # a name math2 asks about is read where it stands, as Lean reads it: inside the
        # namespaces the block leaves open (`_root_.X` is X wherever it stands)
        constants: dict[str, object] = {**self.library, **known, **signatures}

        def written(m: re.Match[str]) -> str:
            at = resolve(m.group(1), scope_at(cmd, m.start(1)), constants)
            return at if at is not None else canonical(m.group(1))

        for m in _CHECK.finditer(cmd):
            name = written(m)
            line = cmd.count("\n", 0, m.start()) + 1
            typed = signatures.get(name, self.library.get(name, {}).get("type"))
            if typed is None:
                text = WORDING[self.args.wording]["unknown_constant"].format(n=name)
                messages.append(_msg("error", line, 0, text))
            else:
                messages.append(_msg("info", line, 0, f"@{name} : {typed}"))
        for m in _ELAB_CHECK.finditer(cmd):
            name = written(m)
            line = cmd.count("\n", 0, m.start()) + 1
            if name in signatures:
                text = f"@{name} : {explicit_type(signatures[name])}"
                messages.append(_msg("info", line, m.end(1) - m.start(), text))
            else:
                text = WORDING[self.args.wording]["unknown_constant"].format(n=name)
                messages.append(_msg("error", line, 0, text))
        for m in _ELAB_EVAL.finditer(cmd):
            name = canonical(m.group(1))
            line = cmd.count("\n", 0, m.start()) + 1
            typed = explicit_type(signatures[name]) if name in signatures else ""
            ours = {n for n, lib in self.library.items() if lib.get("instance")}
            ours |= {d.name for d in decls if d.kind == "instance"}
            listed = "".join(" " + n for n in used_instances(typed, ours))
            messages.append(_msg("info", line, 0, f"math2-instances {name}:{listed}"))
        for m in _PRINT_AXIOMS.finditer(cmd):
            name = written(m)
            line = cmd.count("\n", 0, m.start()) + 1
            if name not in known:
                text = WORDING[self.args.wording]["unknown_constant"].format(n=name)
                messages.append(_msg("error", line, 0, text))
                continue
            deps = known[name]
            used = [a for a in STANDARD if a in deps] + sorted(deps - set(STANDARD))
            text = (
                f"'{name}' depends on axioms: [{', '.join(used)}]"
                if used
                else f"'{name}' does not depend on any axioms"
            )
            messages.append(_msg("info", line, 0, text))
        out: JSON = {}
        if sorries:
            out["sorries"] = sorries
        if messages:
            out["messages"] = messages
        added = {d.name: d.axioms for d in decls}
        added.update({e: d.axioms for d in decls for e in d.extra_names})
        out["env"] = self.new_env(base, decls=added, axioms=axioms)
        return out

    def oom(self) -> None:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        try:
            if soft != resource.RLIM_INFINITY:
                self.hoard.append(bytearray(soft))  # cannot fit under the limit
        except MemoryError:
            pass
        sys.stderr.write("INTERNAL PANIC: out of memory\n")
        sys.stderr.flush()
        os._exit(1)

    def tactic(self, req: JSON) -> JSON:
        ps = req["proofState"]
        if ps not in self.proof_states:
            return {"message": "Unknown proof state."}
        time.sleep(self.args.check_delay)
        if set(re.findall(r"[\w!?']+", req["tactic"])) & SORRY_WORDS:  # `stop` too
            status, goals = "Incomplete: contains sorry", []
        elif req["tactic"].strip() in ("skip", "intro"):
            status, goals = "Incomplete: open goals remain", ["⊢ goal"]
        else:
            status, goals = "Completed", []
        new = self.next_ps
        self.next_ps += 1
        self.proof_states.add(new)
        return {"proofStatus": status, "proofState": new, "goals": goals}

    def handle(self, req: JSON) -> JSON:
        if "cmd" in req:
            return self.command(req)
        if "tactic" in req:
            return self.tactic(req)
        if "pickleTo" in req:
            if "env" in req and req["env"] not in self.envs:
                return {"message": "Unknown environment."}
            with open(req["pickleTo"], "w") as fh:
                json.dump({"env": req.get("env"), "proofState": req.get("proofState")}, fh)
            return {"env": req.get("env", 0)}
        if "unpickleEnvFrom" in req:
            return {"env": self.new_env(None)}
        return {"message": f"Could not parse as a valid JSON command: {json.dumps(req)}"}


def _msg(severity: str, line: int, col: int, data: str) -> JSON:
    return {
        "severity": severity,
        "pos": {"line": line, "column": col},
        "endPos": {"line": line, "column": col + 1},
        "data": data,
    }


def _frames(stream: Iterable[str]) -> Iterator[str]:
    buf: list[str] = []
    for line in stream:
        if line.strip():
            buf.append(line)
        elif buf:
            yield "".join(buf)
            buf = []
    if buf:
        yield "".join(buf)


def _write(obj_or_text: JSON | str) -> None:
    text = (
        obj_or_text
        if isinstance(obj_or_text, str)
        else json.dumps(obj_or_text, indent=1, ensure_ascii=False)
    )
    sys.stdout.write(text.rstrip("\n") + "\n\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="fake_repl")
    p.add_argument("--header-delay", type=float, default=0.0)
    p.add_argument("--check-delay", type=float, default=0.0)
    p.add_argument("--wording", choices=sorted(WORDING), default="new")
    p.add_argument("--replay", help="answer with the frames of this .expected.out file, in order")
    p.add_argument("--exit-after", type=int, default=0, help="exit after N answers (0: never)")
    p.add_argument("--log", help="append every request received to this file (one JSON a line)")
    p.add_argument("--library", help="JSON: the pinned build's declarations (type, axioms)")
    p.add_argument(
        "--rule",
        action="append",
        default=[],
        type=lambda v: tuple(v.split("=>", 1)),
        help="REGEX=>DIRECTIVE: apply DIRECTIVE to commands matching REGEX (repeatable)",
    )
    args = p.parse_args(argv)
    fake = Fake(args)
    recorded = None
    if args.replay:
        with open(args.replay, encoding="utf-8") as fh:
            recorded = list(_frames(fh))
    answered = 0
    for frame in _frames(sys.stdin):
        if args.log:
            with open(args.log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(json.loads(frame, strict=False)) + "\n")
        try:
            req = json.loads(frame, strict=False)
        except json.JSONDecodeError as exc:
            _write({"message": f"Could not parse JSON:\n{exc}"})
            continue
        if recorded is not None and req.get("cmd", "").strip() == "#eval Lean.versionString":
            _write(fake.handle(req))
            continue
        if recorded is not None:
            _write(
                recorded[answered] if answered < len(recorded) else {"message": "no more frames"}
            )
        else:
            out = fake.handle(req)
            _write("this is {not json" if out.get("__garbage__") else out)
        answered += 1
        if args.exit_after and answered >= args.exit_after:
            return


if __name__ == "__main__":
    main()
