"""math2: a corpus of mathematics with informal and formal statements side by side."""

__version__ = "0.1.0"
