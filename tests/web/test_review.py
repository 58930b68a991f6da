"""The review and grading rules, accounts and rendering, without a browser."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from math2.store import AgentText, Binding, Node, Review, Reviewer, TextRecord
from math2.web import (
    AccountError,
    Decision,
    ReviewError,
    add_reviewer,
    authenticate,
    decide_agent_text,
    decide_binding,
    grade_sample,
    level_for,
    report,
)
from math2.web.render import crosswalk_url, lean_html, math_html
from tests.web.conftest import PASSWORD


def test_confirming_agent_text_writes_node_text_and_raises_the_level(any_web_store) -> None:
    store, seeded, _ = any_web_store
    with store.session() as s:
        assert s.get(Node, seeded.node_id).level == "W0"
        review = decide_agent_text(
            s, seeded.agent_text_id, Decision.CONFIRM, "alice", "faithful to the Lean"
        )
    with store.session() as s:
        text = s.scalar(select(TextRecord).where(TextRecord.node_id == seeded.node_id))
        agent = s.get(AgentText, seeded.agent_text_id)
        assert text is not None and text.author_kind == "agent"
        assert text.model_id == agent.model_id and text.prompt_hash == agent.template_hash
        assert "alice" in text.attribution and text.role == "statement"
        assert agent.status == "confirmed" and agent.review_id == review.id
        row = s.get(Review, review.id)
        assert (row.reviewer, row.verdict, row.note) == (
            "alice",
            "confirmed",
            "faithful to the Lean",
        )
        # Statement text + a confirmed binding + a person's confirmation, nothing pending: W3.
        assert s.get(Node, seeded.node_id).level == "W3"


def test_rejecting_writes_no_text_and_keeps_the_level(any_web_store) -> None:
    store, seeded, _ = any_web_store
    with store.session() as s:
        decide_agent_text(s, seeded.agent_text_id, Decision.REJECT, "alice", "wrong direction")
    with store.session() as s:
        assert s.scalar(select(TextRecord).where(TextRecord.node_id == seeded.node_id)) is None
        assert s.get(AgentText, seeded.agent_text_id).status == "rejected"
        assert s.get(Node, seeded.node_id).level == "W0"


def test_edit_stores_the_edited_body(any_web_store) -> None:
    store, seeded, _ = any_web_store
    with store.session() as s:
        decide_agent_text(
            s, seeded.agent_text_id, Decision.EDIT, "alice", "clearer", "Pythagoras: $a^2+b^2=c^2$."
        )
    with store.session() as s:
        text = s.scalar(select(TextRecord).where(TextRecord.node_id == seeded.node_id))
        assert text.body == "Pythagoras: $a^2+b^2=c^2$." and text.author == "alice"
        assert s.get(AgentText, seeded.agent_text_id).status == "edited"


@pytest.mark.parametrize(
    ("decision", "reason", "body", "message"),
    [
        (Decision.CONFIRM, "  ", None, "reason"),
        (Decision.EDIT, "why", "", "new text"),
    ],
)
def test_bad_decisions_are_refused(any_web_store, decision, reason, body, message) -> None:
    store, seeded, _ = any_web_store
    with store.session() as s, pytest.raises(ReviewError, match=message):
        decide_agent_text(s, seeded.agent_text_id, decision, "alice", reason, body)


def test_a_decision_is_made_once(any_web_store) -> None:
    store, seeded, _ = any_web_store
    with store.session() as s:
        decide_agent_text(s, seeded.agent_text_id, Decision.CONFIRM, "alice", "ok")
    with store.session() as s, pytest.raises(ReviewError, match="already decided"):
        decide_agent_text(s, seeded.agent_text_id, Decision.REJECT, "bob", "no")


def test_binding_review_and_level_rule(any_web_store) -> None:
    store, seeded, _ = any_web_store
    with store.session() as s:
        assert level_for(s, seeded.xss_node_id) == "W1"  # person text, no confirmed Lean side
        decide_binding(s, seeded.binding_id, Decision.CONFIRM, "alice", "same statement")
    with store.session() as s:
        assert s.get(Binding, seeded.binding_id).status == "confirmed"
        assert s.get(Node, seeded.xss_node_id).level == "W3"
        with pytest.raises(ReviewError, match="cannot be edited"):
            decide_binding(s, seeded.binding_id, Decision.EDIT, "alice", "x")


def test_audit_grades_change_the_report(any_web_store) -> None:
    store, seeded, _ = any_web_store
    with store.session() as s:
        before = {r.stratum: r for r in report(s, seeded.audit)}
        assert before["algebra"].graded == 0 and before["algebra"].correct_rate is None
        grade_sample(s, seeded.audit, seeded.sample_ids[0], "alice", "major", "wrong type")
        with pytest.raises(ReviewError, match="needs a reason"):
            grade_sample(s, seeded.audit, seeded.sample_ids[1], "alice", "minor", "")
        with pytest.raises(ReviewError, match="correct, minor or major"):
            grade_sample(s, seeded.audit, seeded.sample_ids[1], "alice", "fine", "")
        with pytest.raises(ReviewError, match="has no sample"):
            grade_sample(s, "other", seeded.sample_ids[1], "alice", "correct", "")
    with store.session() as s:
        grade_sample(s, seeded.audit, seeded.sample_ids[0], "alice", "correct", "")  # regrade
        grade_sample(s, seeded.audit, seeded.sample_ids[0], "bob", "minor", "one hypothesis")
    with store.session() as s:
        alg = {r.stratum: r for r in report(s, seeded.audit)}["algebra"]
        assert (alg.graded, alg.correct, alg.minor, alg.major) == (1, 1, 1, 0)
        assert alg.correct_rate == 0.5


def test_accounts_store_only_a_hash(any_web_store) -> None:
    store, _, _ = any_web_store
    with store.session() as s:
        row = s.scalar(select(Reviewer).where(Reviewer.username == "alice"))
        assert PASSWORD not in row.password_hash and row.password_hash.startswith("$argon2")
    assert authenticate(store, "alice", PASSWORD) == "alice"
    assert authenticate(store, "alice", "wrong password") is None
    assert authenticate(store, "nobody", PASSWORD) is None
    with pytest.raises(AccountError, match="at least"):
        add_reviewer(store, "bob", "short")
    with store.session() as s:
        s.scalar(select(Reviewer).where(Reviewer.username == "alice")).active = False
    assert authenticate(store, "alice", PASSWORD) is None


def test_rendering_escapes_everything() -> None:
    html = str(math_html('<script>x</script> $\\href{javascript:alert(1)}{a}$ "q"'))
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert 'data-tex="\\href{javascript:alert(1)}{a}"' in html
    assert "<script" not in str(lean_html("theorem x : '<script>' = '<script>' := rfl"))
    assert crosswalk_url("metamath", "pythag") == "https://us.metamath.org/mpeuni/pythag.html"
    assert crosswalk_url("lean4", "a b/../c").startswith("https://leanprover-community.github.io/")
    assert "/" not in crosswalk_url("metamath", "../x").split("mpeuni/")[1][:-5]
    assert crosswalk_url("unknown", "x") is None


def test_pass_round_from_results_else_from_attempts(any_web_store) -> None:
    from math2.store import Attempt, Run, RunItem
    from math2.web.run_queries import run_view

    store, seeded, _ = any_web_store
    with store.session() as s:
        view = run_view(s, seeded.run_id)
        assert view["rounds"] == [("1", 1), ("2", 1), ("3", 1), ("never", 1), ("not yet", 1)]
        run = Run(job="eval", key="k", spec_hash="e", status="done")
        s.add(run)
        s.flush()
        for item, verdicts in {"x": ["fail", "pass"], "y": ["fail", "fail"]}.items():
            s.add(RunItem(run_id=run.id, item=item, status="done"))
            for r, v in enumerate(verdicts):
                s.add(Attempt(run_id=run.id, item=item, stage="check", round=r, verdict=v))
        s.flush()
        assert run_view(s, run.id)["rounds"] == [("1", 1), ("never", 1)]


def test_run_items_come_a_page_at_a_time(any_web_store) -> None:
    from math2.store import Attempt, Run, RunItem
    from math2.web.run_queries import run_view

    store, _, _ = any_web_store
    with store.session() as s:
        run = Run(job="formalize", key="paged", spec_hash="p", status="done")
        s.add(run)
        s.flush()
        for i in range(7):
            # the role's own null beats a passing attempt: it never passed by the role's rule
            result = {"passed_round": None} if i == 0 else ({"passed_round": 2} if i == 1 else {})
            s.add(RunItem(run_id=run.id, item=f"it{i}", status="done", result=result))
            s.add(Attempt(run_id=run.id, item=f"it{i}", stage="check", round=1, verdict="pass"))
        s.flush()
        first = run_view(s, run.id, page=3)
        assert [x["it"].item for x in first["items"]] == ["it0", "it1", "it2"]
        assert [x["pass_round"] for x in first["items"]] == [None, 2, 1]
        assert first["rounds"] == [("1", 5), ("2", 1), ("never", 1)] and first["total"] == 7
        second = run_view(s, run.id, after=first["next_after"], page=3)
        assert [x["it"].item for x in second["items"]] == ["it3", "it4", "it5"]
        last = run_view(s, run.id, after=second["next_after"], page=3)
        assert [x["it"].item for x in last["items"]] == ["it6"] and last["next_after"] is None


def test_docstrings_are_markdown_without_raw_html() -> None:
    from math2.web.render import markdown_html

    html = str(
        markdown_html(
            "The **sum** of `Finset.sum` is $\\sum_{i \\in s} f_i$; *see* [docs](https://x.org) "
            "and [bad](javascript:alert(1)).\n\n<script>alert(1)</script> <b onclick=x>b</b>\n\n"
            "$$a_1 * b_2 < c$$\n\n- one $x_1$ and $y_2$\n"
        )
    )
    assert "<strong>sum</strong>" in html and "<code>Finset.sum</code>" in html
    assert "<em>see</em>" in html and '<a href="https://x.org">docs</a>' in html
    assert "javascript:" not in html.replace("[bad](javascript:alert(1))", "")
    assert "<script>" not in html and "&lt;script&gt;" in html and "<b " not in html
    # TeX is left to KaTeX whole: Markdown does not read its _ and * as emphasis.
    assert 'data-tex="\\sum_{i \\in s} f_i"' in html
    assert '<span class="math display" data-tex="a_1 * b_2 &lt; c">' in html
    assert '<li>one <span class="math" data-tex="x_1">' in html
    assert str(markdown_html(None)) == ""
