"""The fake REPL as a node of a test cluster runs it: with the wording its node's environment
names (`MATH2_TEST_NODE_WORDING`, default `new`), so a node started with another one runs
"another Lean" (the fake REPL's version names its wording)."""

from __future__ import annotations

import os
import sys

from math2.lean.testing.fake_repl import main

if __name__ == "__main__":
    main([*sys.argv[1:], "--wording", os.environ.get("MATH2_TEST_NODE_WORDING", "new")])
