"""Test doubles for model endpoints: a fake OpenAI-compatible server over real HTTP, in process
or as a child process that outlives the client under test."""

from math2.llm.testing.fake_server import FakeServer
from math2.llm.testing.request_log import as_stored, read_log, received, repeats, request_hash
from math2.llm.testing.script import Rule, Script, load_script
from math2.llm.testing.spawn import FakeServerProcess, spawn_fake_server

__all__ = [
    "FakeServer",
    "FakeServerProcess",
    "Rule",
    "Script",
    "as_stored",
    "load_script",
    "read_log",
    "received",
    "repeats",
    "request_hash",
    "spawn_fake_server",
]
