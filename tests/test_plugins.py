"""An integration installed as its own package (issue 36): one module declared in the
`oncall_memory.integrations` entry-point group brings a source, a webhook and a target, and the CLI and
the service find all three, keeping them to the rules the built-in pagers keep."""

import hmac
import json
import sys
import time

import pytest
from conftest import FIXTURES
from local_client import TestClient
from pydantic import SecretStr

from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl
from oncall_memory.store.engines import open_store

PLUGIN = '''
"""Zabbix for oncall-memory: its webhook media type posts {"event_id", "subject", "message", "host"}."""
import hmac
import os

from fastapi import HTTPException

from oncall_memory.chat import ChatApp
from oncall_memory.domain.alert import Alert
from oncall_memory.errors import InvalidInput
from oncall_memory.domain.incident import Incident
from oncall_memory.jobs import Job
from oncall_memory.sources import Source
from oncall_memory.targets import Target
from oncall_memory.webhook import Webhook

SEEN, SENT, REFINED = [], [], []
DOWN = False  # a test sets it: the target's sends fail


class ZabbixWebhook(Webhook):
    name = "zabbix"
    variable = "ZABBIX_WEBHOOK_TOKEN"

    def authentic(self, secret, headers, raw):
        return hmac.compare_digest(headers.get("x-zabbix-token", "").encode(), secret.encode())

    def jobs(self, body, settings, known):
        SEEN.append(body)
        if not isinstance(body, dict) or "event_id" not in body:
            raise InvalidInput("a Zabbix event has event_id, subject and message")
        if body.get("status") == "RESOLVED":
            return [], "resolved"
        if body.get("crash"):
            raise KeyError("oops")  # a bug of the plugin's own
        text = f"{body['subject']} - {body.get('message', '')}"
        key = body.get("key") or f"zabbix:{body['event_id']}"
        return [Job.single(key, Alert(text=text, service=body.get("host")), body["subject"])], 0


class Recorder(Target):
    name = "zabbix-ack"

    def accepts(self, job):
        return job.key.startswith("zabbix:")

    def render(self, job, answers):
        ids = [n.id for a in answers for n in a.lookup.neighbours]
        return {"key": job.key, "ids": ids, "details": [a.detail for a in answers]}

    def send(self, job, body):
        if DOWN:
            raise RuntimeError("zabbix is down")
        SENT.append(body)


class NotesSource(Source):
    name = "zabbix"

    def __init__(self, path):
        self.path = path

    def incidents(self, window):
        for number, line in enumerate(open(self.path).read().splitlines(), start=1):
            yield Incident(id=f"ZBX-{number}", title=line, source="zabbix")


webhook = ZabbixWebhook()


def targets(settings):
    return [Recorder()]


targets_need = "ZABBIX_WEBHOOK_TOKEN (a Zabbix problem's comment)"


class ProblemText:
    """Reads the problem's own text before the lookup, as Zabbix's API would give it."""

    def __call__(self, job):
        REFINED.append(job.key)
        if "refine-crash" in job.items[0].title:
            raise RuntimeError("the Zabbix API is down")
        item = job.items[0]
        return job.model_copy(update={"items": [item.model_copy(update={"detail": "read from the Zabbix API"})]})

    def close(self):
        pass


def refiners(settings):
    return [ProblemText()]


class ZabbixChat(ChatApp):
    """A chat app of Zabbix's own: a command that answers with the nearest incident's id."""

    name, title, variable, guard = "zchat", "ZChat", "ZCHAT_TOKEN", "ZChat's token"

    def __init__(self, settings, memory):
        if os.environ.get("ZCHAT_BROKEN"):
            raise RuntimeError("a bug of the plugin's own")
        self.memory = memory

    @classmethod
    def on(cls, settings):
        return bool(os.environ.get("ZCHAT_TOKEN"))

    def verify(self, body, headers):
        if not hmac.compare_digest(headers.get("x-zchat-token", "").encode(), os.environ["ZCHAT_TOKEN"].encode()):
            raise HTTPException(401, "wrong ZChat token")

    def command(self, form):
        return {"text": self.memory.similar(Alert(text=form["text"]), limit=1).neighbours[0].id}

    def interaction(self, payload):
        SEEN.append(payload)


chat_app = ZabbixChat


def source(settings, path):
    return NotesSource(path)
'''


@pytest.fixture
def zabbix(tmp_path, monkeypatch):
    """The package as pip installs it: its module and a dist-info declaring the entry point."""
    site = tmp_path / "site"
    (site / "oncall_memory_zabbix").mkdir(parents=True)
    (site / "oncall_memory_zabbix" / "__init__.py").write_text(PLUGIN)
    dist = site / "oncall_memory_zabbix-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: oncall-memory-zabbix\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[oncall_memory.integrations]\nzabbix = oncall_memory_zabbix\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delenv("ZABBIX_WEBHOOK_TOKEN", raising=False)
    import oncall_memory_zabbix  # type: ignore[import-not-found]

    yield oncall_memory_zabbix
    sys.modules.pop("oncall_memory_zabbix", None)


def test_what_an_integrations_targets_need_is_said_when_answers_would_go_nowhere(zabbix):
    """The line said at start and when an alert will be posted nowhere names every integration's variables,
    the built-in ones' and an installed one's, from their own `targets_need`."""
    from oncall_memory.integrations.offers import service_plugins, targets_hint

    hint = targets_hint(service_plugins())
    assert hint.startswith("set ") and "ONCALL_MEMORY_SLACK_WEBHOOK_URL" in hint
    assert "ONCALL_MEMORY_PAGERDUTY_FROM_EMAIL" in hint and hint.endswith(
        "; or ZABBIX_WEBHOOK_TOKEN (a Zabbix problem's comment)"
    )
    assert targets_hint([]) == "no integration here posts answers"


def test_an_installed_integrations_chat_app_is_mounted_off_until_its_setting_and_verified_first(
    tmp_path, monkeypatch, zabbix, caplog
):
    """A chat app through the `chat_app` hook, as Slack's is: its routes 404 naming what to set while it is
    off; once on, a request it does not verify is refused before it is read, a command is answered, a button's
    payload reaches it, and the startup line says how its routes are guarded."""
    import logging

    monkeypatch.delenv("ZCHAT_TOKEN", raising=False)
    app, memory = app_with(tmp_path)
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    with TestClient(app) as client:
        off = client.post("/zchat/commands", content=b"text=x", headers=form)
        assert off.status_code == 404 and off.json()["detail"] == "the ZChat app is off: set ZCHAT_TOKEN"
    memory.close()
    monkeypatch.setenv("ZCHAT_TOKEN", "z-1")
    caplog.set_level(logging.INFO, logger="oncall_memory.service.app")
    app, memory = app_with(tmp_path)
    with TestClient(app) as client:
        body = b"text=checkout+pods+CrashLoopBackOff"
        assert (
            client.post("/zchat/commands", content=body, headers={**form, "X-Zchat-Token": "guess"}).status_code == 401
        )
        answer = client.post("/zchat/commands", content=body, headers={**form, "X-Zchat-Token": "z-1"})
        assert answer.status_code == 200 and answer.json() == {"text": "INC-1001"}
        pressed = b"payload=%7B%22type%22%3A%22button%22%7D"
        assert (
            client.post("/zchat/interactions", content=pressed, headers={**form, "X-Zchat-Token": "z-1"}).status_code
            == 200
        )
        assert zabbix.SEEN[-1] == {"type": "button"}
    memory.close()
    assert "route /zchat/commands, /zchat/interactions: ZChat's token" in caplog.text


def test_a_plugins_refiner_or_chat_app_that_fails_loses_no_alert_and_keeps_the_service_up(
    tmp_path, monkeypatch, zabbix, caplog
):
    """A refiner that raises: the alert is looked up as it came and still delivered. A chat app that cannot
    start: logged, its routes stay off, the rest of the service serves."""
    monkeypatch.setenv("ZABBIX_WEBHOOK_TOKEN", "zbx-secret-1")
    monkeypatch.setenv("ZCHAT_TOKEN", "z-1")
    monkeypatch.setenv("ZCHAT_BROKEN", "1")
    app, memory = app_with(tmp_path)
    event = {"event_id": "982", "subject": "refine-crash checkout pods CrashLoopBackOff", "host": "checkout"}
    with TestClient(app) as client:
        answer = client.post("/webhooks/zabbix", json=event, headers={"X-Zabbix-Token": "zbx-secret-1"})
        assert answer.status_code == 202
        wait_for(lambda: any(s["key"] == "zabbix:982" for s in zabbix.SENT))
        (sent,) = [s for s in zabbix.SENT if s["key"] == "zabbix:982"]
        assert sent["ids"] and sent["details"] == [None]  # looked up as it came
        form = {"Content-Type": "application/x-www-form-urlencoded", "X-Zchat-Token": "z-1"}
        off = client.post("/zchat/commands", content=b"text=x", headers=form)
        assert off.status_code == 404 and "ZCHAT_TOKEN" in off.json()["detail"]
        assert client.get("/healthz").status_code == 200
    memory.close()
    assert "the Zabbix API is down" in caplog.text and "could not start" in caplog.text


def app_with(tmp_path, **settings):
    settings = Settings(data_dir=tmp_path / "data", embedder="fake", **settings)
    memory = Memory(open_store(Settings(data_dir=":memory:")), FakeEmbedder(), settings)
    memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    return create_app(settings, memory=memory), memory


def wait_for(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_an_installed_integrations_webhook_and_target_are_mounted_and_deliver(tmp_path, monkeypatch, zabbix):
    monkeypatch.setenv("ZABBIX_WEBHOOK_TOKEN", "zbx-secret-1")
    app, memory = app_with(tmp_path)
    secret = "ghp_" + "Zq4" * 12
    event = {
        "event_id": "981",
        "subject": "checkout pods CrashLoopBackOff",
        "message": f"token {secret}",
        "host": "checkout",
    }
    with TestClient(app) as client:
        assert "/webhooks/zabbix" in client.get("/openapi.json").json()["paths"]
        assert client.post("/webhooks/zabbix", json=event).status_code == 401
        assert client.post("/webhooks/zabbix", json=event, headers={"X-Zabbix-Token": "guess"}).status_code == 401
        assert zabbix.SEEN == []  # refused before the plugin read a thing
        ok = {"X-Zabbix-Token": "zbx-secret-1"}
        answer = client.post("/webhooks/zabbix", json=event, headers=ok)
        assert answer.status_code == 202 and answer.json() == {"accepted": 1, "duplicates": 0}
        assert client.post("/webhooks/zabbix", json=event, headers=ok).json() == {"accepted": 0, "duplicates": 1}
        assert secret not in json.dumps(zabbix.SEEN) and "[REDACTED]" in zabbix.SEEN[0]["message"]
        wait_for(lambda: zabbix.SENT)
        assert zabbix.SENT[0]["key"] == "zabbix:981" and zabbix.SENT[0]["ids"][0] == "INC-1001"
        # its refiner read the problem further before the lookup, and the answer carries what it read
        assert zabbix.REFINED == ["zabbix:981"] and zabbix.SENT[0]["details"] == ["read from the Zabbix API"]
        # what it ignores is said; a body it cannot read is a 422 saying why; its own bug is no 500
        resolved = client.post("/webhooks/zabbix", json={**event, "status": "RESOLVED"}, headers=ok)
        assert resolved.json() == {"accepted": 0, "duplicates": 0, "ignored": "resolved"}
        bad = client.post("/webhooks/zabbix", json={"subject": "x"}, headers=ok)
        assert bad.status_code == 422 and "event_id" in bad.json()["detail"]
        crash = client.post("/webhooks/zabbix", json={**event, "crash": True}, headers=ok)
        assert crash.status_code == 422 and "could not read" in crash.json()["detail"]
        # a job keyed as another pager's alert would take that alert's exactly-once key: refused
        foreign = client.post("/webhooks/zabbix", json={**event, "key": "pagerduty:P1"}, headers=ok)
        assert foreign.status_code == 422
        assert (
            client.post(
                "/webhooks/zabbix", content=b"{nope", headers={**ok, "content-type": "application/json"}
            ).status_code
            == 400
        )
    memory.close()


def test_facing_the_network_an_integrations_route_is_off_until_its_secret_is_set(tmp_path, zabbix):
    app, memory = app_with(tmp_path, host="0.0.0.0", api_token=SecretStr("api"))
    with TestClient(app) as client:
        off = client.post("/webhooks/zabbix", json={"event_id": "1", "subject": "x"})
        assert off.status_code == 404 and "ZABBIX_WEBHOOK_TOKEN" in off.text
    memory.close()


def test_an_integrations_source_comes_from_the_same_module(tmp_path, monkeypatch, capsys, zabbix):
    from oncall_memory.cli import main

    monkeypatch.setenv("ONCALL_MEMORY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ONCALL_MEMORY_EMBEDDER", "fake")
    notes = tmp_path / "notes.txt"
    notes.write_text("redis evicting keys under memory pressure\nkafka broker disk full\n")
    assert main(["ingest", "--source", "zabbix", str(notes), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["new"] == 2


def test_a_broken_integration_is_logged_and_the_service_still_starts(tmp_path, monkeypatch, caplog):
    site = tmp_path / "site"
    (site / "broken_plugin").mkdir(parents=True)
    (site / "broken_plugin" / "__init__.py").write_text("raise RuntimeError('half installed')\n")
    dist = site / "broken_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[oncall_memory.integrations]\nbroken = broken_plugin\n")
    monkeypatch.syspath_prepend(str(site))
    app, memory = app_with(tmp_path)
    with TestClient(app) as client:
        assert client.get("/healthz").status_code == 200
    assert "broken = broken_plugin" in caplog.text and "half installed" in caplog.text
    memory.close()


def test_a_plugin_pager_checks_its_credential_before_the_body_as_the_built_in_pagers_do(tmp_path, monkeypatch):
    """Issue 53: a plugin's route read the body (up to the limit) before asking for the credential, where
    Alertmanager's and Opsgenie's routes refuse first. A webhook whose headers carry the secret (`carries`) is
    now refused unread: over the body limit, a wrong token is a 401, not a 413. One that signs the body
    (`authentic`, the earlier shape) still gets the bounded body to check, and still works."""
    from oncall_memory.credentials import same_secret
    from oncall_memory.service.webhooks import mount
    from oncall_memory.webhook import Webhook

    seen: list = []

    class Tokened(Webhook):
        name, variable = "tokened", "TOKENED_SECRET"

        def carries(self, secret, headers):
            return same_secret(headers.get("x-token", ""), secret)

        def jobs(self, body, settings, known):
            seen.append(body)
            return [], "seen"

    class Signed(Webhook):
        name, variable = "signed", "SIGNED_SECRET"

        def authentic(self, secret, headers, raw):
            return same_secret(headers.get("x-sig", ""), hmac.new(secret.encode(), raw, "sha256").hexdigest())

        def jobs(self, body, settings, known):
            seen.append(body)
            return [], "seen"

    monkeypatch.setenv("TOKENED_SECRET", "tok-1")
    monkeypatch.setenv("SIGNED_SECRET", "sig-1")
    monkeypatch.setenv("ONCALL_MEMORY_GRAFANA_SECRET", "graf-1")  # a setting now: read when the app is built
    app, _ = app_with(tmp_path, max_body_bytes=4096)
    mount(app, Tokened(), "test")
    mount(app, Signed(), "test")
    big = json.dumps({"pad": "x" * 10_000}).encode()
    small = b'{"id": 1}'
    as_json = {"content-type": "application/json"}
    with TestClient(app) as client:
        # Header-carried: refused before a byte of the body is read, however large it says it is.
        assert client.post("/webhooks/tokened", content=big, headers={**as_json, "x-token": "guess"}).status_code == 401
        assert client.post("/webhooks/tokened", content=big, headers=as_json).status_code == 401
        assert client.post("/webhooks/tokened", content=big, headers={**as_json, "x-token": "tok-1"}).status_code == 413
        right = client.post("/webhooks/tokened", content=small, headers={**as_json, "x-token": "tok-1"})
        assert right.status_code == 202 and right.json()["ignored"] == "seen"
        # Body-signed: the body is read (bounded) to check the signature over it.
        assert client.post("/webhooks/signed", content=big, headers={**as_json, "x-sig": "guess"}).status_code == 413
        assert client.post("/webhooks/signed", content=small, headers={**as_json, "x-sig": "guess"}).status_code == 401
        signature = hmac.new(b"sig-1", small, "sha256").hexdigest()
        assert (
            client.post("/webhooks/signed", content=small, headers={**as_json, "x-sig": signature}).status_code == 202
        )
        # Grafana's contact point, shipped on the same hook: a wrong bearer with no signature is refused unread.
        wrong = client.post("/webhooks/grafana", content=big, headers={**as_json, "authorization": "Bearer no"})
        assert wrong.status_code == 401
    assert seen == [{"id": 1}, {"id": 1}]  # only the two admitted bodies reached the plugins


def test_an_installed_integrations_failing_target_shows_in_readyz_and_metrics(tmp_path, monkeypatch, zabbix):
    """Issue 53: what an installed pager brings has its row where the built-in ones do. Its target's
    deliveries are counted in /metrics from the start, and a target failing longer than
    ONCALL_MEMORY_DEGRADED_AFTER makes /readyz say degraded, naming it."""
    monkeypatch.setenv("ZABBIX_WEBHOOK_TOKEN", "zbx-secret-1")
    monkeypatch.setattr(zabbix, "DOWN", True)
    app, _ = app_with(tmp_path, degraded_after=0.0, post_backoff=0.05, post_backoff_cap=0.1)
    event = {"event_id": "982", "subject": "checkout pods CrashLoopBackOff", "host": "checkout"}
    with TestClient(app) as client:
        assert 'target="zabbix-ack"' in client.get("/metrics").text  # at 0 before any delivery
        assert "degraded" not in client.get("/readyz").json()
        answer = client.post("/webhooks/zabbix", json=event, headers={"X-Zabbix-Token": "zbx-secret-1"})
        assert answer.status_code == 202
        wait_for(lambda: "zabbix-ack" in client.get("/readyz").json().get("degraded", ""))
        ready = client.get("/readyz").json()
        assert ready["ready"] is True and "zabbix is down" in ready["degraded"]
        retried = [
            line
            for line in client.get("/metrics").text.splitlines()
            if 'target="zabbix-ack"' in line and 'outcome="retried"' in line and not line.startswith("#")
        ]
        assert retried and float(retried[0].rsplit(" ", 1)[1]) >= 1
        monkeypatch.setattr(zabbix, "DOWN", False)  # back: the delivery goes through and the row clears
        wait_for(lambda: zabbix.SENT)
        wait_for(lambda: "degraded" not in client.get("/readyz").json())


VICTOROPS = '''
"""A pager with settings of its own: its group is merged into Settings by the `settings_group` hook."""
from pydantic import SecretStr
from pydantic_settings import SettingsConfigDict

from oncall_memory.credentials import bearer, same_secret
from oncall_memory.domain.alert import Alert
from oncall_memory.jobs import Job
from oncall_memory.settings import SettingsGroup
from oncall_memory.webhook import Webhook


class VictorOpsSettings(SettingsGroup):
    model_config = SettingsConfigDict(env_prefix="ONCALL_MEMORY_VICTOROPS_", extra="ignore")

    webhook_token: SecretStr | None = None
    routing_key: str = "default"


class VictorOpsWebhook(Webhook):
    name = "victorops"
    variable = "ONCALL_MEMORY_VICTOROPS_WEBHOOK_TOKEN"

    def secret(self, settings):
        token = settings.victorops.webhook_token
        return token.get_secret_value() if token is not None else None

    def carries(self, secret, headers):
        return same_secret(bearer(headers), secret)

    def jobs(self, body, settings, known):
        key = f"victorops:{settings.victorops.routing_key}:{body['id']}"
        return [Job.single(key, Alert(text=body["text"]), body["text"])], 0


webhook = VictorOpsWebhook()
settings_group = VictorOpsSettings
'''


def _install(tmp_path, monkeypatch, module, name, code):
    site = tmp_path / f"site-{name}"
    (site / module).mkdir(parents=True)
    (site / module / "__init__.py").write_text(code)
    dist = site / f"{module}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[oncall_memory.integrations]\n{name} = {module}\n")
    monkeypatch.syspath_prepend(str(site))


def test_an_installed_integrations_settings_group_is_merged_into_settings(tmp_path, monkeypatch, caplog):
    """Issue 53: an installed pager declares its settings group in its own package. `Settings` reads it from
    the environment by its own variables, takes it by flat names, masks its secret, and its webhook reads
    its secret from it: the route checks that credential before the body, as the built-in pagers do."""
    _install(tmp_path, monkeypatch, "oncall_memory_victorops", "victorops", VICTOROPS)
    monkeypatch.setenv("ONCALL_MEMORY_VICTOROPS_WEBHOOK_TOKEN", "vo-token-1")
    monkeypatch.setenv("ONCALL_MEMORY_VICTOROPS_ROUTING_KEY", "sre")
    try:
        settings = Settings(data_dir=tmp_path / "data")
        assert settings.victorops.webhook_token.get_secret_value() == "vo-token-1"
        assert settings.victorops.routing_key == "sre"
        assert "vo-token-1" not in repr(settings.victorops) and "vo-token-1" in settings.secrets()
        given = Settings(data_dir=tmp_path / "data", victorops_routing_key="ops")
        assert (
            given.victorops.routing_key == "ops"
            and given.replace(victorops_routing_key="x").victorops.routing_key == "x"
        )
        assert given.victorops.routing_key == "ops"  # replace() leaves the original as it was
        from oncall_memory.settings import groups

        assert groups()["victorops"][1] == "victorops_"
        app, memory = app_with(tmp_path)
        big = json.dumps({"id": "1", "text": "x" * 20_000_000}).encode()
        with TestClient(app) as client:
            refused = client.post(
                "/webhooks/victorops",
                content=big,
                headers={"authorization": "Bearer guess", "content-type": "application/json"},
            )
            assert refused.status_code == 401  # refused unread, though the body is over the limit
            ok = client.post(
                "/webhooks/victorops",
                json={"id": "7", "text": "checkout pods CrashLoopBackOff"},
                headers={"authorization": "Bearer vo-token-1"},
            )
            assert ok.status_code == 202 and ok.json()["accepted"] == 1
            assert "/webhooks/victorops" in client.get("/openapi.json").json()["paths"]
        memory.close()
    finally:
        sys.modules.pop("oncall_memory_victorops", None)


def test_an_integrations_settings_under_another_prefix_are_left_out_and_said(tmp_path, monkeypatch, caplog):
    """A group whose variables would not be its own (another integration's prefix) is left out, with the
    entry point and the prefix it needs in the log; the rest of the settings stand."""
    _install(tmp_path, monkeypatch, "oncall_memory_borrower", "borrower", VICTOROPS.replace("VICTOROPS_", "PAGERDUTY_"))
    try:
        settings = Settings(data_dir=tmp_path / "data")
        assert not hasattr(settings, "borrower")
        assert "borrower = oncall_memory_borrower" in caplog.text and "ONCALL_MEMORY_BORROWER_" in caplog.text
        assert settings.pagerduty.url == "https://api.pagerduty.com"
    finally:
        sys.modules.pop("oncall_memory_borrower", None)


def test_a_built_in_pagers_hook_is_found_after_its_submodule_of_the_same_name_was_imported():
    """A built-in package builds its `webhook` hook when first asked; importing its `webhook.py` first (as
    the evaluation and these tests do) must not hide the hook, or the service would not mount the route."""
    import importlib

    from oncall_memory.integrations.offers import built_in_webhooks

    pagers = ["alertmanager", "gitlab", "grafana", "incident_io", "jira", "opsgenie", "pagerduty"]
    for vendor in pagers:
        package = importlib.import_module(f"oncall_memory.integrations.{vendor}")
        vars(package).pop("webhook", None)  # as before anything asked for the hook
        importlib.import_module(f"oncall_memory.integrations.{vendor}.webhook")
        package.webhook = sys.modules[f"oncall_memory.integrations.{vendor}.webhook"]  # what that import leaves
    assert sorted(hook.name for hook in built_in_webhooks()) == pagers


OPSNOTES_LEARNER = '''
"""A tool whose closed tickets the memory learns: it offers a learner through the `learners` hook."""
from oncall_memory.targets import Target

BUILT = []


class TicketLearner(Target):
    name = "memory-opsnotes"
    learns = "closed Opsnotes tickets"

    def __init__(self, memory):
        self.memory = memory

    def accepts(self, job):
        return job.kind == "learn" and job.key.startswith("opsnotes-learn:")

    def render(self, job, answers):
        return {"key": job.key}

    def send(self, job, body):
        pass


def learners(settings, memory):
    BUILT.append(memory)
    return [TicketLearner(memory)]
'''


def test_an_installed_integrations_learner_is_built_with_the_memory_and_named_at_startup(tmp_path, monkeypatch, caplog):
    """Issue 53: learners come through a hook too (`learners(settings, memory)`), built in (PagerDuty's,
    Jira's, incident.io's, GitLab's) and installed alike: the service builds each with its memory, counts
    its deliveries in /metrics, and says at start what it learns."""
    import logging

    _install(tmp_path, monkeypatch, "oncall_memory_opsnotes_learner", "opsnotes", OPSNOTES_LEARNER)
    caplog.set_level(logging.INFO, logger="oncall_memory")
    try:
        app, memory = app_with(tmp_path)
        with TestClient(app, headers={}) as client:
            assert 'target="memory-opsnotes"' in client.get("/metrics").text
            assert client.app.state.learning == frozenset({"opsnotes"})
        plugin = sys.modules["oncall_memory_opsnotes_learner"]
        assert plugin.BUILT == [memory]
        said = [r.getMessage() for r in caplog.records]
        assert "learning as incidents close: on (closed Opsnotes tickets)" in said
        assert not any("answers go to: memory-opsnotes" in line for line in said)  # a learner posts nothing
        memory.close()
    finally:
        sys.modules.pop("oncall_memory_opsnotes_learner", None)
