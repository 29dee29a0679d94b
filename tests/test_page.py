"""The search page over HTTP (the browser test drives it for real; these check the edges): who may
see it, what a hostile stored incident or query can and cannot do, and that no input makes a 500."""

import pytest
from conftest import FIXTURES, make_incident
from fastapi.testclient import TestClient
from pydantic import SecretStr

from oncall_memory.backlog import read_jsonl
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.service.page import COOKIE, safe_next, session_value
from oncall_memory.settings import Settings
from oncall_memory.stores import open_store

TOKEN = "page-test-token-51c2"
FORM = {"content-type": "application/x-www-form-urlencoded"}


def app_with(tmp_path, *, token=TOKEN, ingest=True):
    settings = Settings(data_dir=tmp_path / "data", embedder="fake", api_token=SecretStr(token) if token else None)
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


def log_in(client, token=TOKEN, next_path="/"):
    return client.post("/login", content=f"token={token}&next={next_path}", headers=FORM)


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


def test_the_cookie_opens_the_pages_only_never_the_api(client):
    client.cookies.set(COOKIE, session_value(TOKEN))
    assert client.get("/").status_code == 200
    for method, path in (
        ("GET", "/similar?text=disk"),
        ("GET", "/stats"),
        ("GET", "/metrics"),
        ("POST", "/feedback"),
        ("GET", "/openapi.json"),
    ):
        assert client.request(method, path).status_code == 401, path
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
        c.cookies.set(COOKIE, session_value(TOKEN))
        for page in (c.get("/", params={"q": "disk full"}), c.get("/incidents/INC-EVIL")):
            assert page.status_code == 200
            assert "<script>alert" not in page.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
            assert "<img src=x" not in page.text and "<b>rm -rf</b>" not in page.text
            assert "javascript:" not in page.text
            assert "script-src" not in page.headers["content-security-policy"]  # default-src 'none': no script
            assert page.headers["referrer-policy"] == "no-referrer"
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
