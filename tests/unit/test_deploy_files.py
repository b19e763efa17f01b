"""The deployment files configure the server with settings it accepts, on the port it listens on."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from server.settings import load_settings

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
