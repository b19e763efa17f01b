"""The files under deploy/ as data: every YAML document, the kustomizations rendered, the images.

`render(directory)` builds a kustomization the way `kubectl kustomize` does for the features our
kustomizations use (`resources`: files and directories; `patches`: inline JSON 6902 patches with a
target) and refuses any other field, so a kustomization can't silently use something this
renderer would ignore. (Checked once against `kubectl kustomize` 5.5.0: the same objects.)
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
K8S = DEPLOY / "k8s"
KUSTOMIZATION = "kustomization.yaml"
KUSTOMIZE_FIELDS = {"apiVersion", "kind", "resources", "patches"}
DOCKERFILES = ("Dockerfile", "Dockerfile.cuda")
# YAML under deploy/ that is not a Kubernetes object: each is checked by its own tests.
NOT_KUBERNETES = {"prometheus/prometheus.yml", "milvus/values.yaml"}

Obj = dict[str, Any]


@dataclass(frozen=True)
class Document:
    """One YAML document of a file under deploy/."""

    path: Path
    index: int
    body: Any

    @property
    def label(self) -> str:
        name = self.path.relative_to(DEPLOY).as_posix()
        kind = self.body.get("kind", "?") if isinstance(self.body, dict) else "?"
        return f"{name}#{self.index}:{kind}"


def yaml_files() -> list[Path]:
    """Every YAML file under deploy/."""
    return sorted(p for p in DEPLOY.rglob("*") if p.suffix in {".yaml", ".yml"})


def documents(path: Path) -> list[Document]:
    """The non-empty documents of one YAML file."""
    loaded = yaml.safe_load_all(path.read_text())
    return [Document(path, i, body) for i, body in enumerate(loaded) if body is not None]


def kubernetes_documents() -> list[Document]:
    """Every Kubernetes object in a YAML file under deploy/ (kustomizations excluded)."""
    found = []
    for path in yaml_files():
        if path.relative_to(DEPLOY).as_posix() in NOT_KUBERNETES or path.name == KUSTOMIZATION:
            continue
        found.extend(documents(path))
    return found


def kustomization_dirs() -> list[Path]:
    """Every directory under deploy/k8s with a kustomization.yaml."""
    return sorted(p.parent for p in K8S.rglob(KUSTOMIZATION))


def render(directory: Path) -> list[Obj]:
    """The objects `kubectl kustomize directory` outputs (for the fields we use)."""
    spec = yaml.safe_load((directory / KUSTOMIZATION).read_text())
    unsupported = set(spec) - KUSTOMIZE_FIELDS
    if unsupported:
        raise ValueError(f"{directory}: kustomization fields {unsupported} are not rendered here")
    objects: list[Obj] = []
    for entry in spec.get("resources", []):
        target = (directory / entry).resolve()
        if target.is_dir():
            objects.extend(render(target))
        elif target.is_file():
            objects.extend(copy.deepcopy(d.body) for d in documents(target))
        else:
            raise FileNotFoundError(f"{directory / KUSTOMIZATION}: resource {entry} does not exist")
    for patch in spec.get("patches", []):
        matches = [o for o in objects if _matches(o, patch["target"])]
        if len(matches) != 1:
            raise ValueError(f"{directory}: patch target {patch['target']} matches {len(matches)}")
        for operation in yaml.safe_load(patch["patch"]):
            apply_operation(matches[0], operation)
    return objects


def _matches(obj: Obj, target: dict[str, str]) -> bool:
    group, _, version = obj["apiVersion"].rpartition("/")
    wanted = {"group": group, "version": version, "kind": obj["kind"]}
    wanted["name"] = obj["metadata"]["name"]
    return all(wanted[key] == value for key, value in target.items())


def apply_operation(obj: Obj, operation: dict[str, Any]) -> None:
    """Apply one JSON 6902 `add` or `replace` operation to `obj` in place."""
    op, path = operation["op"], operation["path"]
    if op not in {"add", "replace"}:
        raise ValueError(f"JSON patch op {op!r} is not rendered here")
    keys = [k.replace("~1", "/").replace("~0", "~") for k in path.lstrip("/").split("/")]
    parent: Any = obj
    for key in keys[:-1]:
        parent = parent[int(key)] if isinstance(parent, list) else parent[key]
    last, value = keys[-1], copy.deepcopy(operation["value"])
    if isinstance(parent, list):
        if last == "-":
            parent.append(value)
        elif op == "add":
            parent.insert(int(last), value)
        else:
            parent[int(last)] = value
    else:
        if op == "replace" and last not in parent:
            raise KeyError(f"JSON patch replace of missing {path}")
        parent[last] = value


def pod_specs(objects: list[Obj]) -> Iterator[tuple[Obj, Obj]]:
    """(workload, pod spec) for every Deployment, StatefulSet and DaemonSet."""
    for obj in objects:
        if obj["kind"] in {"Deployment", "StatefulSet", "DaemonSet"}:
            yield obj, obj["spec"]["template"]["spec"]


def env_var_names(text: str) -> set[str]:
    """Every GROUNDWIRE_* name written in a manifest or Dockerfile."""
    return set(re.findall(r"\bGROUNDWIRE_[A-Z0-9_]+", text))
