"""Each kustomization under deploy/k8s renders, and what its pods reference exists in it.

A pod that mounts a ConfigMap or Secret, or reads a key of one, that `kubectl apply -k` does not
create would hang in ContainerCreating; a selector or scale target that names nothing would
silently do nothing. Optional references (`optional: true`) may be absent: Kubernetes allows it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.unit.deploy_manifests import K8S, KUSTOMIZATION, Obj, kustomization_dirs, pod_specs
from tests.unit.deploy_manifests import render as render_kustomization

DIRS = kustomization_dirs()
MODES = ("embedded", "milvus", "milvus-gpu")


def _ids(path: Path) -> str:
    return path.relative_to(K8S).as_posix()


def _index(objects: list[Obj]) -> dict[tuple[str, str, str], Obj]:
    index: dict[tuple[str, str, str], Obj] = {}
    for obj in objects:
        key = (obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        assert key not in index, f"{key} is defined twice"
        index[key] = obj
    return index


def _references(pod: Obj) -> Iterator[tuple[str, str, str | None, bool]]:
    """(kind, name, key or None, optional) for every ConfigMap and Secret the pod uses."""
    for volume in pod.get("volumes", []):
        if "configMap" in volume:
            ref = volume["configMap"]
            yield "ConfigMap", ref["name"], None, ref.get("optional", False)
        if "secret" in volume:
            ref = volume["secret"]
            yield "Secret", ref["secretName"], None, ref.get("optional", False)
    for container in pod.get("initContainers", []) + pod["containers"]:
        for env in container.get("env", []):
            source = env.get("valueFrom", {})
            for field, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
                if field in source:
                    ref = source[field]
                    yield kind, ref["name"], ref["key"], ref.get("optional", False)
        for env_from in container.get("envFrom", []):
            for field, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
                if field in env_from:
                    ref = env_from[field]
                    yield kind, ref["name"], None, ref.get("optional", False)


def _keys(obj: Obj) -> set[str]:
    return set(obj.get("data", {})) | set(obj.get("stringData", {}))


def test_the_three_deployments_are_there() -> None:
    assert {_ids(d) for d in DIRS} == {"base", *MODES}


@pytest.mark.parametrize("directory", DIRS, ids=_ids)
def test_configmap_and_secret_references_resolve(directory: Path) -> None:
    objects = render_kustomization(directory)
    index = _index(objects)
    for workload, pod in pod_specs(objects):
        namespace = workload["metadata"]["namespace"]
        for kind, name, key, optional in _references(pod):
            target = index.get((kind, namespace, name))
            if target is None:
                assert optional, f"{workload['metadata']['name']} uses {kind} {name}: not defined"
                continue
            assert key is None or key in _keys(target), f"{kind} {name} has no key {key}"
        mounted = {v["name"] for v in pod.get("volumes", [])}
        for container in pod["containers"]:
            for mount in container.get("volumeMounts", []):
                claims = {
                    t["metadata"]["name"] for t in workload["spec"].get("volumeClaimTemplates", [])
                }
                assert mount["name"] in mounted | claims, f"volume {mount['name']} is not defined"


@pytest.mark.parametrize("directory", DIRS, ids=_ids)
def test_selectors_and_scale_targets_name_existing_pods(directory: Path) -> None:
    objects = render_kustomization(directory)
    index = _index(objects)
    labels = [
        (w["metadata"]["namespace"], w["spec"]["template"]["metadata"]["labels"])
        for w, _ in pod_specs(objects)
    ]

    def selects(namespace: str, selector: dict[str, str]) -> bool:
        return any(
            ns == namespace and selector.items() <= pod_labels.items() for ns, pod_labels in labels
        )

    for obj in objects:
        namespace = obj["metadata"].get("namespace", "")
        spec: dict[str, Any] = obj.get("spec", {})
        if obj["kind"] == "Service":
            assert selects(namespace, spec["selector"]), obj["metadata"]["name"]
        if obj["kind"] in {"PodDisruptionBudget", "Deployment", "StatefulSet"}:
            assert selects(namespace, spec["selector"]["matchLabels"]), obj["metadata"]["name"]
        if obj["kind"] == "HorizontalPodAutoscaler":
            target = spec["scaleTargetRef"]
            assert (target["kind"], namespace, target["name"]) in index
        if obj["kind"] == "StatefulSet":
            assert ("Service", namespace, spec["serviceName"]) in index
        if namespace:
            assert ("Namespace", "", namespace) in index, f"namespace {namespace} is not created"


def test_rendering_refuses_a_missing_resource(tmp_path: Path) -> None:
    """The resolution above can fail: a kustomization naming a file that is not there."""
    (tmp_path / KUSTOMIZATION).write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        "resources:\n  - groundwire.yaml\n"
    )
    with pytest.raises(FileNotFoundError, match="resource groundwire.yaml does not exist"):
        render_kustomization(tmp_path)


def test_gpu_variant_is_the_milvus_deployment_with_a_gpu() -> None:
    cpu = _index(render_kustomization(K8S / "milvus"))
    gpu = _index(render_kustomization(K8S / "milvus-gpu"))
    key = ("Deployment", "groundwire", "groundwire")
    groundwire = gpu.pop(key)
    cpu.pop(key)
    assert cpu == gpu  # only the groundwire Deployment differs
    pod = groundwire["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert container["image"].endswith("-cuda")
    assert {"name": "GROUNDWIRE_MODEL__DEVICE", "value": "cuda"} in container["env"]
    assert pod["nodeSelector"] and pod["tolerations"][0]["key"] == "nvidia.com/gpu"
