"""Mine a labelled (informal, formal) dev set from the public human corrections in a Lean repo's
git history (built for google-deepmind/formal-conjectures, Apache-2.0).

A commit whose subject says it fixes a statement (`fix…`, `misformal…`, `wrong`, `incorrect`)
changes some theorem's statement: the version before the commit is a formalization that people
found unfaithful, the version after it the one they accepted. The informal side of both is the
docstring *after* the fix (the text the corrected statement was reviewed against). Theorems the
same commit left unchanged in the touched file are faithful pairs too (reviewed at the time).

    python benchmarks/mine_checks_dev.py REPO_GIT_DIR OUT/checks-dev/pairs.jsonl

A statement is the whole text from its keyword to the `:=` that begins its proof (a `let … :=`
or `have … :=` inside the statement does not end it). A before/after pair whose statements are
equal up to whitespace is a reformatting, not a fix, and gives no pair.

The output is not in the repository: `math2 data fetch checks-dev` fetches formal-conjectures'
history up to the commit `data/external.yaml` pins and runs this miner into math2's data cache,
where the file's SHA-256 must be the one the manifest lists (tests/data/test_miner.py runs it
on a repository written for the tests).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from math2.lean.brackets import proof_start  # the statement's end, as the checks read it
from math2.lean.commands import split_commands
from math2.lean.lexer import Tok, tokenize

SUBJECT = re.compile(r"^(fix|\[codex\] fix)|misformali[sz]|\bwrong\b|\bincorrect\b", re.I)
EXCLUDE = re.compile(
    r"chore|deps|bump|docs?:|docstring|typo in|delimiters|answer\(sorry\)|type-checking|"
    r"\bci\b|lint|build|workflow|script|README|category|import|mark|status|record|solved|"
    r"answer|proof|link|rename|deprecat|name",
    re.I,
)
THEOREMS = {"theorem", "lemma"}


def git(repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", repo, *args], capture_output=True, text=True, check=False
    ).stdout


def declarations(code: str) -> dict[str, tuple[str, str, str]]:
    """name -> (docstring, statement up to and excluding `:=`, the text before it in the file)."""
    try:
        toks = tokenize(code)
    except ValueError:
        return {}
    out = {}
    for c in split_commands(toks):
        if c.keyword not in THEOREMS or c.doc is None:
            continue
        body = c.body
        if not body or body[0].kind is not Tok.IDENT:
            continue
        name = body[0].text
        start = c.tokens[c.keyword_index].offset
        # the statement ends at the `:=` of the proof (not at one of a `let`/`have` in it)
        proof = proof_start(body)
        if proof is None:
            continue
        end = body[proof].offset
        doc = c.doc.text.strip()
        doc = doc[3:-2].strip() if doc.startswith("/--") else doc
        stmt = code[start:end].rstrip() + " := by\n  sorry"
        out[name] = (doc, stmt, "")
    return out


ERROR_TYPES = [
    ("nat_arith", r"nat(ural)? (division|subtraction)|`Nat` division|truncat|integer-valued"),
    (
        "missing_precondition",
        r"missing|assum|require|positiv|non-?zero|non-?empty|exclude|"
        r"rule out|avoid|restrict|corner case|degenerate|\badd `|`[^`]*[<≤≠][^`]*`|cannot be",
    ),
    ("quantifier_order", r"quantif|scope|bracket|∃|exists|for all|∀"),
    ("misaligned_object", r"typing|type|definition|use |instead|not |subset|should be"),
    ("changed_condition", r"sign|exponent|typo|`le`|`lt`|index|ratio|density|sufficiently"),
]


def same_up_to_whitespace(a: str, b: str) -> bool:
    """Two statements that differ only in spacing and line breaks."""
    return a.split() == b.split()


def error_types(subject: str) -> list[str]:
    """The error types the fix's subject names (empty when it names none)."""
    return [t for t, rx in ERROR_TYPES if re.search(rx, subject, re.I)][:1]


def main(repo: str, out_path: str) -> None:
    log = git(repo, "log", "--format=%H%x09%s", "--no-merges")
    rows, seen = [], set()
    for line in log.splitlines():
        sha, _, subject = line.partition("\t")
        if not SUBJECT.search(subject) or EXCLUDE.search(subject):
            continue
        files = [
            f
            for f in git(repo, "diff", "--name-only", f"{sha}^", sha).split()
            if f.endswith(".lean")
            and f.startswith("FormalConjectures/")
            and "ForMathlib" not in f
            and "Util" not in f
        ]
        if not 1 <= len(files) <= 3:  # a sweeping refactor is not a statement fix
            continue
        for f in files:
            before = declarations(git(repo, "show", f"{sha}^:{f}"))
            after = declarations(git(repo, "show", f"{sha}:{f}"))
            changed = [
                n
                for n in after
                if n in before and not same_up_to_whitespace(before[n][1], after[n][1])
            ]
            if not changed or len(changed) > 4:
                continue
            for n in changed:
                doc, good, _ = after[n]
                bad = before[n][1]
                if len(doc.split()) < 6 or "sorry" not in good:
                    continue
                for formal, faithful in ((bad, False), (good, True)):
                    key = (doc, formal)
                    if key in seen:
                        continue
                    seen.add(key)
                    rows.append(
                        {
                            "id": f"fc/{sha[:9]}/{n}/{'after' if faithful else 'before'}",
                            "informal": doc,
                            "formal": formal,
                            "faithful": faithful,
                            "error_types": [] if faithful else error_types(subject),
                            "source": f"formal-conjectures {sha} {f}",
                            "commit_subject": subject,
                        }
                    )
            # unchanged theorems of the same file: faithful as reviewed
            for n in [n for n in after if n in before and before[n] == after[n]][:2]:
                doc, stmt, _ = after[n]
                if len(doc.split()) < 6 or (doc, stmt) in seen:
                    continue
                seen.add((doc, stmt))
                rows.append(
                    {
                        "id": f"fc/{sha[:9]}/{n}/unchanged",
                        "informal": doc,
                        "formal": stmt,
                        "faithful": True,
                        "error_types": [],
                        "source": f"formal-conjectures {sha} {f}",
                        "commit_subject": subject,
                    }
                )
    Path(out_path).parent.mkdir(parents=True, exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    bad = sum(1 for r in rows if not r["faithful"])
    print(f"{len(rows)} pairs: {bad} unfaithful, {len(rows) - bad} faithful", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
