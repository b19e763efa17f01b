"""`groundwire keygen`: a new API key (printed once) and the keys-file entry holding its hash."""

from __future__ import annotations

import sys

from server.api_keys import hash_key, new_key
from server.principal import Role


def run_keygen(tenant: str, role: str, key_id: str) -> None:
    """Print the key to stderr (give it to the client) and the TOML entry to stdout (the server)."""
    Role.parse(role)
    key = new_key()
    print(
        f"API key for {key_id!r} (shown once; store it in the client's secret store):",
        file=sys.stderr,
    )
    print(key, file=sys.stderr)
    print("[[keys]]")
    print(f'id = "{key_id}"')
    print(f'tenant = "{tenant}"')
    print(f'role = "{role}"')
    print(f'sha256 = "{hash_key(key)}"')
