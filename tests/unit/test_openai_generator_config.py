"""OpenAIGeneratorConfig validation, API-key loading and upstream-error helpers (no network)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.answer.openai_errors import redact_url
from core.answer.openai_generator import OpenAIApi, OpenAIGeneratorConfig
from core.answer.secrets import load_api_key
from core.errors import InvalidArgument


def test_config_defaults_and_repr_hides_the_key() -> None:
    config = OpenAIGeneratorConfig("http://h:8000/v1", "m", api_key="sk-hidden")
    assert config.api is OpenAIApi.COMPLETIONS
    assert (config.temperature, config.max_tokens, config.timeout_s, config.max_retries) == (
        0.2,
        256,
        60.0,
        2,
    )
    assert "sk-hidden" not in repr(config)


def test_config_accepts_the_api_as_a_string() -> None:
    config = OpenAIGeneratorConfig("http://h/v1", "m", api="chat")  # type: ignore[arg-type]
    assert config.api is OpenAIApi.CHAT


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"api": "responses"}, 'generator.api: must be "completions" or "chat"'),
        ({"base_url": ""}, "generator.base_url: must be set, e.g. http://host:8000/v1"),
        ({"temperature": -0.1}, "generator.temperature: must be 0 or more"),
        ({"max_tokens": 0}, "generator.max_tokens: must be more than 0"),
        ({"timeout_s": 0}, "generator.timeout_s: must be more than 0"),
        ({"max_retries": -1}, "generator.max_retries: must be 0 or more"),
    ],
    ids=["api", "base_url", "temperature", "max_tokens", "timeout", "retries"],
)
def test_config_rejects_bad_values(changes: dict[str, object], message: str) -> None:
    fields: dict[str, object] = {"base_url": "http://h/v1", "model": "m", **changes}
    with pytest.raises(InvalidArgument) as caught:
        OpenAIGeneratorConfig(**fields)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_redact_url_drops_credentials_and_query() -> None:
    assert redact_url("https://user:pw@api.example.com:8443/v1?key=k#f") == (
        "https://api.example.com:8443/v1"
    )
    assert redact_url("http://k@[::1]:8000/v1") == "http://[::1]:8000/v1"


def test_api_key_from_env_wins_over_file(tmp_path: Path) -> None:
    secret = tmp_path / "key"
    secret.write_text("  from-file\n")
    assert load_api_key("K", secret, environ={"K": " from-env "}) == "from-env"
    assert load_api_key("K", secret, environ={}) == "from-file"
    assert load_api_key("K", None, environ={}) == ""


def test_api_key_file_problems_name_the_setting(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(InvalidArgument) as caught:
        load_api_key("K", missing, environ={})
    assert str(caught.value) == (
        f"generator.api_key_file: the secret file {missing} does not exist; "
        "create it or unset the setting"
    )
    empty = tmp_path / "empty"
    empty.write_text("\n")
    with pytest.raises(InvalidArgument) as caught:
        load_api_key("K", empty, environ={})
    assert str(caught.value) == (
        f"generator.api_key_file: the secret file {empty} is empty; put the API key in it"
    )
