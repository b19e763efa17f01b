"""Reading the generator's API key from an environment variable or a secret file."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from core.errors import InvalidArgument

API_KEY_ENV_VAR = "GROUNDWIRE_GENERATOR__API_KEY"
API_KEY_FILE_SETTING = "generator.api_key_file"


def load_api_key(
    env_var: str = API_KEY_ENV_VAR,
    file: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> str:
    """The API key, surrounding whitespace stripped; "" when neither source is set.

    A non-empty `env_var` wins over `file`. A named file that is missing, unreadable or empty
    raises InvalidArgument naming the `generator.api_key_file` setting. The key is never logged.
    """
    value = (os.environ if environ is None else environ).get(env_var, "").strip()
    if value or file is None:
        return value
    try:
        value = file.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise InvalidArgument.field(
            API_KEY_FILE_SETTING,
            f"the secret file {file} does not exist; create it or unset the setting",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidArgument.field(
            API_KEY_FILE_SETTING, f"the secret file {file} cannot be read: {exc.__class__.__name__}"
        ) from None
    if not value:
        raise InvalidArgument.field(
            API_KEY_FILE_SETTING, f"the secret file {file} is empty; put the API key in it"
        )
    return value
