"""Racing decisions on one item leave exactly one result (SQLite and PostgreSQL).

Every racer passes its checks first; a barrier in front of the decision's one conditional
write (`math2.web.review._claim`) then lets them all reach it at once, so the write itself is
what must pick the winner. Two and eight racers, on agent text (confirm, edit, reject mixed),
bindings and definitions, and over HTTP: the loser gets 409 with its text and reason kept."""

from __future__ import annotations

import re
import threading

import pytest
from sqlalchemy import func, select

from math2.roles.align.bindings import DefinitionDecided, confirm_definition
from math2.store import AgentText, Binding, Node, Review, TextRecord
from math2.web import create_app
from math2.web import review as review_module
from math2.web.review import AlreadyDecided, Decision, decide_agent_text, decide_binding
from tests.roles.align.fixture import ai_library
from tests.web.conftest import PASSWORD, client_from, serving


@pytest.fixture
def gate(monkeypatch):
    """`gate(n)`: the next n decisions wait for each other in front of their write."""

    def arm(n: int) -> None:
        barrier = threading.Barrier(n, timeout=60)
        real = review_module._claim

        def claim(*args, **kw):
            barrier.wait()
            return real(*args, **kw)

        monkeypatch.setattr(review_module, "_claim", claim)

    return arm


def _race(n: int, decide) -> list[tuple[str, object]]:
    """Run decide(i) in n threads at once: ('won', value) or ('lost', message) each."""
    out: list[tuple[str, object]] = [("none", None)] * n

    def go(i: int) -> None:
        try:
            out[i] = ("won", decide(i))
        except (AlreadyDecided, DefinitionDecided) as exc:
            out[i] = ("lost", str(exc))
        except Exception as exc:  # any other outcome fails the test below
            out[i] = ("error", repr(exc))

    threads = [threading.Thread(target=go, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return out


def _reviews(s, table: str, target: int) -> list[Review]:
    return list(
        s.scalars(select(Review).where(Review.target_table == table, Review.target_id == target))
    )


DECISIONS = [
    (Decision.REJECT, None),
    (Decision.CONFIRM, None),
    (Decision.EDIT, "Edited by racer {i}: $a^2 + b^2 = c^2$."),
]


@pytest.mark.parametrize("n", [2, 8])
def test_racing_decisions_on_agent_text_leave_one(any_web_store, gate, n) -> None:
    store, seeded, _ = any_web_store
    gate(n)
    target = seeded.agent_text_id

    def decide(i: int) -> int:
        decision, body = DECISIONS[i % 3]
        with store.session() as s:
            r = decide_agent_text(
                s, target, decision, f"racer{i}", f"reason {i}", body and body.format(i=i)
            )
            return r.id

    results = _race(n, decide)
    assert sorted(k for k, _ in results) == ["lost"] * (n - 1) + ["won"], results
    winner = next(i for i, (k, _) in enumerate(results) if k == "won")
    assert all("already decided" in str(m) for k, m in results if k == "lost")
    decision, body = DECISIONS[winner % 3]
    with store.session() as s:
        reviews = _reviews(s, "agent_texts", target)
        assert [r.reviewer for r in reviews] == [f"racer{winner}"]
        agent = s.get(AgentText, target)
        assert agent.review_id == reviews[0].id
        assert (
            agent.status
            == {"reject": "rejected", "confirm": "confirmed", "edit": "edited"}[decision.value]
        )
        texts = list(s.scalars(select(TextRecord).where(TextRecord.node_id == seeded.node_id)))
        level = s.get(Node, seeded.node_id).level
    if decision is Decision.REJECT:
        assert texts == [] and level == "W0"
    else:
        assert len(texts) == 1 and f"racer{winner}" in texts[0].attribution
        assert texts[0].body == (body.format(i=winner) if body else agent.body)
        assert level == "W3"


@pytest.mark.parametrize("n", [2, 8])
def test_racing_decisions_on_a_binding_leave_one(any_web_store, gate, n) -> None:
    store, seeded, _ = any_web_store
    gate(n)
    target = seeded.binding_id

    def decide(i: int) -> int:
        decision = Decision.CONFIRM if i % 2 else Decision.REJECT
        with store.session() as s:
            return decide_binding(s, target, decision, f"racer{i}", f"reason {i}").id

    results = _race(n, decide)
    assert sorted(k for k, _ in results) == ["lost"] * (n - 1) + ["won"], results
    winner = next(i for i, (k, _) in enumerate(results) if k == "won")
    with store.session() as s:
        reviews = _reviews(s, "bindings", target)
        assert [r.reviewer for r in reviews] == [f"racer{winner}"]
        b = s.get(Binding, target)
        assert b.status == ("confirmed" if winner % 2 else "rejected")
        assert b.review_id == reviews[0].id
        assert s.get(Node, seeded.xss_node_id).level == ("W3" if winner % 2 else "W1")


@pytest.mark.parametrize("n", [2, 8])
def test_racing_confirmations_of_a_definition_leave_one(any_web_store, n) -> None:
    store, _, _ = any_web_store
    ids = ai_library(store)
    barrier = threading.Barrier(n, timeout=60)

    def decide(i: int) -> int:
        barrier.wait()
        with store.session() as s:
            return confirm_definition(s, ids["foo"], f"racer{i}").id

    results = _race(n, decide)
    assert sorted(k for k, _ in results) == ["lost"] * (n - 1) + ["won"], results
    with store.session() as s:
        assert len(_reviews(s, "mentions", ids["foo"])) == 1


def test_racing_grades_of_one_grader_leave_one_row(any_web_store) -> None:
    from math2.store import AuditGrade
    from math2.web import grade_sample

    store, seeded, _ = any_web_store
    barrier = threading.Barrier(8, timeout=60)

    def grade(i: int) -> str:
        barrier.wait()
        with store.session() as s:
            g = grade_sample(s, seeded.audit, seeded.sample_ids[0], "alice", "major", f"r{i}")
            return g.reason

    results = _race(8, grade)
    assert {k for k, _ in results} == {"won"}, results
    with store.session() as s:
        rows = s.scalars(select(AuditGrade).where(AuditGrade.sample_id == seeded.sample_ids[0]))
        assert [r.reason in {f"r{i}" for i in range(8)} for r in rows] == [True]


def _signed_in(base: str, name: str):
    c = client_from(base, "127.0.0.1", follow_redirects=False)
    token = re.search(r'name="csrf_token" value="([^"]+)"', c.get("/login").text)[1]
    form = {"csrf_token": token, "username": name, "password": PASSWORD}
    assert c.post("/login", data=form).status_code == 303
    token = re.search(r'name="csrf_token" value="([^"]+)"', c.get("/review").text)[1]
    return c, token


@pytest.mark.parametrize("n", [2, 8])
def test_over_http_the_loser_gets_409_with_its_text_kept(any_web_store, gate, n) -> None:
    from math2.web import add_reviewer

    store, seeded, index_dir = any_web_store
    for i in range(1, n):
        add_reviewer(store, f"racer{i}", PASSWORD)
    target = seeded.agent_text_id
    with serving(create_app(store, index_dir, secret="s")) as base:
        clients = [_signed_in(base, "alice" if i == 0 else f"racer{i}") for i in range(n)]
        gate(n)
        texts = [f"Racer {i} rewrote it: $c^2 = a^2 + b^2$." for i in range(n)]

        def post(i: int):
            c, token = clients[i]
            decision = ("reject", "confirm", "edit")[i % 3]
            form = {"csrf_token": token, "decision": decision, "reason": f"because {i}"}
            if decision == "edit":
                form["body"] = texts[i]
            r = c.post(f"/review/agent-text/{target}", data=form)
            if r.status_code != 303:
                raise AlreadyDecided(f"{r.status_code}\n{r.text}")
            return r.headers["location"]

        results = _race(n, post)
        for c, _ in clients:
            c.close()
    assert sorted(k for k, _ in results) == ["lost"] * (n - 1) + ["won"], results
    for i, (kind, message) in enumerate(results):
        if kind == "won":
            assert message == "/review"
            continue
        status, html = str(message).split("\n", 1)
        assert status == "409"
        item = html.split(f'id="agent-text-{target}"', 1)[1].split("</form>", 1)[0]
        assert f'value="because {i}"' in item  # the reason is kept
        assert f'id="decided-{target}"' in item and "already decided" in html
        if i % 3 == 2:  # an edit: the text is kept in the box
            assert f"Racer {i} rewrote it: $c^2 = a^2 + b^2$.</textarea>" in item
    with store.session() as s:
        assert len(_reviews(s, "agent_texts", target)) == 1
        count = select(func.count()).select_from(TextRecord)
        assert s.scalar(count.where(TextRecord.node_id == seeded.node_id)) <= 1
