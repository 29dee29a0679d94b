"""Settings: grouped by integration in code, flat and unchanged in the environment."""

import json

import pytest
from pydantic import SecretStr

from oncall_memory.settings import GROUPS, Settings


def test_the_environment_keeps_its_flat_names(monkeypatch, tmp_path):
    monkeypatch.setenv("ONCALL_MEMORY_PAGERDUTY_TOKEN", "pd-token")
    monkeypatch.setenv("ONCALL_MEMORY_SLACK_CHANNEL", "C0123")
    monkeypatch.setenv("ONCALL_MEMORY_PORT", "9090")
    monkeypatch.setenv("ONCALL_MEMORY_POST_TIMEOUT", "2.5")
    monkeypatch.setenv("ONCALL_MEMORY_INGEST_INTERVAL", "60")
    settings = Settings(data_dir=tmp_path)
    assert settings.pagerduty.token is not None and settings.pagerduty.token.get_secret_value() == "pd-token"
    assert settings.slack.channel == "C0123"
    assert settings.service.port == 9090
    assert settings.deliveries.post_timeout == 2.5
    assert settings.schedule.ingest_interval == 60


def test_flat_keywords_fill_their_group_and_the_rest_still_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ONCALL_MEMORY_PAGERDUTY_FROM_EMAIL", "oncall@example.com")
    settings = Settings(data_dir=tmp_path, pagerduty_token=SecretStr("x"), host="0.0.0.0")
    assert settings.pagerduty.token is not None and settings.pagerduty.token.get_secret_value() == "x"
    assert settings.pagerduty.from_email == "oncall@example.com"
    assert settings.service.host == "0.0.0.0"


def test_replace_changes_one_setting_and_leaves_the_original(tmp_path):
    settings = Settings(data_dir=tmp_path)
    changed = settings.replace(slack_channel="C9", post_timeout=0.5, candidates=7)
    assert (changed.slack.channel, changed.deliveries.post_timeout, changed.candidates) == ("C9", 0.5, 7)
    assert settings.slack.channel is None and settings.deliveries.post_timeout == 10.0
    with pytest.raises(ValueError, match="no setting 'slack_chanel'"):
        settings.replace(slack_chanel="C9")


def test_model_copy_refuses_a_groups_flat_name_instead_of_ignoring_it(tmp_path):
    settings = Settings(data_dir=tmp_path)
    with pytest.raises(ValueError, match="pagerduty_token"):
        settings.model_copy(update={"pagerduty_token": SecretStr("x")})
    assert settings.model_copy(update={"candidates": 3}).candidates == 3


def test_no_two_groups_claim_the_same_flat_name():
    seen: dict[str, str] = {}
    for group, (model, prefix) in GROUPS.items():
        for field in model.model_fields:
            name = prefix + field
            assert name not in seen, f"{name} is in {seen.get(name)} and {group}"
            assert name not in Settings.model_fields
            seen[name] = group


def test_a_blank_secret_in_a_group_is_unset(monkeypatch, tmp_path):
    monkeypatch.setenv("ONCALL_MEMORY_SLACK_SIGNING_SECRET", "  ")
    assert Settings(data_dir=tmp_path).slack.signing_secret is None


# -- settings as people type them (issue 52) -----------------------------------------------------------------


def _list_settings():
    """Every list setting of every settings model, as (variable, model, field)."""
    from oncall_memory.env_values import _shape
    from oncall_memory.settings import GROUPS, RankingWeights

    for model in (Settings, RankingWeights, *(m for m, _ in GROUPS.values())):
        prefix = model.model_config["env_prefix"]
        for name, field in model.model_fields.items():
            if _shape(field.annotation) is list:
                yield f"{prefix}{name}".upper(), model, name


def test_every_list_setting_takes_a_comma_list_and_json(monkeypatch):
    found = list(_list_settings())
    assert {v for v, _, _ in found} >= {"ONCALL_MEMORY_PAGERDUTY_SERVICE_IDS", "ONCALL_MEMORY_EMBED_RETRY_DELAYS"}
    for variable, model, name in found:
        for typed in ("5, 30", '["5", "30"]', "5"):
            monkeypatch.setenv(variable, typed)
            got = getattr(model(), name)
            assert [str(v).removesuffix(".0") for v in got] == (["5", "30"] if "30" in typed else ["5"]), variable
        monkeypatch.delenv(variable)


def test_the_label_mapping_takes_json_or_fact_equals_labels(monkeypatch):
    monkeypatch.setenv("ONCALL_MEMORY_LABEL_FACTS_MODE", "replace")
    monkeypatch.setenv("ONCALL_MEMORY_LABEL_FACTS", "service=app,container; env=cluster")
    assert Settings().service.label_facts == {"service": ["app", "container"], "env": ["cluster"]}
    monkeypatch.setenv("ONCALL_MEMORY_LABEL_FACTS", '{"service": ["app"]}')
    assert Settings().service.label_facts == {"service": ["app"]}


def test_a_partial_label_mapping_adds_to_the_defaults(monkeypatch):
    """Issue 84: `{"service": ["app_name"]}` replaced the whole mapping, and no env, flavor or component was
    then read from any label. Now the labels given are tried first, the defaults after, the other facts kept."""
    from oncall_memory.domain.label_facts import LABEL_FACTS

    monkeypatch.setenv("ONCALL_MEMORY_LABEL_FACTS", '{"service": ["app_name"]}')
    facts = Settings().service.label_facts
    assert facts["service"] == ["app_name", *LABEL_FACTS["service"]]
    assert {k: v for k, v in facts.items() if k != "service"} == {
        k: v for k, v in LABEL_FACTS.items() if k != "service"
    }


@pytest.mark.parametrize(
    "variable, value, said",
    [
        # a misspelt fact name: refused, naming the facts there are
        ("ONCALL_MEMORY_LABEL_FACTS", '{"servce": ["app"]}', "'servce' is not a fact labels give: name service, env"),
        # broken JSON: refused, not taken as the one id `["P123"`
        ("ONCALL_MEMORY_PAGERDUTY_SERVICE_IDS", '["P123",', "it starts as JSON but is not JSON"),
        ("ONCALL_MEMORY_PAGERDUTY_SERVICE_IDS", '{"id": "P123"}', "an object in JSON where a list goes"),
        ("ONCALL_MEMORY_EMBED_RETRY_DELAYS", "[5,30", "it starts as JSON but is not JSON"),
    ],
)
def test_a_setting_that_would_be_silently_wrong_is_refused_in_one_line(monkeypatch, capsys, variable, value, said):
    from oncall_memory.cli import main

    monkeypatch.setenv(variable, value)
    assert main(["stats"]) == 2
    printed = capsys.readouterr().err.strip()
    assert printed.startswith(f"oncall-memory: configuration: {variable}: ") and "\n" not in printed, printed
    assert said in printed
    assert "give" in printed  # and what to give
    if "LIST" in variable or "IDS" in variable or "DELAYS" in variable:
        assert "a JSON list" in printed and "commas or spaces" in printed


def test_a_list_separated_by_spaces_is_a_list(monkeypatch):
    monkeypatch.setenv("ONCALL_MEMORY_PAGERDUTY_SERVICE_IDS", "P123 P456")
    assert Settings().pagerduty.service_ids == ["P123", "P456"]


def test_config_says_each_setting_in_effect_where_it_came_from_and_hides_secrets(monkeypatch, capsys):
    from oncall_memory.cli import main

    monkeypatch.setenv("ONCALL_MEMORY_PAGERDUTY_TOKEN", "pd-token-1234567890")
    monkeypatch.setenv("ONCALL_MEMORY_QDRANT_URL", "https://user:hunter22@qdrant.example:6333")
    monkeypatch.setenv("ONCALL_MEMORY_PORT", "9000")
    assert main(["config", "--json"]) == 0
    out = capsys.readouterr().out
    rows = {r["variable"]: r for r in json.loads(out)}
    assert rows["ONCALL_MEMORY_PORT"] == {"variable": "ONCALL_MEMORY_PORT", "value": 9000, "source": "environment"}
    assert rows["ONCALL_MEMORY_HOST"]["source"] == "default"
    assert rows["ONCALL_MEMORY_PAGERDUTY_TOKEN"]["value"] == "(set, hidden)"
    assert rows["ONCALL_MEMORY_QDRANT_URL"]["value"] == "https://qdrant.example:6333"
    assert "pd-token" not in out and "hunter22" not in out
    # every variable docs/operations.md lists for a setting is there
    assert {"ONCALL_MEMORY_WEIGHT_SAME_SERVICE", "ONCALL_MEMORY_LABEL_FACTS", "ONCALL_MEMORY_SLACK_WEBHOOK_URL"} <= set(
        rows
    )
    assert main(["config", "--changed"]) == 0
    changed = capsys.readouterr().out
    assert "ONCALL_MEMORY_PORT" in changed and "ONCALL_MEMORY_HOST" not in changed


@pytest.mark.parametrize(
    "variable, value, said",
    [
        ("ONCALL_MEMORY_LABEL_FACTS", "service", "ONCALL_MEMORY_LABEL_FACTS: give JSON"),
        ("ONCALL_MEMORY_WEIGHT_SAME_SERVICE", "x", "ONCALL_MEMORY_WEIGHT_SAME_SERVICE: Input should be a valid number"),
        ("ONCALL_MEMORY_EMBED_RETRY_DELAYS", "5,x", "ONCALL_MEMORY_EMBED_RETRY_DELAYS: Input should be a valid number"),
        ("ONCALL_MEMORY_PAGERDUTY_REQUESTS_PER_MINUTE", "5000", "ONCALL_MEMORY_PAGERDUTY_REQUESTS_PER_MINUTE: Input"),
        ("ONCALL_MEMORY_PORT", "abc", "ONCALL_MEMORY_PORT: Input should be a valid integer"),
    ],
)
def test_a_setting_typed_wrong_is_one_line_naming_its_variable(monkeypatch, capsys, variable, value, said):
    from oncall_memory.cli import main

    monkeypatch.setenv(variable, value)
    assert main(["stats"]) == 2
    printed = capsys.readouterr().err.strip()
    assert printed.startswith(f"oncall-memory: configuration: {said}") and "\n" not in printed, printed


def test_a_scheduled_window_reaches_back_as_far_as_the_sources_settings_group_asks(tmp_path):
    """A scheduled run of PagerDuty reads at least `refresh_days` back (late notes arrive); a source whose
    group has no `refresh_days` (a file) reads the window it was given. Found from the group, not the name."""
    from oncall_memory.sources import scheduled_window

    def days(window):
        return (window.until - window.since).total_seconds() / 86400

    settings = Settings(data_dir=tmp_path, pagerduty_refresh_days=30)
    assert days(scheduled_window("pagerduty", 1, settings)) == pytest.approx(30)
    assert days(scheduled_window("pagerduty", 90, settings)) == pytest.approx(90)
    assert days(scheduled_window("jsonl", 1, settings)) == pytest.approx(1)
    assert days(scheduled_window("jira", 2, settings)) == pytest.approx(2)
    assert scheduled_window("pagerduty", None, settings) is None
    assert settings.group("pagerduty") is settings.pagerduty and settings.group("nothing") is None


def test_settings_made_by_model_validate_have_every_integrations_group_too(monkeypatch, tmp_path):
    """The integrations' groups are merged in `Settings.__init__`; `Settings.model_validate` goes through it
    too (pydantic calls a model's own `__init__`), so a Settings made either way has every group, read from
    the environment, and its secrets are found for masking."""
    monkeypatch.setenv("ONCALL_MEMORY_PAGERDUTY_TOKEN", "pd-token")
    settings = Settings.model_validate({"data_dir": str(tmp_path)})
    assert settings.pagerduty.token.get_secret_value() == "pd-token"
    assert settings.slack.channel is None
    assert "pd-token" in settings.secrets()
    with pytest.raises(AttributeError):
        settings.no_such_group  # noqa: B018 - the attribute access is the test
