"""docker-compose.yml, checked by a parser (there is no Docker engine on this machine class)."""

import re

import yaml
from conftest import ROOT

from oncall_memory.settings import GROUPS, RankingWeights, Settings


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def known_variables() -> set[str]:
    names = set()
    for model in (Settings, RankingWeights, *(group for group, _ in GROUPS.values())):
        prefix = model.model_config["env_prefix"]
        for name, field in model.model_fields.items():
            names.add(f"{prefix}{name}".upper())
            alias = field.validation_alias
            for choice in getattr(alias, "choices", []) or []:
                names.add(str(choice).upper())
    return names


def test_services_images_ports_and_volumes():
    c = compose()
    services = c["services"]
    assert set(services) == {"qdrant", "prefect-server", "ingest", "enrich", "prometheus", "grafana"}
    assert services["qdrant"]["image"].startswith("qdrant/qdrant:")
    assert services["prefect-server"]["image"].startswith("prefecthq/prefect:3")
    assert "6333:6333" in services["qdrant"]["ports"] and "4200:4200" in services["prefect-server"]["ports"]
    assert "8080:8080" in services["enrich"]["ports"]
    assert services["ingest"]["build"] == "." and (ROOT / "Dockerfile").exists()
    assert services["ingest"]["command"][0] == "schedule" and services["enrich"]["command"][0] == "serve"
    declared = set(c["volumes"])
    for service in services.values():
        for mount in service.get("volumes", []):
            source = mount.split(":")[0]
            assert (ROOT / source).is_file() if source.startswith("./") else source in declared, mount
    assert "qdrant_storage:/qdrant/storage" in services["qdrant"]["volumes"]  # persistent
    for name, service in services.items():
        for dep in service.get("depends_on", {}):
            assert dep in services, (name, dep)


def test_app_services_talk_to_the_servers_and_only_set_known_settings():
    c = compose()
    known = known_variables()
    for name in ("ingest", "enrich"):
        env = c["services"][name]["environment"]
        assert env["QDRANT_URL"] == "http://qdrant:6333"
        assert env["PREFECT_API_URL"] == "http://prefect-server:4200/api"
        assert env["PREFECT_SERVER_ANALYTICS_ENABLED"] == "false"
        ours = {k for k in env if k.startswith("ONCALL_MEMORY_")}
        assert ours and ours <= known, ours - known
        for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "QDRANT_API_KEY"):
            assert key.upper() in known


def test_every_setting_the_compose_file_uses_is_in_the_readme():
    readme = "".join(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
    text = (ROOT / "docker-compose.yml").read_text()
    for var in sorted(set(re.findall(r"\b(ONCALL_MEMORY_[A-Z_]+)", text))):
        assert var in readme, f"{var} is set in docker-compose.yml but not documented in the README or docs/"


def test_prometheus_scrapes_only_what_it_can_reach_with_the_api_token():
    c = compose()
    services = c["services"]
    config = yaml.safe_load((ROOT / "monitoring" / "prometheus.yml").read_text())
    (job,) = config["scrape_configs"]
    (static,) = job["static_configs"]
    for target in static["targets"]:
        host, port = target.split(":")
        # a compose service that serves HTTP on that port, and whose app has the path scraped
        command = services[host]["command"]
        assert command[0] == "serve" and command[command.index("--port") + 1] == port, target
    from oncall_memory.service import create_app

    paths = {getattr(route, "path", None) for route in create_app(Settings(data_dir=":memory:")).routes}
    assert job["metrics_path"] in paths
    # the bearer token is the service's API token, handed over as a compose secret, never written down
    assert job["authorization"]["type"] == "Bearer"
    secret = job["authorization"]["credentials_file"].removeprefix("/run/secrets/")
    assert secret in services["prometheus"]["secrets"]
    assert c["secrets"][secret] == {"environment": "ONCALL_MEMORY_API_TOKEN"}
    assert services["enrich"]["environment"]["ONCALL_MEMORY_API_TOKEN"].startswith("${ONCALL_MEMORY_API_TOKEN:?")
    assert "./monitoring/prometheus.yml:/etc/prometheus/prometheus.yml:ro" in services["prometheus"]["volumes"]
    # Grafana gets the dashboard that sits next to the compose file, and Prometheus as its data source
    grafana = services["grafana"]["volumes"]
    assert "./grafana-dashboard.json:/var/lib/grafana/dashboards/oncall-memory.json:ro" in grafana
    datasource = yaml.safe_load((ROOT / "monitoring" / "grafana" / "datasource.yml").read_text())
    assert datasource["datasources"][0]["url"] == "http://prometheus:9090"
    assert all(not str(p).startswith(("9090", "3000")) for s in ("prometheus", "grafana") for p in services[s]["ports"])
