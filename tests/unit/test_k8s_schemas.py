"""Every Kubernetes object under deploy/ validates against the Kubernetes schemas (offline).

kubernetes-validate ships the OpenAPI schemas of each Kubernetes release; strict mode also rejects
unknown fields, so a misspelt key fails here instead of being dropped by the API server. The
oldest version checked is the oldest the manifests need (native gRPC probes are GA in 1.27,
autoscaling/v2 in 1.23, policy/v1 PodDisruptionBudget in 1.21).
"""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest

from tests.unit.deploy_manifests import (
    DEPLOY,
    KUSTOMIZATION,
    NOT_KUBERNETES,
    Document,
    documents,
    kubernetes_documents,
    kustomization_dirs,
    render,
    yaml_files,
)

VERSIONS = ("1.29", kubernetes_validate.latest_version())
MANIFESTS = kubernetes_documents()


def test_every_yaml_file_is_a_manifest_a_kustomization_or_listed_as_other() -> None:
    manifest_files = {d.path for d in MANIFESTS}
    for path in yaml_files():
        relative = path.relative_to(DEPLOY).as_posix()
        assert path in manifest_files or path.name == KUSTOMIZATION or relative in NOT_KUBERNETES
    kinds = {d.body["kind"] for d in MANIFESTS}
    assert kinds >= {"Namespace", "ConfigMap", "Secret", "Service", "Deployment", "StatefulSet"}
    assert kinds >= {"HorizontalPodAutoscaler", "PodDisruptionBudget"}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("document", MANIFESTS, ids=lambda d: d.label)
def test_manifest_validates_against_the_kubernetes_schema(document: Document, version: str) -> None:
    body = document.body
    assert isinstance(body, dict) and {"apiVersion", "kind", "metadata"} <= set(body)
    kubernetes_validate.validate(body, version, strict=True)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("directory", kustomization_dirs(), ids=lambda p: p.name)
def test_rendered_kustomization_validates(directory: object, version: str) -> None:
    """Patched objects (the GPU variant) validate too, not only the files as written."""
    for obj in render(directory):  # type: ignore[arg-type]
        kubernetes_validate.validate(obj, version, strict=True)


def test_kustomization_documents_are_kustomizations() -> None:
    for directory in kustomization_dirs():
        (document,) = documents(directory / KUSTOMIZATION)
        assert document.body["kind"] == "Kustomization"
        assert document.body["apiVersion"] == "kustomize.config.k8s.io/v1beta1"


def test_the_validator_rejects_a_misspelt_field_and_a_wrong_type() -> None:
    """The check above can fail: a broken copy of a real Deployment does not validate."""
    deployment = next(d.body for d in MANIFESTS if d.body["kind"] == "Deployment")
    misspelt = copy.deepcopy(deployment)
    container = misspelt["spec"]["template"]["spec"]["containers"][0]
    container["ports"][0]["containerport"] = container["ports"][0].pop("containerPort")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(misspelt, VERSIONS[-1], strict=True)
    wrong_type = copy.deepcopy(deployment)
    wrong_type["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "50051"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(wrong_type, VERSIONS[-1], strict=True)
