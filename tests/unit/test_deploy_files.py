"""The deployment files configure the server with settings it accepts, on the port it listens on."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from server.api_keys import KeyRing
from server.cli import _parser
from server.settings import (
    MetricsSettings,
    ServerSettings,
    Settings,
    load_settings,
)
from tests.unit.deploy_manifests import (
    DEPLOY,
    DOCKERFILES,
    K8S,
    REPO,
    Obj,
    env_var_names,
    pod_specs,
    render,
    yaml_files,
)
from tests.unit.deploy_manifests import (
    documents as yaml_documents,
)

MODES = ("embedded", "milvus", "milvus-gpu")
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


def _objects(mode: str) -> dict[tuple[str, str], Obj]:
    return {(o["kind"], o["metadata"]["name"]): o for o in render(K8S / mode)}


def _groundwire_pod(mode: str) -> tuple[Obj, Obj]:
    """(workload, pod spec) of the groundwire server in `mode`."""
    objects = render(K8S / mode)
    (found,) = [(w, p) for w, p in pod_specs(objects) if w["metadata"]["name"] == "groundwire"]
    return found


def _mode_settings(mode: str, tmp_path: Path) -> tuple[Settings, dict[str, Any]]:
    """The mode's ConfigMap TOML and its containers' literal GROUNDWIRE_* env, as Settings."""
    config_map = _objects(mode)[("ConfigMap", "groundwire-config")]
    raw = tomllib.loads(config_map["data"]["groundwire.toml"])
    config = tmp_path / "groundwire.toml"
    config.write_text(_toml(raw))
    _, pod = _groundwire_pod(mode)
    env = {e["name"]: e["value"] for e in pod["containers"][0].get("env", []) if "value" in e}
    return load_settings(config, env=env), tomllib.loads(config_map["data"]["groundwire.toml"])


def _toml(raw: dict[str, Any]) -> str:
    """TOML for a table of tables of scalars (JSON strings are TOML basic strings)."""
    lines = []
    for section, values in raw.items():
        lines.append(f"[{section}]")
        for key, value in values.items():
            lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("mode", MODES)
def test_configmap_settings_load_and_match_the_ports_and_mounts(mode: str, tmp_path: Path) -> None:
    settings, raw = _mode_settings(mode, tmp_path)
    assert settings.server.port == ServerSettings().port  # the port clients expect
    workload, pod = _groundwire_pod(mode)
    container = pod["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports["grpc"] == settings.server.port
    probes = [container[p] for p in ("startupProbe", "readinessProbe", "livenessProbe")]
    for probe in probes:
        if "grpc" in probe:
            assert probe["grpc"]["port"] == settings.server.port
        else:
            assert probe["tcpSocket"]["port"] == "grpc"
    assert "grpc" in container["readinessProbe"]
    service = _objects(mode)[("Service", "groundwire")]
    assert service["spec"]["clusterIP"] == "None"  # headless: clients balance over the pods
    service_ports = {p["name"]: p for p in service["spec"]["ports"]}
    assert service_ports["grpc"]["port"] == settings.server.port
    mount = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    data_volume = "data" if mode == "embedded" else "scratch"
    assert mount[data_volume] == settings.storage.data_dir
    assert container["args"] == ["--config", f"{mount['config']}/groundwire.toml", "serve"]
    assert _parser().parse_args(container["args"]).command == "serve"
    assert raw["storage"].get("backend", "local") == ("local" if mode == "embedded" else "milvus")


@pytest.mark.parametrize("mode", ("milvus", "milvus-gpu"))
def test_milvus_mode_is_stateless_authenticated_and_health_probed(
    mode: str, tmp_path: Path
) -> None:
    settings, raw = _mode_settings(mode, tmp_path)
    workload, pod = _groundwire_pod(mode)
    assert workload["kind"] == "Deployment" and "volumeClaimTemplates" not in workload["spec"]
    assert all("persistentVolumeClaim" not in v for v in pod["volumes"])
    container = pod["containers"][0]
    assert all("grpc" in container[p] for p in ("readinessProbe", "livenessProbe", "startupProbe"))
    assert raw["storage"]["milvus_uri"].startswith(("http://", "https://"))
    # the token comes from a Secret, never from the ConfigMap
    assert "milvus_token" not in raw["storage"]
    token = next(e for e in container["env"] if e["name"] == "GROUNDWIRE_STORAGE__MILVUS_TOKEN")
    assert token["valueFrom"]["secretKeyRef"]["name"] == "groundwire-milvus"
    # the keys file is the key of the mounted Secret, and its placeholder fails closed
    assert settings.auth.required
    keys_path = Path(settings.auth.keys_file)
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volume = next(v for v in pod["volumes"] if v["name"] == mounts[str(keys_path.parent)])
    secret = _objects(mode)[("Secret", volume["secret"]["secretName"])]
    placeholder = tmp_path / "keys.toml"
    placeholder.write_text(secret["stringData"][keys_path.name])
    message = f"keys file {placeholder} has no [[keys]] entries; add one with `groundwire keygen`"
    with pytest.raises(Exception, match=re.escape(message)):
        KeyRing.load(placeholder)
    requests = container["resources"]["requests"]
    assert requests["cpu"] and requests["memory"]  # the HPA's utilization is relative to these


def test_every_groundwire_variable_names_a_setting() -> None:
    files = [*yaml_files(), *(DEPLOY / name for name in DOCKERFILES), DEPLOY / "README.md"]
    names = set().union(*(env_var_names(path.read_text()) for path in files))
    assert "GROUNDWIRE_STORAGE__MILVUS_TOKEN" in names
    sections = {f.name: f.type for f in dataclasses.fields(Settings)}
    for name in sorted(names - {"GROUNDWIRE_CONFIG"}):
        section, _, key = name.removeprefix("GROUNDWIRE_").lower().partition("__")
        assert section in sections, f"{name}: no settings section {section}"
        if not key:
            continue
        known = {f.name for f in dataclasses.fields(getattr(Settings(), section))}
        assert key in known, f"{name}: {section} has no setting {key}"


def _dockerfile(name: str) -> str:
    return (DEPLOY / name).read_text()


def _dockerfile_env(name: str) -> dict[str, str]:
    return dict(re.findall(r"(GROUNDWIRE_\w+)=(\S+)", _dockerfile(name)))


@pytest.mark.parametrize("name", DOCKERFILES)
def test_dockerfile_environment_is_valid_settings(name: str) -> None:
    text = _dockerfile(name)
    settings = load_settings(env=_dockerfile_env(name))
    assert settings.server.host == "0.0.0.0"
    assert f"EXPOSE {settings.server.port} {settings.metrics.port}" in text
    assert settings.server.port == 50051
    assert settings.metrics.enabled and settings.metrics.host == "0.0.0.0"
    assert settings.logging.format.value == "json"
    assert f'VOLUME ["{settings.storage.data_dir}"]' in text


@pytest.mark.parametrize("name", DOCKERFILES)
def test_dockerfile_copies_existing_paths_and_runs_the_cli(name: str) -> None:
    text = _dockerfile(name)
    copies = re.findall(r"^COPY (.+) (\S+)$", text, flags=re.MULTILINE)
    sources = {source for group, _ in copies for source in group.split()}
    for source in sources:
        assert (REPO / source).exists(), f"{name}: COPY {source} does not exist"
    # what `pip install .` packages, plus the runtime files the server reads (prompts/)
    assert {
        "pyproject.toml",
        "README.md",
        "core",
        "server",
        "clients",
        "proto",
        "prompts",
    } <= sources
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert 'ENTRYPOINT ["groundwire"]' in text and scripts["groundwire"] == "server.cli:main"
    (cmd,) = re.findall(r"^CMD (\[.*\])$", text, flags=re.MULTILINE)
    assert _parser().parse_args(yaml.safe_load(cmd)).command == "serve"
    assert 'pip install --no-cache-dir ".[milvus]"' in text  # one image serves both modes
    assert "useradd --system --uid 10001" in text and "USER groundwire" in text
    assert "STOPSIGNAL SIGTERM" in text


def test_cpu_image_installs_the_pinned_torch_from_the_cpu_index() -> None:
    text = _dockerfile("Dockerfile")
    assert "ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu" in text
    assert '--index-url "$TORCH_INDEX_URL" "$(python deploy/pinned_torch.py)"' in text
    dependencies = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    # what the build step prints, run the way the Dockerfile runs it (from the build directory)
    printed = subprocess.run(
        [sys.executable, "deploy/pinned_torch.py"], cwd=REPO, capture_output=True, text=True
    )
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.strip() in dependencies and printed.stdout.startswith("torch==")
    # the CPU wheels go in before the project, so pip keeps them
    assert text.index("$TORCH_INDEX_URL") < text.index('".[milvus]"')


def test_cuda_image_uses_an_nvidia_cuda_base_and_pypi_torch() -> None:
    text = _dockerfile("Dockerfile.cuda")
    assert re.search(r"^ARG CUDA_BASE=nvidia/cuda:13\.\d+\.\d+-runtime-ubuntu", text, re.MULTILINE)
    assert "FROM ${CUDA_BASE}" in text
    assert "download.pytorch.org" not in text  # PyPI's torch is the CUDA build
    assert _dockerfile_env("Dockerfile.cuda") == _dockerfile_env("Dockerfile")


def test_manifests_run_the_images_the_dockerfiles_build() -> None:
    assert f"-t groundwire:{VERSION} ." in _dockerfile("Dockerfile")
    assert f"-t groundwire:{VERSION}-cuda ." in _dockerfile("Dockerfile.cuda")
    for mode, tag in (
        ("embedded", VERSION),
        ("milvus", VERSION),
        ("milvus-gpu", f"{VERSION}-cuda"),
    ):
        _, pod = _groundwire_pod(mode)
        assert pod["containers"][0]["image"] == f"groundwire:{tag}"
        assert pod["securityContext"]["runAsUser"] == 10001  # the image's user


def test_embedded_mode_keeps_one_volume_per_replica() -> None:
    workload, _ = _groundwire_pod("embedded")
    assert workload["kind"] == "StatefulSet" and workload["spec"]["replicas"] == 1
    (claim,) = workload["spec"]["volumeClaimTemplates"]
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    header = (K8S / "embedded" / "groundwire.yaml").read_text().split("apiVersion")[0]
    assert "replicas: N means N separate corpora" in header


@pytest.mark.parametrize("mode", MODES)
def test_metrics_port_tracing_endpoint_and_scrape_config_agree(mode: str, tmp_path: Path) -> None:
    settings, _ = _mode_settings(mode, tmp_path)
    objects = _objects(mode)
    assert settings.metrics.enabled and settings.metrics.host == "0.0.0.0"
    assert settings.logging.format.value == "json"
    workload, pod = _groundwire_pod(mode)
    ports = {p["name"]: p["containerPort"] for p in pod["containers"][0]["ports"]}
    assert ports["metrics"] == settings.metrics.port
    annotations = workload["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == settings.metrics.port
    service = objects[("Service", "groundwire")]
    service_ports = {p["name"]: p["port"] for p in service["spec"]["ports"]}
    assert service_ports["metrics"] == settings.metrics.port

    collector = objects[("Service", "otel-collector")]
    otlp_port = next(p["port"] for p in collector["spec"]["ports"] if p["name"] == "otlp-grpc")
    name, namespace = collector["metadata"]["name"], collector["metadata"]["namespace"]
    assert settings.tracing.exporter.value == "otlp_grpc"
    assert settings.tracing.endpoint == f"http://{name}.{namespace}.svc.cluster.local:{otlp_port}"
    collector_config = yaml.safe_load(
        objects[("ConfigMap", "otel-collector-config")]["data"]["config.yaml"]
    )
    grpc_receiver = collector_config["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"]
    assert grpc_receiver.endswith(f":{otlp_port}")
    assert collector_config["service"]["pipelines"]["traces"]["receivers"] == ["otlp"]

    scrape = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    jobs = {job["job_name"]: job for job in scrape["scrape_configs"]}
    namespaces = jobs["groundwire"]["kubernetes_sd_configs"][0]["namespaces"]["names"]
    assert workload["metadata"]["namespace"] in namespaces
    assert objects[("Namespace", workload["metadata"]["namespace"])]
    local = jobs["groundwire-local"]["static_configs"][0]["targets"]
    assert local == [f"127.0.0.1:{MetricsSettings().port}"]


def test_milvus_values_point_where_the_config_map_does() -> None:
    (values,) = [d.body for d in yaml_documents(DEPLOY / "milvus" / "values.yaml")]
    assert values["cluster"]["enabled"] is True
    user = yaml.safe_load(values["extraConfigFiles"]["user.yaml"])
    assert user["common"]["security"]["authorizationEnabled"] is True
    text = (DEPLOY / "milvus" / "values.yaml").read_text()
    release, namespace = re.search(
        r"helm upgrade --install (\S+) zilliztech/milvus --namespace (\S+)", text
    ).groups()  # type: ignore[union-attr]
    raw = tomllib.loads(
        _objects("milvus")[("ConfigMap", "groundwire-config")]["data"]["groundwire.toml"]
    )
    # the chart names the proxy Service after a release whose name contains "milvus"
    assert raw["storage"]["milvus_uri"] == f"http://{release}.{namespace}.svc.cluster.local:19530"
