"""`[storage]` selects the backend: names exactly as the deployment files use them, the token
kept out of reprs, and a Milvus backend without a URI refused with the fix."""

from __future__ import annotations

import pytest

from core.catalog.storage_backend import LocalBackend
from core.errors import InvalidArgument
from core.milvus.options import MilvusIndexKind
from server.settings import StorageBackendKind, load_settings
from server.storage_factory import build_storage_backend


def test_milvus_settings_come_from_the_environment() -> None:
    settings = load_settings(
        env={
            "GROUNDWIRE_STORAGE__BACKEND": "milvus",
            "GROUNDWIRE_STORAGE__MILVUS_URI": "http://milvus:19530",
            "GROUNDWIRE_STORAGE__MILVUS_TOKEN": "root:s3cret",
            "GROUNDWIRE_STORAGE__MILVUS_DATABASE": "gw",
            "GROUNDWIRE_STORAGE__MILVUS_TLS_CA_FILE": "/etc/milvus/ca.pem",
            "GROUNDWIRE_STORAGE__MILVUS_INDEX": "GPU_CAGRA",
        }
    )
    storage = settings.storage
    assert storage.backend is StorageBackendKind.MILVUS
    assert (storage.milvus_uri, storage.milvus_database) == ("http://milvus:19530", "gw")
    assert storage.milvus_tls_ca_file == "/etc/milvus/ca.pem"
    assert storage.milvus_index is MilvusIndexKind.GPU_CAGRA
    assert storage.milvus_token == "root:s3cret" and "s3cret" not in repr(settings)


def test_the_default_is_the_local_backend() -> None:
    storage = load_settings(env={}).storage
    assert storage.backend is StorageBackendKind.LOCAL
    assert isinstance(build_storage_backend(storage), LocalBackend)


def test_milvus_without_a_uri_names_the_setting() -> None:
    with pytest.raises(InvalidArgument) as caught:
        load_settings(env={"GROUNDWIRE_STORAGE__BACKEND": "milvus"})
    (violation,) = caught.value.violations
    assert violation.field == "storage.milvus_uri"
    assert violation.description == (
        'is required because storage.backend is "milvus": a milvus-lite file path or '
        "http://host:19530"
    )
