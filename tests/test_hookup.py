"""The copy-paste receivers of docs/integrations.md work with the real pager: Debian's Alertmanager checks the
shipped receiver (`amtool check-config`) and sends a firing alert through it to a running service, whose
answer reaches Slack."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from datetime import datetime, timezone

import httpx
import pytest
from conftest import FIXTURES, ROOT, serving
from pydantic import SecretStr

from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.ingest.backlog import read_jsonl
from oncall_memory.ingest.schedule import free_port
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.settings import Settings

ALERTMANAGER = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
AMTOOL = shutil.which("amtool")
pytestmark = pytest.mark.skipif(
    ALERTMANAGER is None or AMTOOL is None,
    reason="no Alertmanager here: `apt-get install prometheus-alertmanager` (tests/install-tools.sh does it as root)",
)
TOKEN = "am-receiver-token-3f9a"


def documented_receiver() -> str:
    """The alertmanager.yml block docs/integrations.md tells people to copy."""
    text = (ROOT / "docs" / "integrations.md").read_text()
    (block,) = re.findall(r"```yaml\n(# alertmanager\.yml\n.*?)```", text, re.S)
    return block


def configured(tmp_path, service_url: str) -> str:
    token = tmp_path / "oncall-memory-token"
    token.write_text(TOKEN)
    config = documented_receiver()
    assert "https://oncall-memory.example.internal/webhooks/alertmanager" in config
    config = config.replace("https://oncall-memory.example.internal", service_url)
    config = config.replace("/etc/alertmanager/oncall-memory-token", str(token))
    return config.replace("group_wait: 30s", "group_wait: 1s")  # the test's own patience


def test_the_documented_receiver_passes_amtool(tmp_path):
    path = tmp_path / "alertmanager.yml"
    path.write_text(configured(tmp_path, "http://127.0.0.1:8080"))
    check = subprocess.run([AMTOOL, "check-config", str(path)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "SUCCESS" in check.stdout


def test_a_real_alertmanager_posts_through_the_documented_receiver_and_the_answer_reaches_slack(tmp_path, httpserver):
    httpserver.expect_request("/slack-hook", method="POST").respond_with_data("ok")
    settings = Settings(
        data_dir=tmp_path / "data",
        embedder="fake",
        alertmanager_token=SecretStr(TOKEN),
        slack_webhook_url=SecretStr(httpserver.url_for("/slack-hook")),
        post_backoff=0.05,
    )
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        with serving(create_app(settings, memory=memory)) as base:
            config = tmp_path / "alertmanager.yml"
            config.write_text(configured(tmp_path, base))
            port = free_port()
            am = subprocess.Popen(
                [
                    ALERTMANAGER,
                    f"--config.file={config}",
                    f"--storage.path={tmp_path / 'am'}",
                    f"--web.listen-address=127.0.0.1:{port}",
                    "--cluster.listen-address=",  # one Alertmanager, no gossip
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                api = f"http://127.0.0.1:{port}"
                deadline = time.monotonic() + 60
                while True:
                    try:
                        if httpx.get(f"{api}/-/ready", timeout=2).status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    assert am.poll() is None and time.monotonic() < deadline, "Alertmanager did not start"
                    time.sleep(0.2)
                alert = {
                    "labels": {
                        "alertname": "KubePodCrashLooping",
                        "namespace": "shop",
                        "pod": "checkout-7d9f8b6c4-x2kq9",
                        "container": "checkout",
                        "severity": "critical",
                    },
                    "annotations": {
                        "summary": "Pod is crash looping.",
                        "description": "Pod shop/checkout-7d9f8b6c4-x2kq9 (checkout) is in waiting state "
                        "(reason: CrashLoopBackOff): back-off restarting failed container",
                    },
                    "startsAt": datetime.now(timezone.utc).isoformat(),
                }
                assert httpx.post(f"{api}/api/v2/alerts", json=[alert], timeout=10).status_code == 200
                deadline = time.monotonic() + 60
                while not httpserver.log and time.monotonic() < deadline:
                    assert am.poll() is None, am.stderr.read() if am.stderr else ""
                    time.sleep(0.2)
            finally:
                am.terminate()
                try:
                    _, errors = am.communicate(timeout=20)
                except subprocess.TimeoutExpired:
                    am.kill()
                    _, errors = am.communicate()
    assert httpserver.log, f"no Slack message: Alertmanager said {errors[-2000:]}"
    request, _ = httpserver.log[0]
    message = json.dumps(request.get_json())
    assert "KubePodCrashLooping" in message and "INC-1001" in message
