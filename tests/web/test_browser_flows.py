"""The reviewer's traps of issue 25, each driven in chromium: Enter in a reason box, a copied
cookie after sign-out or deactivation, an edit kept after a refusal, KaTeX's `\\text` without a
box, a huge id answered by a 404 page with the headers, and the layout at phone width."""

from __future__ import annotations

from sqlalchemy import func, select

from math2.store import AgentText, Review
from tests.web.test_browser import _sign_in, browser, page  # noqa: F401 (fixtures)

HUGE = "99999999999999999999999"


def _reviews(store) -> int:
    with store.session() as s:
        return s.scalar(select(func.count()).select_from(Review))


def test_enter_in_the_reason_box_decides_nothing(page, live_server) -> None:  # noqa: F811
    base, store, seeded = live_server
    _sign_in(page, base)
    item = page.locator(f"#agent-text-{seeded.agent_text_id}")
    reason = item.locator("input[name=reason]")
    reason.fill("wrong, reject this")
    reason.press("Enter")
    page.wait_for_timeout(800)  # time for a submission to land, were there one
    assert page.url == f"{base}/review"
    assert _reviews(store) == 0
    with store.session() as s:
        assert s.get(AgentText, seeded.agent_text_id).status == "pending"
    assert reason.input_value() == "wrong, reject this"  # still there, nothing reloaded
    item.locator("button[value=reject]").click()
    page.wait_for_selector("#flash")
    assert "reject (rejected)" in page.text_content("#flash")


def _replay(browser, base: str, cookies, store, seeded) -> None:  # noqa: F811
    context = browser.new_context()
    context.add_cookies(cookies)
    pg = context.new_page()
    pg.goto(f"{base}/review")
    assert pg.url.startswith(f"{base}/login"), "the copied cookie still opens the queue"
    r = pg.request.post(
        f"{base}/review/agent-text/{seeded.agent_text_id}",
        form={"decision": "reject", "reason": "replayed"},
    )
    assert r.status == 403
    context.close()
    assert _reviews(store) == 0


def test_a_copied_cookie_is_dead_after_sign_out(browser, page, live_server) -> None:  # noqa: F811
    base, store, seeded = live_server
    _sign_in(page, base)
    cookies = page.context.cookies()
    page.click("button:has-text('Sign out')")
    page.wait_for_url(f"{base}/")
    _replay(browser, base, cookies, store, seeded)


def test_a_copied_cookie_is_dead_after_deactivation(browser, page, live_server) -> None:  # noqa: F811
    from math2.web.accounts import deactivate_reviewer

    base, store, seeded = live_server
    _sign_in(page, base)
    cookies = page.context.cookies()
    deactivate_reviewer(store, "alice")
    page.goto(f"{base}/review")
    assert page.url.startswith(f"{base}/login")  # the open tab is signed out too
    _replay(browser, base, cookies, store, seeded)


def test_a_refused_confirm_keeps_the_edit(page, live_server) -> None:  # noqa: F811
    base, store, seeded = live_server
    _sign_in(page, base)
    item = page.locator(f"#agent-text-{seeded.agent_text_id}")
    edited = "In a right triangle, $a^2 + b^2 = c^2$ (my careful rewording)."
    item.locator("textarea[name=body]").fill(edited)
    item.locator("input[name=reason]").fill("reworded")
    item.locator("button[value=confirm]").click()  # a changed text cannot be confirmed
    page.wait_for_selector("#flash")
    assert "save it as an edit" in page.text_content("#flash")
    item = page.locator(f"#agent-text-{seeded.agent_text_id}")
    assert item.locator("textarea[name=body]").input_value() == edited
    assert item.locator("input[name=reason]").input_value() == "reworded"
    assert _reviews(store) == 0
    item.locator("button[value=edit]").click()
    page.wait_for_selector("#flash")
    assert "edit (confirmed)" in page.text_content("#flash")


def test_katex_text_has_no_box_and_refused_commands_stay_in_line(page, live_server) -> None:  # noqa: F811
    base, store, seeded = live_server
    with store.session() as s:
        s.get(AgentText, seeded.agent_text_id).body = (
            r"First line of the statement."
            "\n"
            r"For $x \in \mathbb{R}$ with $\text{rank}(x) = 1$ and $\href{javascript:1}{y}$."
        )
    _sign_in(page, base)
    page.wait_for_selector("body[data-math=done]")
    body = page.locator(f"#agent-text-{seeded.agent_text_id} div.text.body")
    spans = body.locator(".katex span.text")
    assert spans.count() >= 2  # \text{rank} and the refused \href
    for i in range(spans.count()):
        style = spans.nth(i).evaluate(
            "e => { const c = getComputedStyle(e);"
            " return [c.borderTopWidth, c.paddingTop, c.marginTop, c.backgroundColor]; }"
        )
        assert style == ["0px", "0px", "0px", "rgba(0, 0, 0, 0)"], style
    # Every rendered formula sits inside the text's box: nothing reaches over the line above.
    top = body.evaluate("e => e.getBoundingClientRect().top")
    for el in body.locator(".katex").all():
        assert el.evaluate("e => e.getBoundingClientRect().top") >= top - 0.5


def test_a_huge_id_is_a_404_page_with_the_headers(page, live_server) -> None:  # noqa: F811
    base, _, _ = live_server
    for path in (f"/node/{HUGE}", f"/runs/{HUGE}", f"/runs/{HUGE}/trajectory?item=a"):
        response = page.goto(f"{base}{path}")
        assert response.status == 404, path
        headers = response.headers
        assert "default-src 'self'" in headers["content-security-policy"]
        assert headers["x-frame-options"] == "DENY"
        assert page.text_content("h1") == "Sorry" and page.locator("#error").count() == 1


def test_pages_fit_a_phone(browser, live_server) -> None:  # noqa: F811
    base, _, seeded = live_server
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True)
    pg = context.new_page()
    for path in (
        "/",
        f"/node/{seeded.node_id}",
        f"/runs/{seeded.run_id}",
        "/search?q=right+angle",
        f"/audit/{seeded.audit}",
    ):
        pg.goto(f"{base}{path}")
        width = pg.evaluate("document.documentElement.scrollWidth")
        assert width <= 376, (path, width)
        header = pg.evaluate("document.querySelector('header').getBoundingClientRect().right")
        assert header <= 376, (path, header)
    context.close()


def test_an_edit_another_reviewer_overtook_stays_in_the_box(page, live_server) -> None:  # noqa: F811
    from math2.store import TextRecord
    from math2.web import Decision, decide_agent_text

    base, store, seeded = live_server
    _sign_in(page, base)
    item = page.locator(f"#agent-text-{seeded.agent_text_id}")
    edited = "For a right triangle with legs $a, b$ and hypotenuse $c$: $a^2 + b^2 = c^2$."
    item.locator("textarea[name=body]").fill(edited)
    item.locator("input[name=reason]").fill("names the hypotenuse")
    with store.session() as s:  # meanwhile, Carol rejects it
        decide_agent_text(s, seeded.agent_text_id, Decision.REJECT, "carol", "too loose")
    with page.expect_response(lambda r: r.request.method == "POST") as answer:
        item.locator("button[value=edit]").click()
    assert answer.value.status == 409
    page.wait_for_selector("#flash")
    assert "already decided (rejected by carol)" in page.text_content("#flash")
    item = page.locator(f"#refused ~ #agent-text-{seeded.agent_text_id}")
    assert item.locator("textarea[name=body]").input_value() == edited
    assert item.locator("input[name=reason]").input_value() == "names the hypotenuse"
    assert item.locator("button[value=edit]").is_disabled()
    assert page.locator(f"#decided-{seeded.agent_text_id}").text_content() == "rejected"
    assert _reviews(store) == 1
    with store.session() as s:
        count = select(func.count()).select_from(TextRecord)
        assert s.scalar(count.where(TextRecord.node_id == seeded.node_id)) == 0


def test_a_docstring_shows_its_markdown_and_maths(page, live_server) -> None:  # noqa: F811
    from math2.store import Mention

    base, store, _ = live_server
    with store.session() as s:
        m = s.scalar(select(Mention).where(Mention.name == "Nat.add_comm"))
        m.docstring = "Addition is **commutative**: $a_1 + b_1 = b_1 + a_1$.\n\n- `Nat.add`"
        mention_id = m.id
    page.goto(f"{base}/decl/{mention_id}")
    page.wait_for_selector("body[data-math=done]")
    doc = page.locator("#decl-docstring")
    assert doc.locator("strong").text_content() == "commutative"
    assert doc.locator("li code").text_content() == "Nat.add"
    assert doc.locator(".katex").count() == 1 and "*" not in doc.text_content()
