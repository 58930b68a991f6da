"""The `math2` script imports only the module of the command it runs (`math2.cli.COMMANDS`): the
table must name every command each module registers, and argv must find the right module."""

from __future__ import annotations

import pytest

import math2.cli as cli


def _registered() -> dict[str, str]:
    """Each top-level command and group of the full app → the module that registered it."""
    app = cli.app  # every module loaded
    found = {}
    for info in app.registered_commands:
        assert info.callback is not None
        name = info.name or info.callback.__name__.replace("_", "-")
        found[name] = info.callback.__module__.rsplit(".", 1)[-1]
    for group in app.registered_groups:
        sub = group.typer_instance
        assert sub is not None and group.name
        callbacks = [c.callback for c in sub.registered_commands if c.callback is not None]
        assert callbacks, group.name
        found[group.name] = callbacks[0].__module__.rsplit(".", 1)[-1]
    return found


def test_the_table_names_every_command_and_its_module() -> None:
    assert _registered() == cli.COMMANDS


@pytest.mark.parametrize(
    ("argv", "modules"),
    [
        (["search", "compact space"], {"search"}),
        (["-vv", "--db", "x.db", "index", "build"], {"search"}),
        (["--db=x.db", "runs", "list"], {"runs"}),
        (["--version"], set()),
        (["--help"], None),
        ([], None),
        (["no-such-command"], None),
        (["--no-such-option", "search"], None),
    ],
)
def test_argv_finds_the_module_of_its_command(argv, modules) -> None:
    assert cli.command_modules(argv) == modules
