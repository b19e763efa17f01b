"""The one place the storage backend is chosen (`storage.backend`)."""

from __future__ import annotations

from core.catalog.storage_backend import LocalBackend, StorageBackend
from server.settings import StorageBackendKind, StorageSettings


def build_storage_backend(storage: StorageSettings) -> StorageBackend:
    """The backend `storage` names; with "milvus" and no pymilvus, FailedPrecondition naming
    `pip install 'groundwire[milvus]'`."""
    if storage.backend is StorageBackendKind.LOCAL:
        return LocalBackend()
    from core.milvus.backend import MilvusBackend  # the optional dependency's only door
    from core.milvus.options import MilvusOptions

    return MilvusBackend(
        MilvusOptions(
            uri=storage.milvus_uri,
            token=storage.milvus_token,
            database=storage.milvus_database,
            tls_ca_file=storage.milvus_tls_ca_file,
            index=storage.milvus_index,
        )
    )
