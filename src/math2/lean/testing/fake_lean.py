"""A fake `lean --json FILE`: one JSON message per line on stdout, as Lean prints them.

Run as `python -m math2.lean.testing.fake_lean [--json] FILE`; the messages come from the same
scripted behaviours as the fake REPL (directives `-- fake: …` in the file).
"""

from __future__ import annotations

import argparse
import json
import sys

from math2.lean.testing.fake_repl import Fake


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="fake_lean")
    p.add_argument("--json", action="store_true")
    p.add_argument("--wording", default="new")
    p.add_argument("--version", action="store_true", help="print the version, like lean does")
    p.add_argument("file", nargs="?")
    args = p.parse_args(argv)
    ns = argparse.Namespace(header_delay=0.0, check_delay=0.0, wording=args.wording)
    if args.version or not args.file:
        ns.kind = "fake-lean"
        print(f"Lean (version {Fake(ns).version()}, a test double, not Lean)")
        return
    with open(args.file, encoding="utf-8") as fh:
        text = fh.read()
    out = Fake(ns).command({"cmd": text})
    has_error = False
    for m in out.get("messages", []):
        has_error |= m["severity"] == "error"
        print(json.dumps({**m, "fileName": args.file, "caption": "", "keepFullRange": False}))
    sys.exit(1 if has_error else 0)


if __name__ == "__main__":
    main()
