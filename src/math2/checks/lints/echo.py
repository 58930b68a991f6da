"""`lint.formal_echo`: an informal text that is Lean, not prose (a code block, or the
declaration itself copied: `def Tiny …`) — what a weak informalizer writes when it gives up."""

from __future__ import annotations

from math2.checks.base import register
from math2.checks.lints.common import Lint
from math2.checks.statement import Statement


@register("lint.formal_echo")
class FormalEcho(Lint):
    declared_status = "fail"  # before it was measured it failed pairs
    statements_only = False

    def judge(self, st: Statement, informal: str) -> list[str]:
        out = []
        if "```" in informal:
            out.append("the text holds a code block")
        flat = " ".join(informal.split())
        short = st.name.rsplit(".", 1)[-1]
        if st.name and any(f"{st.kind} {n}" in flat for n in {st.name, short}):
            out.append(f"the text copies the declaration (`{st.kind} {short}`)")
        return out
