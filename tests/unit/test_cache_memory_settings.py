"""The `cache` and `memory` settings sections: defaults, environment overrides, validation."""

from __future__ import annotations

import pytest

from core.errors import InvalidArgument
from server.settings import CacheSettings, MemorySettings, load_settings


def test_defaults() -> None:
    settings = load_settings(env={})
    assert settings.cache == CacheSettings(
        enabled=True,
        embedding_ttl_s=600.0,
        embedding_max_entries=10000,
        retrieval_ttl_s=60.0,
        retrieval_max_entries=2000,
    )
    assert settings.memory == MemorySettings(
        decay_rate_per_hour=0.01, max_per_request=256, weight=1.0
    )


def test_environment_overrides() -> None:
    settings = load_settings(
        env={
            "GROUNDWIRE_CACHE__ENABLED": "false",
            "GROUNDWIRE_CACHE__RETRIEVAL_TTL_S": "5",
            "GROUNDWIRE_MEMORY__WEIGHT": "0.5",
            "GROUNDWIRE_MEMORY__MAX_PER_REQUEST": "32",
        }
    )
    assert settings.cache.enabled is False and settings.cache.retrieval_ttl_s == 5.0
    assert settings.memory.weight == 0.5 and settings.memory.max_per_request == 32


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("CACHE__EMBEDDING_TTL_S", "0", "cache.embedding_ttl_s: must be > 0 (seconds)"),
        ("CACHE__EMBEDDING_MAX_ENTRIES", "0", "cache.embedding_max_entries: must be >= 1"),
        ("CACHE__RETRIEVAL_TTL_S", "-1", "cache.retrieval_ttl_s: must be > 0 (seconds)"),
        ("CACHE__RETRIEVAL_MAX_ENTRIES", "0", "cache.retrieval_max_entries: must be >= 1"),
        (
            "MEMORY__DECAY_RATE_PER_HOUR",
            "-0.1",
            "memory.decay_rate_per_hour: must be >= 0 (0 keeps memories from fading)",
        ),
        ("MEMORY__MAX_PER_REQUEST", "0", "memory.max_per_request: must be between 1 and 10000"),
        ("MEMORY__WEIGHT", "0", "memory.weight: must be a finite number > 0"),
        ("MEMORY__WEIGHT", "inf", "memory.weight: must be a finite number > 0"),
    ],
    ids=lambda value: str(value).lower(),
)
def test_invalid_values_name_the_setting_and_the_fix(name: str, value: str, message: str) -> None:
    with pytest.raises(InvalidArgument) as error:
        load_settings(env={f"GROUNDWIRE_{name}": value})
    assert str(error.value) == message
