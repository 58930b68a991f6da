"""The corpus browser, the review queue and audit grading: `math2 serve`.

Browsing is public; reviewing and grading need a signed-in reviewer. See docs/web.md.
"""

from math2.web.accounts import AccountError, add_reviewer, authenticate
from math2.web.app import create_app
from math2.web.audit import StratumReport, grade_sample, report
from math2.web.review import Decision, ReviewError, decide_agent_text, decide_binding, level_for

__all__ = [
    "AccountError",
    "Decision",
    "ReviewError",
    "StratumReport",
    "add_reviewer",
    "authenticate",
    "create_app",
    "decide_agent_text",
    "decide_binding",
    "grade_sample",
    "level_for",
    "report",
]
