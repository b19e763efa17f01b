"""A throwaway PKI made with the openssl CLI: a CA, a server certificate and a client certificate."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

HAS_OPENSSL = shutil.which("openssl") is not None


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _issue(directory: Path, name: str, subject: str, extensions: str) -> None:
    """A key and a certificate for `name`, signed by the test CA in `directory`."""
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-subj", subject,
             "-out", f"{name}.csr", cwd=directory)  # fmt: skip
    (directory / f"{name}.ext").write_text(extensions, "utf-8")
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-days", "2", "-sha256", "-extfile", f"{name}.ext",
             "-out", f"{name}.crt", cwd=directory)  # fmt: skip


def make_pki(directory: Path) -> Path:
    """ca.crt/key, server.crt/key (localhost, 127.0.0.1) and client.crt/key in `directory`."""
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
             "ca.crt", "-days", "2", "-subj", "/CN=groundwire test CA", cwd=directory)  # fmt: skip
    _issue(directory, "server", "/CN=localhost",
           "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")  # fmt: skip
    _issue(directory, "client", "/CN=test client", "extendedKeyUsage=clientAuth\n")
    return directory
