"""The deployment files configure the server with settings it accepts, on the port it listens on."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from server.settings import MetricsSettings, load_settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _manifests() -> list[dict[str, Any]]:
    return [
        doc for doc in yaml.safe_load_all((DEPLOY / "k8s" / "groundwire.yaml").read_text()) if doc
    ]


def test_configmap_settings_load_and_match_the_container_port(tmp_path: Path) -> None:
    by_kind = {doc["kind"]: doc for doc in _manifests()}
    config = tmp_path / "groundwire.toml"
    config.write_text(by_kind["ConfigMap"]["data"]["groundwire.toml"])
    settings = load_settings(config, env={})
    container = by_kind["StatefulSet"]["spec"]["template"]["spec"]["containers"][0]
    assert container["ports"][0]["containerPort"] == settings.server.port
    assert container["readinessProbe"]["grpc"]["port"] == settings.server.port
    assert by_kind["Service"]["spec"]["ports"][0]["port"] == settings.server.port
    mount = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mount["data"] == settings.storage.data_dir
    assert container["args"][:2] == ["--config", f"{mount['config']}/groundwire.toml"]


def test_dockerfile_environment_is_valid_settings() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    env = dict(re.findall(r"(GROUNDWIRE_\w+)=(\S+)", text))
    assert env, "the Dockerfile sets no GROUNDWIRE_* variables"
    settings = load_settings(env=env)
    assert settings.server.host == "0.0.0.0"
    assert "EXPOSE 50051" in text and settings.server.port == 50051


def test_metrics_port_tracing_endpoint_and_scrape_config_agree(tmp_path: Path) -> None:
    by_kind = {doc["kind"]: doc for doc in _manifests()}
    config = tmp_path / "groundwire.toml"
    config.write_text(by_kind["ConfigMap"]["data"]["groundwire.toml"])
    settings = load_settings(config, env={})
    assert settings.metrics.enabled and settings.metrics.host == "0.0.0.0"
    assert settings.logging.format.value == "json"
    pod = by_kind["StatefulSet"]["spec"]["template"]
    ports = {p["name"]: p["containerPort"] for p in pod["spec"]["containers"][0]["ports"]}
    assert ports["metrics"] == settings.metrics.port
    annotations = pod["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == settings.metrics.port
    service_ports = {p["name"]: p["port"] for p in by_kind["Service"]["spec"]["ports"]}
    assert service_ports["metrics"] == settings.metrics.port

    collector = [
        doc
        for doc in yaml.safe_load_all((DEPLOY / "k8s" / "otel-collector.yaml").read_text())
        if doc
    ]
    service = next(d for d in collector if d["kind"] == "Service")
    otlp_port = next(p["port"] for p in service["spec"]["ports"] if p["name"] == "otlp-grpc")
    name, namespace = service["metadata"]["name"], service["metadata"]["namespace"]
    assert settings.tracing.exporter.value == "otlp_grpc"
    assert settings.tracing.endpoint == f"http://{name}.{namespace}.svc.cluster.local:{otlp_port}"
    collector_config = yaml.safe_load(
        next(d for d in collector if d["kind"] == "ConfigMap")["data"]["config.yaml"]
    )
    grpc_receiver = collector_config["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"]
    assert grpc_receiver.endswith(f":{otlp_port}")
    assert collector_config["service"]["pipelines"]["traces"]["receivers"] == ["otlp"]

    scrape = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    jobs = {job["job_name"]: job for job in scrape["scrape_configs"]}
    namespaces = jobs["groundwire"]["kubernetes_sd_configs"][0]["namespaces"]["names"]
    assert by_kind["Namespace"]["metadata"]["name"] in namespaces
    local = jobs["groundwire-local"]["static_configs"][0]["targets"]
    assert local == [f"127.0.0.1:{MetricsSettings().port}"]


def test_dockerfile_turns_metrics_on_and_exposes_the_port() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    settings = load_settings(env=dict(re.findall(r"(GROUNDWIRE_\w+)=(\S+)", text)))
    assert settings.metrics.enabled and settings.metrics.host == "0.0.0.0"
    assert f"EXPOSE 50051 {settings.metrics.port}" in text
    assert settings.logging.format.value == "json"
