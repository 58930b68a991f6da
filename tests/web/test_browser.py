"""The app in a real browser (Debian's chromium driven by Playwright), against uvicorn.

Screenshots of the node page, the review queue and a run page are taken only on request:
MATH2_SCREENSHOTS=1 writes them to build/screenshots/ (ignored by git), MATH2_SCREENSHOTS=DIR to
DIR. A test run never rewrites the tracked docs/img/.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from math2.store import AuditGrade, Review
from tests.web.conftest import PASSWORD

ROOT = Path(__file__).resolve().parents[2]
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _chromium() -> str:
    path = os.environ.get("MATH2_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        if os.environ.get("CI"):
            pytest.fail(f"chromium missing in CI: {path} (scripts/setup.sh --dev installs it)")
        pytest.skip(f"no chromium at {path}")
    return path


def _shot(page, name: str) -> None:
    """A screenshot, when MATH2_SCREENSHOTS asks for them."""
    where = os.environ.get("MATH2_SCREENSHOTS")
    if not where:
        return
    folder = ROOT / "build" / "screenshots" if where == "1" else Path(where)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / name), full_page=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    sync_api = pytest.importorskip("playwright.sync_api")
    path = _chromium()
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    pg = context.new_page()
    dialogs: list[str] = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pg.dialogs = dialogs
    yield pg
    context.close()


def _sign_in(page, base: str, next_path: str = "/review") -> None:
    page.goto(f"{base}/login?next={next_path}")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", PASSWORD)
    page.click("button:has-text('Sign in')")
    page.wait_for_selector("#reviewer")


def test_search_then_open_a_node(page, live_server) -> None:
    base, _, seeded = live_server
    page.goto(f"{base}/search")
    page.fill("input[name=q]", "right angle dist")
    page.click("#search-form button")
    hit = page.locator("#hits li", has_text="dist_sq_eq_dist_sq_add_dist_sq").first
    hit.locator("a.node-link").click()
    page.wait_for_url(f"{base}/node/{seeded.node_id}")
    assert page.text_content("h1").startswith("Pythagorean theorem")
    assert page.text_content("#level") == "W0"
    # Lean highlighted on the server; crosswalks are links; history shows the retired pin.
    assert page.locator(".lean .lean-kn", has_text="theorem").count() >= 1
    href = page.get_attribute("a:has-text('pythag')", "href")
    assert href == "https://us.metamath.org/mpeuni/pythag.html"
    assert "v4.9.0" in page.text_content("#history") and "retired" in page.text_content("#history")
    assert "back_translation_nli" in page.text_content("#checks")
    page.wait_for_selector("body[data-math=done]")
    _shot(page, "node.png")


def test_confirm_agent_text_raises_the_level(page, live_server) -> None:
    base, _, seeded = live_server
    _sign_in(page, base)
    item = page.locator(f"#agent-text-{seeded.agent_text_id}")
    assert item.locator(".badge.level").text_content() == "W0"
    page.wait_for_selector("body[data-math=done]")
    assert item.locator(".katex").count() >= 1  # KaTeX from the bundled files rendered the TeX
    _shot(page, "review-queue.png")
    item.locator("input[name=reason]").fill("matches the Lean statement")
    item.locator("button[value=confirm]").click()
    page.wait_for_selector("#flash")
    assert "confirm (confirmed)" in page.text_content("#flash")
    assert page.locator(f"#agent-text-{seeded.agent_text_id}").count() == 0
    page.goto(f"{base}/node/{seeded.node_id}")
    assert page.text_content("#level") == "W3"
    text = page.locator(".text", has_text="right triangle").first
    assert "agent" in text.locator(".author-kind").text_content()
    assert "herald-translator@r1" in text.text_content()
    assert "alice" in text.text_content()


def test_grade_an_audit_sample_changes_the_report(page, live_server) -> None:
    base, _, seeded = live_server
    page.goto(f"{base}/audit/{seeded.audit}")
    row = page.locator("#report tr", has_text="algebra")
    assert row.locator(".graded").text_content() == "0"
    assert page.locator("#sample-1 form").count() == 0  # anonymous: no grading form
    _sign_in(page, base, f"/audit/{seeded.audit}")
    sample = page.locator(f"#sample-{seeded.sample_ids[0]}")
    sample.locator("input[name=reason]").fill("the coercion to ℕ is missing")
    sample.locator("button[value=major]").click()
    page.wait_for_selector("#flash")
    row = page.locator("#report tr", has_text="algebra")
    assert row.locator(".graded").text_content() == "1"
    assert row.locator(".major").text_content() == "1"
    assert page.locator(f"#sample-{seeded.sample_ids[0]} .my-grade").text_content() == "major"


def test_anonymous_cannot_reach_review_actions(page, live_server) -> None:
    base, store, seeded = live_server
    page.goto(f"{base}/review")
    page.wait_for_url(f"{base}/login?next=/review")
    form = {"decision": "confirm", "reason": "x"}
    r = page.request.post(f"{base}/review/agent-text/{seeded.agent_text_id}", form=form)
    assert r.status == 403
    r = page.request.post(f"{base}/review/binding/{seeded.binding_id}", form=form)
    assert r.status == 403
    r = page.request.post(
        f"{base}/audit/{seeded.audit}/grade/{seeded.sample_ids[0]}", form={"grade": "correct"}
    )
    assert r.status == 403
    # Signed in but without the page's CSRF token: refused too.
    _sign_in(page, base)
    r = page.request.post(f"{base}/review/agent-text/{seeded.agent_text_id}", form=form)
    assert r.status == 403
    page.goto(f"{base}/review")
    assert page.locator(f"#agent-text-{seeded.agent_text_id}").count() == 1  # still pending
    with store.session() as s:
        assert s.scalar(select(func.count()).select_from(Review)) == 0
        assert s.scalar(select(func.count()).select_from(AuditGrade)) == 0


def test_hostile_text_renders_inert(page, live_server) -> None:
    base, _, seeded = live_server
    page.goto(f"{base}/node/{seeded.xss_node_id}")
    page.wait_for_selector("body[data-math=done]")
    assert page.evaluate("window.__pwned") is None
    assert page.dialogs == []
    body = page.text_content("main")
    assert "<script>window.__pwned = 1</script>" in body  # shown as text
    assert "<b>bold?</b>" in page.text_content("h1")
    assert page.locator("main script").count() == 0 and page.locator("main img").count() == 0
    # \href{javascript:…} under KaTeX with trust: false: no link anywhere, the rest renders.
    assert page.locator("a[href^='javascript']").count() == 0
    assert page.locator(".katex").count() >= 2
    for link in page.locator("main a").all():
        assert not (link.get_attribute("href") or "").lower().startswith("javascript")


def test_run_page(page, live_server) -> None:
    base, _, seeded = live_server
    page.goto(f"{base}/runs/{seeded.run_id}")
    assert "3 of 5 items done" in page.text_content("#progress").replace("\n", " ")
    rounds = {
        r.locator("td").nth(0).text_content(): r.locator("td").nth(1).text_content()
        for r in page.locator("#rounds tr:has(td)").all()
    }
    assert rounds == {"1": "1", "2": "1", "3": "1", "never": "1", "not yet": "1"}
    _shot(page, "run.png")
    page.click("a:has-text('item-c')")
    # the click starts a navigation; counting before it has landed counts the run page's
    page.wait_for_url(f"{base}/runs/{seeded.run_id}/trajectory?item=item-c")
    page.wait_for_selector(".attempt")
    assert page.locator(".attempt").count() == 6
    assert "unknown identifier" in page.text_content("main")
