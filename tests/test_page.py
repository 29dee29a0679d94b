"""The search page over HTTP (the browser test drives it for real; these check the edges): who may
see it, what a hostile stored incident or query can and cannot do, and that no input makes a 500."""

import re
from urllib.parse import quote_plus

import pytest
from conftest import FIXTURES, make_incident
from local_client import TestClient
from pydantic import SecretStr

from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.service.page_login import COOKIE, safe_next
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl
from oncall_memory.store.engines import open_store

TOKEN = "page-test-token-51c2"
FORM = {"content-type": "application/x-www-form-urlencoded"}


def app_with(tmp_path, *, token=TOKEN, ingest=True, **more):
    settings = Settings(
        data_dir=tmp_path / "data", embedder="fake", api_token=SecretStr(token) if token else None, **more
    )
    memory = Memory(open_store(Settings(data_dir=":memory:")), FakeEmbedder(), settings)
    if ingest:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    return create_app(settings, memory=memory), memory


@pytest.fixture
def client(tmp_path):
    app, memory = app_with(tmp_path)
    with TestClient(app, follow_redirects=False) as c:
        yield c
    memory.close()


def log_in(client, token=TOKEN, next_path="/", headers=None):
    return client.post("/login", content=f"token={token}&next={next_path}", headers={**FORM, **(headers or {})})


def test_without_a_session_every_page_sends_to_login_and_comes_back(client):
    for path in ("/", "/?q=disk+full&env=shop-prod", "/incidents/INC-1001"):
        response = client.get(path)
        assert response.status_code == 303
        assert response.headers["location"].startswith("/login?next=")
    back = client.get("/?q=disk+full").headers["location"]
    form = client.get(back)
    assert form.status_code == 200 and 'name="next" value="/?q=disk+full"' in form.text


def test_the_wrong_token_is_refused_and_the_right_one_gives_a_strict_httponly_session(client):
    wrong = log_in(client, token="guess")
    assert wrong.status_code == 401 and "That is not the API token" in wrong.text
    assert COOKIE not in client.cookies
    right = log_in(client, next_path="%2F%3Fq%3Ddisk")
    assert right.status_code == 303 and right.headers["location"] == "/?q=disk"
    cookie = right.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and TOKEN not in cookie
    assert client.get("/?q=disk+full").status_code == 200
    assert client.get("/incidents/INC-1001").status_code == 200
    client.post("/logout")
    assert client.get("/").status_code == 303


def test_the_cookie_opens_the_pages_and_the_docs_never_the_api(client):
    log_in(client)
    assert client.get("/").status_code == 200
    for method, path in (
        ("GET", "/similar?text=disk"),
        ("GET", "/stats"),
        ("GET", "/metrics"),
        ("POST", "/feedback"),
    ):
        assert client.request(method, path).status_code == 401, path
    # the API's documentation is read by a logged-in person too, with its own assets (no CDN)
    docs = client.get("/docs")
    assert docs.status_code == 200 and "/docs/assets/swagger-ui-bundle.js" in docs.text and "cdn." not in docs.text
    assert client.get("/openapi.json").json()["paths"]
    assert client.get("/docs/assets/swagger-ui-bundle.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/docs/assets/swagger-ui.css").status_code == 200
    assert client.get("/docs/assets/..%2F..%2Fsettings.py").status_code == 404
    # a bearer token opens the page too (a script, a screen reader's fetch)
    client.cookies.clear()
    assert client.get("/", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert client.get("/", headers={"Authorization": "Bearer wrong"}).status_code == 303


@pytest.mark.parametrize(
    "value, expected",
    [
        ("/?q=x", "/?q=x"),
        ("/incidents/INC-1", "/incidents/INC-1"),
        ("//evil.example/", "/"),
        ("/\\evil.example", "/"),
        ("https://evil.example/", "/"),
        ("", "/"),
        (None, "/"),
        ("/x\r\nSet-Cookie: a=b", "/"),
    ],
)
def test_after_login_the_browser_goes_only_to_a_page_of_this_service(value, expected):
    assert safe_next(value) == expected


def test_a_stored_incident_cannot_script_the_page_or_link_to_javascript(tmp_path):
    app, memory = app_with(tmp_path)
    memory.ingest(
        [
            make_incident(
                id="INC-EVIL",
                title='<script>alert(1)</script> disk full on "db"',
                url="javascript:alert(document.cookie)",
                root_cause="<img src=x onerror=alert(1)>",
                fixes_attempted=[{"action": "<b>rm -rf</b>", "outcome": "resolved"}],
            )
        ]
    )
    with TestClient(app) as c:
        log_in(c)
        for page in (c.get("/", params={"q": "disk full"}), c.get("/incidents/INC-EVIL")):
            assert page.status_code == 200
            assert "<script>alert" not in page.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
            assert "<img src=x" not in page.text and "<b>rm -rf</b>" not in page.text
            assert "javascript:" not in page.text
            csp = page.headers["content-security-policy"]
            assert "script-src 'self';" in csp and "unsafe-inline" not in csp  # only the page's own file
            assert "<script>" not in page.text and '<script src="/static/page.js" defer></script>' in page.text
            assert page.headers["referrer-policy"] == "same-origin"
            assert page.headers["cache-control"] == "no-store"
    memory.close()


def test_odd_input_gets_a_page_that_says_what_to_fix_never_a_500(client):
    log_in(client)
    too_long = client.get("/", params={"q": "x", "limit": "7", "only": ["env", "bogus"], "env": ""})
    assert too_long.status_code == 200  # an unknown limit falls back to 5, an unknown "only" is ignored
    assert client.get("/?q=%00%ED%A0%80%FF").status_code < 500  # a NUL and bytes that are not UTF-8
    for params in (
        {"q": "x" * 20_000},
        {"q": "disk", "tags": ",,, ,"},
        {"q": "disk", "service": "a" * 5000, "only": "service"},
    ):
        assert client.get("/", params=params).status_code < 500, params
    assert client.get("/", params={"limit": "many"}).status_code == 422
    missing = client.get("/incidents/NO-SUCH-INCIDENT")
    assert missing.status_code == 404 and "No incident NO-SUCH-INCIDENT" in missing.text
    assert client.get("/incidents/a/b/..%2F..%2Fetc").status_code == 404


def test_before_any_ingest_the_page_says_what_to_run(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", embedder="fake")  # no token: loopback only, open
    with Memory.open(settings, embedder=FakeEmbedder()) as memory, TestClient(create_app(settings, memory=memory)) as c:
        empty = c.get("/")
        assert empty.status_code == 200 and "none yet (run oncall-memory ingest)" in empty.text
        lookup = c.get("/", params={"q": "disk full"})
        assert lookup.status_code == 503 and "run `oncall-memory ingest PATH` first" in lookup.text


# -- sessions, round two -------------------------------------------------------------------------------


def session_cookie(response) -> str:
    return response.cookies[COOKIE]


def test_a_session_is_a_random_server_side_id_that_logout_ends(client):
    first, second = session_cookie(log_in(client)), session_cookie(log_in(client))
    assert first != second and TOKEN not in first and len(first) >= 40

    def with_cookie(value: str, method: str = "GET", path: str = "/"):
        client.cookies.clear()
        return client.request(method, path, headers={"Cookie": f"{COOKIE}={value}"})

    assert with_cookie(first).status_code == 200
    with_cookie(first, "POST", "/logout")
    assert with_cookie(first).status_code == 303  # the cookie copied before logging out
    assert with_cookie(second).status_code == 200  # another session goes on


def test_a_new_api_token_ends_every_session(tmp_path):
    app, memory = app_with(tmp_path)
    with TestClient(app, follow_redirects=False) as c:
        cookie = session_cookie(log_in(c))
    memory.close()
    app, memory = app_with(tmp_path, token="the-rotated-token")  # same data dir, same session store
    with TestClient(app, follow_redirects=False) as c:
        c.cookies.set(COOKIE, cookie)
        assert c.get("/").status_code == 303
    memory.close()


def test_login_attempts_are_throttled_per_client(client):
    statuses = [log_in(client, token=f"guess-{i}").status_code for i in range(12)]
    assert statuses[:10] == [401] * 10 and statuses[10:] == [429, 429]
    throttled = log_in(client)  # even the right token waits: a guesser cannot tell
    assert throttled.status_code == 429 and int(throttled.headers["retry-after"]) >= 1
    assert COOKIE not in throttled.cookies


def test_the_cookie_is_secure_when_the_browser_came_over_https(tmp_path):
    app, memory = app_with(tmp_path, allowed_hosts=["memory.example"])  # the name its TLS proxy serves
    with TestClient(app, base_url="https://memory.example", follow_redirects=False) as c:
        assert "Secure" in log_in(c).headers["set-cookie"]
    with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as c:
        assert "Secure" not in log_in(c).headers["set-cookie"]
    memory.close()


def test_behind_a_tls_proxy_the_forwarded_scheme_makes_the_cookie_secure(tmp_path):
    import httpx
    from conftest import serving

    app, memory = app_with(tmp_path)
    with serving(app) as base:  # uvicorn trusts X-Forwarded-Proto from 127.0.0.1 (FORWARDED_ALLOW_IPS)
        response = httpx.post(
            f"{base}/login",
            content=f"token={TOKEN}&next=/",
            headers={**FORM, "X-Forwarded-Proto": "https"},
            timeout=10,
        )
        assert response.status_code == 303 and "Secure" in response.headers["set-cookie"]
    memory.close()


# -- the page helps --------------------------------------------------------------------------------


def test_feedback_from_the_page_is_recorded_and_moves_the_next_lookup(tmp_path):
    from oncall_memory.domain.alert import Alert

    app, memory = app_with(tmp_path)
    alert = "IPsec tunnel to card processor down"
    before = memory.similar(Alert(text=alert)).neighbours[1]
    with TestClient(app, follow_redirects=False) as c:
        log_in(c)
        page = c.get("/", params={"q": alert})
        csrf = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        form = {"csrf": csrf, "q": alert, "env": "", "back": "/?q=IPsec", "suggested": before.id, "verdict": "helped"}
        body = "&".join(f"{k}={quote_plus(v)}" for k, v in form.items())
        done = c.post("/page/feedback", content=body, headers=FORM)
        assert done.status_code == 303 and done.headers["location"].startswith("/?q=IPsec&said=")
        shown = c.get(done.headers["location"])
        assert f"Recorded: {before.id} helped" in shown.text
        # No CSRF token, another's, or another origin: refused, nothing recorded.
        for bad, headers in (
            ({**form, "csrf": ""}, FORM),
            ({**form, "csrf": "x" * len(csrf)}, FORM),
            (form, {**FORM, "Origin": "https://evil.example"}),
        ):
            body = "&".join(f"{k}={quote_plus(v)}" for k, v in bad.items())
            assert c.post("/page/feedback", content=body, headers=headers).status_code == 403
        unknown = {**form, "suggested": "INC-9999"}
        body = "&".join(f"{k}={quote_plus(v)}" for k, v in unknown.items())
        assert c.post("/page/feedback", content=body, headers=FORM).status_code == 400
    (row,) = memory.feedback.all()
    assert row["suggested"] == before.id and row["who"].startswith("page:") and row["ref"] == "page"
    after = next(n for n in memory.similar(Alert(text=alert)).neighbours if n.id == before.id)
    assert "helped once on similar alerts" in after.reasons
    memory.close()


def test_a_pasted_alert_fills_the_facts_and_a_typo_gets_the_nearest_known_value(client):
    log_in(client)
    pasted = "KubePodCrashLooping namespace=shop pod=checkout-6c9d7f-abcde container=checkout cluster=shop-prod"
    page = client.get("/", params={"q": pasted})
    assert 'id="service" name="service" value="checkout"' in page.text
    assert 'id="env" name="env" value="shop-prod"' in page.text
    assert "from the alert&#39;s label pairs (container label)" in page.text
    typo = client.get("/", params={"q": "pods crashing", "env": "shop-prd", "only": "env"})
    assert "No env “shop-prd” on record" in typo.text and ">shop-prod</a>" in typo.text


def test_answers_say_how_sure_they_are_and_times_read_as_people_read_them(client):
    log_in(client)
    sure = client.get("/", params={"q": "IPsec tunnel to card processor down"})
    assert "high confidence" in sure.text and "Nothing close is on record" not in sure.text
    weak = client.get("/", params={"q": "Office coffee machine is out of beans"})
    assert "Nothing close is on record" in weak.text and "low confidence (weak match)" in weak.text
    assert "Fixed by:" not in weak.text  # a weak match's fix is never offered as the fix
    incident = client.get("/incidents/INC-1001")
    assert " ago</time>" in incident.text and " UTC)" in incident.text


def test_the_time_filter_keeps_to_recent_incidents(client, tmp_path):
    log_in(client)
    page = client.get("/", params={"q": "pods crashing", "since": "182d", "limit": "20"})
    assert page.status_code == 200 and 'value="182d" selected' in page.text
    assert "last 6 months" in page.text


def test_a_rotated_forwarded_for_does_not_dodge_the_throttle(tmp_path, monkeypatch):
    # With Uvicorn's old default (believe 127.0.0.1), 14 of 14 guesses from one address, each with a new
    # X-Forwarded-For, got 401 and never 429.
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    app, memory = app_with(tmp_path)
    with TestClient(app, follow_redirects=False, client=("127.0.0.1", 50000)) as c:
        statuses = [
            log_in(c, token=f"guess-{i}", headers={"X-Forwarded-For": f"203.0.113.{i}"}).status_code for i in range(12)
        ]
    memory.close()
    assert statuses[:10] == [401] * 10 and statuses[10:] == [429, 429]


def test_a_configured_proxy_is_believed_about_who_the_client_is(tmp_path, monkeypatch):
    monkeypatch.setenv("ONCALL_MEMORY_FORWARDED_ALLOW_IPS", "127.0.0.1")
    app, memory = app_with(tmp_path)
    with TestClient(app, follow_redirects=False, client=("127.0.0.1", 50000)) as c:
        rotated = [
            log_in(c, token=f"guess-{i}", headers={"X-Forwarded-For": f"203.0.113.{i}"}).status_code for i in range(12)
        ]
    memory.close()
    assert rotated == [401] * 12  # twelve clients behind the proxy, one guess each


def test_the_icon_and_the_page_assets_are_served_without_a_session_and_ship_in_the_package(client):
    for path, kind in (
        ("/favicon.ico", "image/svg+xml"),
        ("/favicon.svg", "image/svg+xml"),
        ("/static/page.js", "text/javascript"),
    ):
        response = client.get(path)
        assert response.status_code == 200 and response.headers["content-type"].startswith(kind), path
    assert client.get("/favicon.ico").content.startswith(b"<svg")
    # a wheel carries what the routes read (page.js was missing from the package data)
    import tomllib

    from conftest import ROOT

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    for pattern in ("static/*.css", "static/*.js", "static/*.svg", "templates/*.html"):
        assert pattern in data["oncall_memory.service"]


def test_a_search_with_nothing_close_is_headed_as_such_and_ages_agree_with_the_incident_page(client):
    log_in(client)
    weak = client.get("/?q=" + quote_plus("quantum flux capacitor misaligned on the starship bridge"))
    assert weak.status_code == 200
    assert "Nothing like this on record: the 5 nearest" in weak.text and "5 past incidents like this" not in weak.text
    assert "hybrid search" not in weak.text and "ranked by facts" not in weak.text  # plain words
    sure = client.get("/?q=" + quote_plus("checkout pods CrashLoopBackOff after release, PAYMENT_GATEWAY_URL missing"))
    assert "past incidents like this" in sure.text
    listed = re.search(r'<a[^>]+href="/incidents/INC-1001"[^>]*>.*?<span class="age">([^<]+)</span>', sure.text, re.S)
    page = client.get("/incidents/INC-1001").text
    assert listed is not None and listed.group(1) in page  # the same words on both


def test_a_trusted_auth_proxy_logs_people_in_by_name_and_their_feedback_is_theirs(tmp_path):
    from oncall_memory.domain.alert import Alert

    settings = Settings(
        data_dir=tmp_path / "data",
        embedder="fake",
        api_token=SecretStr(TOKEN),
        auth_proxy_header="X-Auth-Request-Email",
        forwarded_allow_ips="testclient",  # the test client's own address: it plays the proxy
    )
    memory = Memory(open_store(Settings(data_dir=":memory:")), FakeEmbedder(), settings)
    memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    alert = "IPsec tunnel to card processor down"
    suggested = memory.similar(Alert(text=alert)).neighbours[0].id
    ana = {"X-Auth-Request-Email": "ana@acme.example"}
    with TestClient(create_app(settings, memory=memory), follow_redirects=False) as c:
        page = c.get("/", params={"q": alert}, headers=ana)
        assert page.status_code == 200  # no login form: the proxy logged her in
        csrf = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        form = {"csrf": csrf, "q": alert, "env": "", "back": "/", "suggested": suggested, "verdict": "helped"}
        body = "&".join(f"{k}={quote_plus(v)}" for k, v in form.items())
        assert c.post("/page/feedback", content=body, headers={**FORM, **ana}).status_code == 303
        # her form token is hers: the same post in someone else's name is refused
        bob = {"X-Auth-Request-Email": "bob@acme.example"}
        assert c.post("/page/feedback", content=body, headers={**FORM, **bob}).status_code == 403
        assert c.get("/similar", params={"text": alert}, headers=ana).status_code == 401  # the API stays bearer-only
    (row,) = memory.feedback.all()
    assert row["who"] == "user:ana@acme.example"
    # from anywhere but the trusted proxy, the header is only a header
    direct = settings.replace(forwarded_allow_ips="10.0.0.1")
    with TestClient(create_app(direct, memory=memory), follow_redirects=False) as c:
        assert c.get("/", headers=ana).status_code == 303
    memory.close()


def test_a_person_logs_in_with_their_own_account_and_their_feedback_is_theirs(tmp_path, monkeypatch, capsys):
    import io

    from oncall_memory.cli import main
    from oncall_memory.domain.alert import Alert

    app, memory = app_with(tmp_path)
    data = str(tmp_path / "data")
    monkeypatch.setenv("ONCALL_MEMORY_DATA_DIR", data)
    monkeypatch.setattr("sys.stdin", io.StringIO("short\n"))
    assert main(["user", "add", "Ana@Acme.example", "--password-stdin"]) == 2  # too short: refused, said why
    assert "at least 12 characters" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.StringIO("correct horse battery\n"))
    assert main(["user", "add", "Ana@Acme.example", "--password-stdin"]) == 0
    assert main(["user", "list"]) == 0 and capsys.readouterr().out.splitlines()[-1] == "ana@acme.example"
    stored = (tmp_path / "data" / "accounts.sqlite3").read_bytes()
    assert b"correct horse" not in stored and b"$argon2id$" in stored  # a salted slow hash, never the password

    alert = "IPsec tunnel to card processor down"
    suggested = memory.similar(Alert(text=alert)).neighbours[0].id
    with TestClient(app, follow_redirects=False) as c:
        form = c.get("/login").text
        assert 'name="name"' in form  # with accounts on record, the form asks for a name
        wrong = c.post("/login", content="name=ana%40acme.example&token=wrong+horse+battery", headers=FORM)
        assert wrong.status_code == 401 and "do not match an account" in wrong.text
        # the API token is not a password for a name
        assert c.post("/login", content=f"name=ana%40acme.example&token={TOKEN}", headers=FORM).status_code == 401
        right = c.post("/login", content="name=ANA%40acme.example&token=correct+horse+battery", headers=FORM)
        assert right.status_code == 303 and COOKIE in c.cookies
        page = c.get("/", params={"q": alert})
        assert page.status_code == 200
        csrf = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        fields = {"csrf": csrf, "q": alert, "env": "", "back": "/", "suggested": suggested, "verdict": "helped"}
        body = "&".join(f"{k}={quote_plus(v)}" for k, v in fields.items())
        assert c.post("/page/feedback", content=body, headers=FORM).status_code == 303
        assert c.get("/similar", params={"text": alert}).status_code == 401  # the API stays the machines' token's
        # a new password ends the sessions the old one opened; so does removing the account
        monkeypatch.setattr("sys.stdin", io.StringIO("a brand new passphrase\n"))
        assert main(["user", "add", "ana@acme.example", "--password-stdin"]) == 0
        assert c.get("/").status_code == 303
        assert (
            c.post("/login", content="name=ana%40acme.example&token=a+brand+new+passphrase", headers=FORM).status_code
            == 303
        )
        assert c.get("/").status_code == 200
        assert main(["user", "remove", "ana@acme.example"]) == 0
        assert c.get("/").status_code == 303
        assert main(["user", "remove", "ana@acme.example"]) == 2  # nobody by that name now: said so
        # the shared token still logs in, as itself
        assert log_in(c).status_code == 303 and c.get("/").status_code == 200
    (row,) = memory.feedback.all()
    assert row["who"] == "user:ana@acme.example"
    memory.close()


def test_an_unknown_name_costs_the_same_password_check_as_a_known_one(tmp_path):
    from oncall_memory.service.accounts import Accounts

    calls = []

    class Counting:  # argon2's hasher, counting its checks
        def __init__(self):
            from argon2 import PasswordHasher

            self.inner = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)

        def hash(self, password):
            return self.inner.hash(password)

        def verify(self, hashed, password):
            calls.append(hashed)
            return self.inner.verify(hashed, password)

        def check_needs_rehash(self, hashed):
            return False

    with Accounts(str(tmp_path / "accounts.sqlite3"), hasher=Counting()) as accounts:  # type: ignore[arg-type]
        accounts.add("ana", "correct horse battery")
        assert accounts.check("ana", "correct horse battery") == "ana"
        assert accounts.check("bob", "correct horse battery") is None
        assert accounts.check("", "x") is None and accounts.check("a b", "x") is None
    assert len(calls) == 4  # each attempt ran one real verification, known name or not


def test_a_pasted_alert_folds_to_one_line_cut_at_a_word():
    from oncall_memory.service.page_view import fold

    assert fold("disk full\n  on node-3", 140) == "disk full on node-3"
    assert fold("alpha beta gamma delta", 15) == "alpha beta…"
    assert fold("x" * 50, 10) == "x" * 9 + "…"  # one long token: cut anyway, still marked
    assert fold("restart, then roll the deployment", 12) == "restart…"  # no dangling comma


def test_the_incident_page_has_no_empty_when_column(client):
    log_in(client)
    page = client.get("/incidents/INC-1001").text
    assert '<th scope="col" class="action">Action</th>' in page and ">When</th>" not in page


def test_log_out_shows_only_to_someone_logged_in(client, tmp_path):
    log_in(client)
    for path in ("/", "/?q=disk+full", "/incidents/INC-1001", "/incidents/NOPE-1"):
        assert "Log out" in client.get(path).text, path
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    client.cookies.clear()
    assert "Log out" not in client.get("/", headers=bearer).text  # a bearer token has no session to end
    app, memory = app_with(tmp_path / "open", token=None)  # on loopback with no login configured
    with TestClient(app) as open_page:
        for path in ("/", "/?q=disk+full", "/incidents/INC-1001"):
            page = open_page.get(path)
            assert page.status_code in (200, 404) and "Log out" not in page.text, path
    memory.close()
