"""The MCP server as an agent meets it, through the official SDK's own client (in process, over stdio, over
streamable HTTP and HTTP+SSE under the service): typed tools whose answers validate against their own
output schemas, errors that say why, annotations, filters, lookups by incident id, aggregated fixes,
feedback that moves the next lookup, and a note posted to a live PagerDuty incident."""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import version

import anyio
import httpx
import jsonschema
import pytest
from conftest import FIXTURES, ROOT, serving
from mcp import Client, StdioServerParameters
from pagerduty_fake import TOKEN, FakePagerDuty, pd_incident
from pydantic import SecretStr

from oncall_memory.cli import main
from oncall_memory.domain.alert import Alert, Filters
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.integrations.pagerduty import PagerDutyAPI
from oncall_memory.integrations.pagerduty.live import PagerDutyIncidents
from oncall_memory.mcp.server import build_server
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl

ALERT = "IPsec tunnel to card processor down"
NO_MATCH = "Office coffee machine is out of beans"  # nothing like it on record (the fake model marks it low)
LOOKUPS = {"similar_incidents", "similar_to_incident", "get_incident", "suggest_fixes"}
AWS_KEY = "AKIAZ7Q3WXJ5M2LKTR4P"


@pytest.fixture(scope="module")
def memory():
    memory = Memory.open(Settings(data_dir=":memory:"), embedder=FakeEmbedder())
    memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    yield memory
    memory.close()


def ask(server, calls):
    """Run `calls(client)` against `server` in process; returns what it returns."""

    async def run():
        async with Client(server) as client:
            return await calls(client)

    return anyio.run(run)


async def answer(client, tool: str, arguments: dict) -> dict:
    """A tool's structured answer, checked against the output schema the tool publishes."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    schema = next(t for t in (await client.list_tools()).tools if t.name == tool).output_schema
    jsonschema.validate(result.structured_content, schema)
    assert json.loads(result.content[0].text) == result.structured_content  # the text says the same
    return result.structured_content


async def refusal(client, tool: str, arguments: dict) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    return result.content[0].text


# -- what the agent is told --------------------------------------------------------------------------


def test_the_tools_are_typed_annotated_and_the_server_says_its_version(memory):
    async def calls(client):
        return (await client.list_tools()).tools, client.server_info

    tools, info = ask(build_server(memory), calls)
    by_name = {t.name: t for t in tools}
    assert set(by_name) == LOOKUPS | {"record_feedback"}  # no PagerDuty configured: no note tool
    assert info.name == "oncall-memory" and info.version == version("oncall-memory")
    for tool in tools:
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        assert tool.input_schema["additionalProperties"] is False, tool.name
        assert tool.output_schema.get("additionalProperties") is not True and tool.output_schema["properties"]
        assert tool.description and tool.annotations is not None
    for name in LOOKUPS:
        assert by_name[name].annotations.read_only_hint is True, name
    feedback = by_name["record_feedback"].annotations
    assert feedback.read_only_hint is False and feedback.destructive_hint is False and feedback.idempotent_hint
    answer_schema = by_name["similar_incidents"].output_schema
    incident = answer_schema["$defs"]["PastIncident"]["properties"]
    assert {"id", "title", "confidence", "similarity", "fixes", "reasons", "url"} <= set(incident)
    assert {"confidence", "nothing_close", "incidents"} <= set(answer_schema["properties"])
    text = by_name["similar_incidents"].input_schema["properties"]["text"]
    assert text["minLength"] == 1 and text["maxLength"] == 20_000


def test_the_stats_resource_says_what_the_memory_holds_and_not_where(memory):
    async def calls(client):
        return json.loads((await client.read_resource("oncall-memory://stats")).contents[0].text)

    stats = ask(build_server(memory), calls)
    assert stats["count"] == 64 and stats["dimension"] == FakeEmbedder().dimension
    assert "path" not in stats and not any("/" in str(v) for v in stats.values())


# -- answers -------------------------------------------------------------------------------------------


def test_similar_incidents_is_the_cli_answer_with_how_sure_it_is(memory):
    expected = memory.similar(Alert(text=ALERT), limit=5)
    got = ask(build_server(memory), lambda c: answer(c, "similar_incidents", {"text": ALERT}))
    assert [n["id"] for n in got["incidents"]] == [n.id for n in expected.neighbours]
    first, best = got["incidents"][0], expected.neighbours[0]
    assert first["confidence"] == best.confidence and first["reasons"] == best.reasons
    assert first["fixes_worked"] == best.fixes_worked and [f["action"] for f in first["fixes"]] == [
        f.action for f in best.fixes
    ]
    assert got["confidence"] == expected.confidence == "high" and got["nothing_close"] is False


def test_a_weak_match_is_answered_as_nothing_close(memory):
    got = ask(build_server(memory), lambda c: answer(c, "similar_incidents", {"text": NO_MATCH}))
    assert got["nothing_close"] is True and got["confidence"] == "low"
    assert got["incidents"] and all(n["confidence"] == "low" for n in got["incidents"])
    assert "nothing close" in got["note"]
    fixes = ask(build_server(memory), lambda c: answer(c, "suggest_fixes", {"text": NO_MATCH}))
    assert fixes["nothing_close"] is True and fixes["fixes"] == []  # a weak match's fixes are not suggested


def test_filters_keep_to_the_service_env_status_and_time_asked_for(memory):
    async def calls(client):
        a = await answer(client, "similar_incidents", {"text": ALERT, "only_service": "checkout", "limit": 20})
        b = await answer(client, "similar_incidents", {"text": ALERT, "since": "2026-01-01", "limit": 20})
        return a, b

    by_service, since = ask(build_server(memory), calls)
    assert by_service["incidents"] and {n["service"] for n in by_service["incidents"]} == {"checkout"}
    want = memory.similar(Alert(text=ALERT), filters=Filters(service="checkout"), limit=20)
    assert [n["id"] for n in by_service["incidents"]] == [n.id for n in want.neighbours]
    assert since["incidents"]
    for n in since["incidents"]:
        assert memory.incident(n["id"])["opened_at"] >= "2026-01-01"


def test_similar_to_a_stored_incident_leaves_it_out_and_is_as_sure_as_the_rest(memory):
    got = ask(build_server(memory), lambda c: answer(c, "similar_to_incident", {"incident_id": "INC-1001"}))
    ids = [n["id"] for n in got["incidents"]]
    assert ids and "INC-1001" not in ids
    levels = [n["confidence"] for n in got["incidents"]]
    # The incident itself was the sure match; the answer is as sure as the best of the others.
    assert got["confidence"] == min(levels, key=["high", "medium", "low"].index)


def test_get_incident_gives_the_whole_record_and_its_neighbours(memory):
    got = ask(build_server(memory), lambda c: answer(c, "get_incident", {"incident_id": "INC-1025"}))
    assert got["id"] == "INC-1025" and got["root_cause"] and got["fixes"]
    assert all(f["action"] and f["outcome"] for f in got["fixes"])
    assert got["similar"] and all(s["id"] != "INC-1025" for s in got["similar"])
    assert "text_hash" not in got


def test_suggest_fixes_gathers_what_worked_across_the_close_matches(memory):
    got = ask(build_server(memory), lambda c: answer(c, "suggest_fixes", {"text": ALERT}))
    lookup = memory.similar(Alert(text=ALERT), limit=5)
    close = {n.id: n for n in lookup.neighbours if n.confidence != "low"}
    assert got["fixes"]
    for fix in got["fixes"]:
        assert fix["worked_in"] and all(fix["action"] in close[i].fixes_worked for i in fix["worked_in"])
    counts = [len(f["worked_in"]) for f in got["fixes"]]
    assert counts == sorted(counts, reverse=True)  # the fix that worked most often first


# -- errors an agent can act on ------------------------------------------------------------------------


def test_errors_say_why_without_echoing_what_was_sent(memory):
    big = "disk full " * 200_000  # 2 MB

    async def calls(client):
        return [
            await refusal(client, "get_incident", {"incident_id": "INC-9999"}),
            await refusal(client, "similar_incidents", {"text": ""}),
            await refusal(client, "similar_incidents", {"text": ALERT, "lmit": 3}),
            await refusal(client, "similar_incidents", {"text": big}),
            await refusal(client, "similar_incidents", {"text": ALERT, "limit": 500}),
            await refusal(client, "similar_to_incident", {"incident_id": f"INC-{AWS_KEY}"}),
            await refusal(client, "similar_incidents", {"text": ALERT, "since": "last tuesday"}),
        ]

    unknown, empty, typo, huge, limit, secret, since = ask(build_server(memory), calls)
    assert "no incident 'INC-9999'" in unknown and "similar_incidents" in unknown
    assert "text" in empty and "at least 1 character" in empty
    assert "lmit is not an argument (it takes: " in typo and "limit" in typo
    for said in (empty, typo, huge, limit, since):  # plain words: no pydantic report, its links or model names
        assert "pydantic" not in said and "validation error" not in said and "Arguments" not in said, said
    assert "at most 20000 characters" in huge and len(huge) < 1000  # named, not echoed
    assert "limit" in limit and "less than or equal to 20" in limit
    assert AWS_KEY not in secret and "no incident" in secret
    assert "since" in since and "last tuesday" not in since


def test_feedback_about_an_incident_not_on_record_is_refused_and_records_nothing(memory, tmp_path):
    with Memory.open(Settings(data_dir=tmp_path / "data"), embedder=FakeEmbedder()) as mem:
        mem.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        args = {"alert_text": ALERT, "suggested": "INC-9999", "verdict": "helped"}
        text = ask(build_server(mem), lambda c: refusal(c, "record_feedback", args))
        assert "no incident 'INC-9999'" in text
        assert mem.feedback.all() == []


def test_feedback_from_an_agent_moves_the_next_lookup(tmp_path):
    with Memory.open(Settings(data_dir=tmp_path / "data"), embedder=FakeEmbedder()) as mem:
        mem.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        before = mem.similar(Alert(text=ALERT)).neighbours[0]
        args = {"alert_text": ALERT, "suggested": before.id, "verdict": "not related", "who": "holmes"}

        async def calls(client):
            return await answer(client, "record_feedback", args), await answer(client, "record_feedback", args)

        first, again = ask(build_server(mem), calls)
        assert first == {"recorded": True, "suggested": before.id, "verdict": "not related"}
        assert again["recorded"] is False  # idempotent: the same verdict twice counts once
        after = next(n for n in mem.similar(Alert(text=ALERT)).neighbours if n.id == before.id)
        assert "marked not related once for similar alerts" in after.reasons
        assert after.score == pytest.approx(before.score - Settings().weights.feedback_not_related, abs=1e-4)


# -- PagerDuty: the live incident ----------------------------------------------------------------------


@pytest.fixture
def pagerduty(httpserver):
    fake = FakePagerDuty(incidents=[pd_incident(1, title="IPsec tunnel to card processor down")]).install(httpserver)
    client = PagerDutyAPI(
        SecretStr(TOKEN), base_url=httpserver.url_for("").rstrip("/"), from_email="memory@example.com", backoff=0.01
    )
    yield fake, client
    client.close()


def test_similar_to_a_live_pagerduty_incident(memory, pagerduty):
    fake, client = pagerduty
    got = ask(
        build_server(memory, live=PagerDutyIncidents(client)),
        lambda c: answer(c, "similar_to_incident", {"incident_id": "P00001"}),
    )
    assert "ipsec" in got["incidents"][0]["title"].lower()
    text = ask(
        build_server(memory, live=PagerDutyIncidents(client)),
        lambda c: refusal(c, "similar_to_incident", {"incident_id": "P99999"}),
    )
    assert "PagerDuty could not give incident P99999" in text and "404" in text


def test_a_finding_is_posted_to_the_live_incident_redacted(memory, pagerduty):
    fake, client = pagerduty
    note = f"Looks like INC-1025 (peer IP rotated). Key seen in the logs: {AWS_KEY}"

    async def calls(client_):
        tools = {t.name: t for t in (await client_.list_tools()).tools}
        assert tools["post_note_to_incident"].annotations.read_only_hint is False
        posted = await answer(client_, "post_note_to_incident", {"incident_id": "P00001", "note": note})
        refused = await refusal(client_, "post_note_to_incident", {"incident_id": "inc 1; rm", "note": "x"})
        return posted, refused

    posted, refused = ask(build_server(memory, live=PagerDutyIncidents(client)), calls)
    assert posted == {"incident": "P00001", "posted": True}
    (stored,) = fake.posted_notes("P00001")
    assert "INC-1025" in stored["content"] and AWS_KEY not in stored["content"]
    assert "incident_id" in refused


def test_the_live_incidents_come_through_the_integrations_hook_when_pagerduty_can_post(memory, tmp_path):
    """The agents' door finds a pager's live incidents through the hook an integration offers: PagerDuty's
    once its REST key and From address are set, and nothing without them (the memory's own tools only)."""
    from oncall_memory.integrations.offers import live_incidents

    assert live_incidents(Settings(data_dir=tmp_path, pagerduty_token="k")) is None  # no From: address
    live = live_incidents(Settings(data_dir=tmp_path, pagerduty_token="k", pagerduty_from_email="m@example.com"))
    assert isinstance(live, PagerDutyIncidents) and live.name == "PagerDuty"

    async def calls(client):
        return {t.name: t for t in (await client.list_tools()).tools}

    try:
        offered, alone = ask(build_server(memory, live=live), calls), ask(build_server(memory), calls)
    finally:
        live.close()
    assert "post_note_to_incident" in offered and "post_note_to_incident" not in alone
    assert "live PagerDuty incident" in offered["similar_to_incident"].description
    assert "PagerDuty" not in alone["similar_to_incident"].description
    assert offered["post_note_to_incident"].input_schema["properties"]["incident_id"]["pattern"] == live.id_pattern


def test_a_note_pagerduty_refuses_is_an_error_with_the_reason(memory, pagerduty):
    fake, client = pagerduty
    fake.note_failures = ["400"]
    args = {"incident_id": "P00001", "note": "finding"}
    text = ask(
        build_server(memory, live=PagerDutyIncidents(client)), lambda c: refusal(c, "post_note_to_incident", args)
    )
    assert "PagerDuty refused the note on P00001 (HTTP 400)" in text


# -- transports ----------------------------------------------------------------------------------------


def test_the_mcp_server_over_stdio(tmp_path, monkeypatch):
    data = tmp_path / "data"
    monkeypatch.setenv("ONCALL_MEMORY_DATA_DIR", str(data))
    assert main(["ingest", str(FIXTURES / "incidents.jsonl")]) == 0
    env = {**os.environ, "ONCALL_MEMORY_DATA_DIR": str(data), "ONCALL_MEMORY_EMBEDDER": "fake"}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "oncall_memory.cli", "mcp"], env=env, cwd=str(ROOT)
    )
    got = ask(params, lambda c: answer(c, "similar_incidents", {"text": ALERT, "limit": 3}))
    assert len(got["incidents"]) == 3 and "ipsec" in got["incidents"][0]["title"].lower()


def test_the_mcp_server_over_http_and_sse_under_the_service_needs_the_token(tmp_path):
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client

    settings = Settings(data_dir=tmp_path / "data", embedder="fake", api_token=SecretStr("agent-token"))
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        with serving(create_app(settings, memory=memory)) as base:
            assert httpx.post(f"{base}/mcp", json={}, timeout=10).status_code == 401
            assert httpx.get(f"{base}/mcp/sse", timeout=10).status_code == 401
            assert httpx.post(f"{base}/mcp/messages/?session_id=x", json={}, timeout=10).status_code == 401
            bearer = {"Authorization": "Bearer agent-token"}

            async def streamable():
                import httpx2

                async with httpx2.AsyncClient(headers=bearer, timeout=30) as http:
                    async with Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
                        return await answer(client, "similar_incidents", {"text": ALERT, "limit": 2})

            async def sse():
                async with Client(sse_client(f"{base}/mcp/sse", headers=bearer, timeout=30)) as client:
                    return await answer(client, "similar_incidents", {"text": ALERT, "limit": 2})

            for transport in (streamable, sse):
                got = anyio.run(transport)
                assert len(got["incidents"]) == 2 and "ipsec" in got["incidents"][0]["title"].lower(), transport


def test_mcp_on_stdio_relays_to_a_running_service_that_holds_the_memory(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", embedder="fake", api_token=SecretStr("agent-token"))
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        with serving(create_app(settings, memory=memory)) as base:
            env = {
                **os.environ,
                "ONCALL_MEMORY_DATA_DIR": str(tmp_path / "data"),  # held by the service: not openable here
                "ONCALL_MEMORY_EMBEDDER": "fake",
                "ONCALL_MEMORY_URL": base,
                "ONCALL_MEMORY_API_TOKEN": "agent-token",
            }
            params = StdioServerParameters(
                command=sys.executable, args=["-m", "oncall_memory.cli", "mcp"], env=env, cwd=str(ROOT)
            )

            async def calls(client):
                names = {t.name for t in (await client.list_tools()).tools}
                got = await answer(client, "similar_incidents", {"text": ALERT, "limit": 2})
                refused = await refusal(client, "similar_incidents", {"text": ALERT, "lmit": 2})
                return names, got, refused

            names, got, refused = ask(params, calls)
    assert {"similar_incidents", "get_incident", "record_feedback"} <= names
    assert len(got["incidents"]) == 2 and "ipsec" in got["incidents"][0]["title"].lower()
    assert "lmit is not an argument" in refused


def test_an_agent_can_give_the_alerts_generator_url_and_its_metrics_are_searched(memory):
    from urllib.parse import quote_plus

    expr = "sum(rate(container_cpu_cfs_throttled_periods_total[5m])) / sum(rate(container_cpu_cfs_periods_total[5m])) > 0.25"
    link = f"http://prometheus-k8s.monitoring:9090/graph?g0.expr={quote_plus(expr)}&g0.tab=1"
    text = "Processes experience elevated waiting"
    got = ask(build_server(memory), lambda c: answer(c, "similar_incidents", {"text": text, "generator_url": link}))
    expected = memory.similar(
        Alert(text=text, metrics=["container_cpu_cfs_throttled_periods_total", "container_cpu_cfs_periods_total"])
    )
    assert [n["id"] for n in got["incidents"]] == [n.id for n in expected.neighbours]
    assert "INC-1060" in [n["id"] for n in got["incidents"]]  # the incident that names the metric
    plain = ask(build_server(memory), lambda c: answer(c, "similar_incidents", {"text": text}))
    assert "INC-1060" not in [n["id"] for n in plain["incidents"]]
