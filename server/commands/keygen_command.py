"""`groundwire keygen`: a new API key (printed once) and the keys-file entry holding its hash."""

from __future__ import annotations

import sys
import tomllib

from server.api_key_entry import KeyEntry, KeyEntryError
from server.api_keys import hash_key, new_key


def keygen_entry(tenant: str, role: str, key_id: str, key: str) -> str:
    """The `[[keys]]` TOML entry for `key`, validated by the rules the server loads keys with.

    KeyEntryError names the offending option (--id, --tenant, --role) and the fix.
    """
    try:
        entry = KeyEntry.parse(key_id, tenant, role, hash_key(key))
    except KeyEntryError as exc:
        raise KeyEntryError(f"--{exc.field}", exc.problem) from None
    text = entry.to_toml()
    # What the server will read back must be exactly this entry and nothing more.
    tables = tomllib.loads(text)
    if tables.keys() != {"keys"} or len(tables["keys"]) != 1:
        raise AssertionError(f"keygen produced more than one entry: {text!r}")
    if KeyEntry.from_table(tables["keys"][0], default_id="") != entry:
        raise AssertionError(f"keygen's entry does not read back unchanged: {text!r}")
    return text


def run_keygen(tenant: str, role: str, key_id: str) -> None:
    """Print the key to stderr (give it to the client) and the TOML entry to stdout (the server).

    Invalid options exit with status 2 and print nothing to stdout.
    """
    key = new_key()
    try:
        text = keygen_entry(tenant, role, key_id, key)
    except KeyEntryError as exc:
        print(f"groundwire keygen: error: {exc}", file=sys.stderr)
        sys.exit(2)
    print(
        f"API key for {key_id!r} (shown once; store it in the client's secret store):",
        file=sys.stderr,
    )
    print(key, file=sys.stderr)
    sys.stdout.write(text)
    sys.stdout.flush()
