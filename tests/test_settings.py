"""Settings: grouped by integration in code, flat and unchanged in the environment."""

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
