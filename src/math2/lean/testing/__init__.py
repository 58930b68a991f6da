"""Protocol-faithful test doubles: a fake Lean REPL executable and a fake Kimina server."""
