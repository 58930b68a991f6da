"""What a reviewer reads on a declaration's and a node's page: the docstring rendered once (as
Markdown with maths), the Lean signature, a structure's fields."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from sqlalchemy import select

from math2.store import Mention, TextRecord
from math2.web import create_app

DOC = "Addition is **commutative**: $a + b = b + a$. <script>x()</script>"


def test_a_docstring_is_rendered_once_with_the_signature_and_fields(web_store) -> None:
    store, seeded, index_dir = web_store
    with store.session() as s:
        m = s.scalar(select(Mention).where(Mention.name == "Nat.add_comm"))
        m.docstring = DOC
        # as the Mathlib importer keeps it: the docstring is also a text of the declaration
        s.add(
            TextRecord(
                mention_id=m.id,
                source_id=m.source_id,
                role="docstring",
                body=DOC,
                zone="prose",
                licence="Apache-2.0",
                attribution="Mathlib",
                author_kind="person",
            )
        )
        point = Mention(
            source_id=m.source_id,
            pin_id=m.pin_id,
            name="Geo.Point",
            kind="structure",
            statement="structure Geo.Point (α : Type)",
            licence="Apache-2.0",
            intake_class="library",
            authored="human",
            node_id=seeded.xss_node_id,
        )
        fields = [
            Mention(
                source_id=m.source_id,
                pin_id=m.pin_id,
                name=f"Geo.Point.{f}",
                kind="field",
                statement=": α",
                licence="Apache-2.0",
                intake_class="library",
                authored="human",
            )
            for f in ("x", "y")
        ]
        typed = Mention(  # only the elaborated type recorded (lean_scout)
            source_id=m.source_id,
            pin_id=m.pin_id,
            name="Nat.zero_le'",
            kind="theorem",
            statement="∀ (n : ℕ), 0 ≤ n",
            licence="Apache-2.0",
            intake_class="library",
            authored="human",
        )
        s.add_all([point, *fields, typed])
        s.flush()
        ids = m.id, point.id, typed.id
    with TestClient(create_app(store, index_dir, secret="s")) as c:
        decl, node = c.get(f"/decl/{ids[0]}").text, c.get(f"/node/{seeded.xss_node_id}").text
        point_page = c.get(f"/decl/{ids[1]}").text
        typed_page = c.get(f"/decl/{ids[2]}").text
    for html in (decl, node):
        assert html.count("<strong>commutative</strong>") == 1  # rendered, once
        assert "**commutative**" not in html  # never raw
        assert html.count('data-tex="a + b = b + a"') == 1 and "<script>x()" not in html
    # the signature, highlighted, on both pages
    assert 'class="lean signature"' in decl and "add_comm" in decl.split("signature")[1][:2000]
    assert node.count('class="lean signature"') >= 2  # Nat.add_comm and Geo.Point
    # a structure's fields on its page and on its node's page
    for html in (point_page, node):
        assert html.count('<ul class="fields"') == 1, html[:200]
        fields_html = html.split('<ul class="fields"')[1].split("</ul>")[0]
        assert ">x<" in fields_html and ">y<" in fields_html
    # a type alone is shown as `kind name : type`
    assert "zero_le" in typed_page.split('class="lean signature"')[1].split("</div>")[0]


def _token(html: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', html)[1]


def test_confirming_a_definition_needs_a_reason_and_refuses_a_theorem(web_store) -> None:
    from math2.store import Review
    from tests.roles.align.fixture import ai_library
    from tests.web.conftest import PASSWORD

    store, _, index_dir = web_store
    ids = ai_library(store)
    with store.session() as s:
        human = s.scalar(select(Mention.id).where(Mention.name == "Nat.add_comm"))
    with TestClient(create_app(store, index_dir, secret="s")) as c:
        form = {"csrf_token": _token(c.get("/login").text), "username": "alice"}
        c.post("/login", data={**form, "password": PASSWORD})
        page = c.get(f"/review/binding/{ids['binding']}").text
        assert 'name="reason"' in page.split("/review/definition/")[1][:600]  # asked for
        token = _token(page)
        post = lambda mid, **kw: c.post(  # noqa: E731
            f"/review/definition/{mid}", data={"csrf_token": token, "next": "/review", **kw}
        )
        r = post(ids["thm"], reason="looks right")
        assert r.status_code == 409 and "is a theorem, not a definition" in r.text
        r = post(human, reason="looks right")  # a human-written Mathlib theorem
        assert r.status_code == 409 and "not a definition" in r.text
        r = post(ids["foo"], reason="  ")
        assert "a decision needs a reason" in r.text
        r = post(ids["foo"], reason="matches the paper's definition")
        assert r.status_code == 200 and "confirmed" in r.text
    with store.session() as s:
        notes = s.execute(
            select(Review.target_id, Review.note).where(Review.target_table == "mentions")
        ).all()
    assert notes == [(ids["foo"], "matches the paper's definition")]


def test_queue_counts_stop_at_the_cap(web_store, monkeypatch) -> None:
    from math2.store import AgentText
    from math2.web import queue
    from tests.web.conftest import PASSWORD

    store, seeded, index_dir = web_store
    with store.session() as s:
        first = s.get(AgentText, seeded.agent_text_id)
        for i in range(6):
            s.add(
                AgentText(
                    kind="description",
                    body=f"description {i}",
                    status="pending",
                    node_id=seeded.node_id,
                    model_id=first.model_id,
                    template_id="t",
                    template_hash="h" * 64,
                )
            )
        counted = queue.counts(s)
    assert counted["description"] == 6  # under the cap: exact
    monkeypatch.setattr(queue, "COUNT_CAP", 4)
    with store.session() as s:
        assert queue.counts(s)["description"] == 4  # stops at the cap
    with TestClient(create_app(store, index_dir, secret="s")) as c:
        form = {"csrf_token": _token(c.get("/login").text), "username": "alice"}
        c.post("/login", data={**form, "password": PASSWORD})
        html = c.get("/review").text
        assert "description (4+)" in html and "informal_statement (1)" in html
        total = re.search(r"Agent text \(([\d,]+)(\+?) waiting", html)
        assert total[2] == "+" and int(total[1]) >= 5  # a capped part makes the total a floor
        assert "description (4+)" in c.get("/review?kind=description").text
