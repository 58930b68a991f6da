"""Issue 42 in chromium: a reviewer signs in, edits and decides, grades an audit sample and sees
the confirmation in view; a decision from an ended session keeps the text; a docstring page
shows the docstring once, rendered (Markdown and KaTeX)."""

from __future__ import annotations

from sqlalchemy import select

from math2.store import AgentText, Mention, TextRecord, WebSession
from tests.web.test_browser import _sign_in, browser, page  # noqa: F401 (fixtures)

DOC = "Addition is **commutative**: $a + b = b + a$."


def _in_view(pg, selector: str) -> bool:
    return pg.eval_on_selector(
        selector,
        "e => { const r = e.getBoundingClientRect();"
        " return r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0; }",
    )


def test_sign_in_edit_decide_and_grade_with_the_confirmation_in_view(page, live_server) -> None:  # noqa: F811
    base, store, seeded = live_server
    _sign_in(page, base)
    item = page.locator(f"#agent-text-{seeded.agent_text_id}")
    item.locator("textarea[name=body]").fill("The square on the hypotenuse, edited in chromium.")
    item.locator("input[name=reason]").fill("shorter")
    item.locator("button[value=edit]").click()
    page.wait_for_selector("#flash")
    assert "edit" in page.text_content("#flash") and _in_view(page, "#flash")
    with store.session() as s:
        assert s.get(AgentText, seeded.agent_text_id).status == "edited"
    # grading a sample far down the page: the confirmation is shown where the page scrolls to
    page.set_viewport_size({"width": 1200, "height": 300})
    page.goto(f"{base}/audit/{seeded.audit}")
    last = seeded.sample_ids[-1]
    sample = page.locator(f"#sample-{last}")
    sample.locator("input[name=reason]").fill("a quantifier is missing")
    sample.locator("button[value=major]").click()
    page.wait_for_selector(f"#sample-{last} #flash")
    assert "graded major" in page.text_content("#flash")
    assert _in_view(page, "#flash")


def test_a_decision_after_the_session_ended_keeps_the_text(page, live_server) -> None:  # noqa: F811
    base, store, seeded = live_server
    _sign_in(page, base)
    item = page.locator(f"#agent-text-{seeded.agent_text_id}")
    item.locator("textarea[name=body]").fill("An edit typed before the session ended.")
    item.locator("input[name=reason]").fill("typed with care")
    with store.session() as s:
        s.execute(WebSession.__table__.delete())  # the session ends meanwhile
    item.locator("button[value=edit]").click()
    page.wait_for_selector("#kept-why")
    assert "session has ended" in page.text_content("#kept-why")
    assert page.input_value("#kept-body") == "An edit typed before the session ended."
    assert page.input_value("#kept-reason") == "typed with care"
    # sign in in another tab, come back and send again: taken at the second press (the form
    # was from before the sign-in), the text intact all along
    other = page.context.new_page()
    _sign_in(other, base)
    page.click("#kept-form button[value=edit]")
    page.wait_for_selector("#kept-why")
    assert "before you signed in again" in page.text_content("#kept-why")
    assert page.input_value("#kept-body") == "An edit typed before the session ended."
    page.click("#kept-form button[value=edit]")
    page.wait_for_selector("#flash")
    with store.session() as s:
        assert s.get(AgentText, seeded.agent_text_id).status == "edited"


def test_a_docstring_page_shows_it_once_rendered(page, live_server) -> None:  # noqa: F811
    base, store, _ = live_server
    with store.session() as s:
        m = s.scalar(select(Mention).where(Mention.name == "Nat.add_comm"))
        m.docstring = DOC
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
        mention_id, node_id = m.id, m.node_id
    for path in (f"/decl/{mention_id}", f"/node/{node_id}"):
        page.goto(base + path)
        page.wait_for_selector("body[data-math=done]")
        assert page.locator(".docstring").count() == 1, path
        doc = page.locator(".docstring")
        assert doc.locator("strong").text_content() == "commutative"
        assert doc.locator(".katex").count() == 1
        body = page.text_content("main")
        assert "**" not in body and body.count("Addition is") == 1, path
        assert page.locator(".lean.signature").count() >= 1
