"""A kubeconfig's cluster and user entries turned into what a connection needs: TLS settings and
an Authorization header.

    cluster: certificate-authority / certificate-authority-data   → the CA the server's certificate must chain to
             insecure-skip-tls-verify: true                        → do not check it (kubectl's flag of that name)
    user:    client-certificate(-data) + client-key(-data)         → x509 authentication
             token / tokenFile                                     → "Authorization: Bearer <token>"

The `-data` forms (base64 PEM inside the file) stay in memory. Python's ssl module loads a
certificate chain only from a path, so `ssl_context()` hands it an anonymous in-memory file
(Linux's memfd, read through /proc/self/fd) for the length of that one call. They used to be
written to a private temporary directory removed at exit; a component that is SIGKILLed never
runs its exit handlers, so its private key stayed in /tmp. A memfd is never on any disk and is
gone when it is closed, or when the process dies, however it dies. Where there is no memfd (not
Linux) the PEM goes to a private (0700) temporary directory that lives only for the same call.
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Credentials:
    ca_file: str = ""
    ca_data: str = ""  # PEM text
    insecure: bool = False
    cert_file: str = ""
    key_file: str = ""
    token: str = ""
    cert_data: bytes = b""  # PEM, from client-certificate-data (used instead of cert_file when both are set)
    key_data: bytes = field(default=b"", repr=False)  # PEM, from client-key-data (the same); never in a repr

    def ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=self.ca_file or None, cadata=self.ca_data or None)
        if self.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if self.cert_file or self.cert_data:
            with _path_of(self.cert_data, self.cert_file) as cert, _path_of(self.key_data, self.key_file) as key:
                ctx.load_cert_chain(cert, key or None)
        return ctx

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def with_token(self, token: str) -> Credentials:
        """The same server trust, authenticating with `token` instead of any client certificate."""
        return replace(self, token=token, cert_file="", key_file="", cert_data=b"", key_data=b"")


@contextmanager
def _path_of(pem: bytes, path: str) -> Iterator[str]:
    """`path`, or when the PEM is in memory a path that reads it, valid until the block ends."""
    if not pem:
        yield path
        return
    fd = _memfd(pem)
    if fd is not None:
        try:
            yield f"/proc/self/fd/{fd}"
        finally:
            os.close(fd)
    else:
        with tempfile.TemporaryDirectory(prefix="mini-k8s-creds-") as private:  # created 0700
            file = Path(private) / "credential.pem"
            file.write_bytes(pem)
            yield str(file)


def _memfd(pem: bytes) -> int | None:
    """An anonymous in-memory file holding `pem`, readable through /proc/self/fd; None where
    there is none (not Linux, a sandbox that forbids memfd_create, no /proc)."""
    if not hasattr(os, "memfd_create") or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        fd = os.memfd_create("mini-k8s-credentials", os.MFD_CLOEXEC)
    except OSError:
        return None
    try:
        rest = memoryview(pem)
        while rest:
            rest = rest[os.write(fd, rest) :]
    except OSError:
        os.close(fd)
        return None
    return fd


def from_kubeconfig(cluster: dict[str, Any], user: dict[str, Any], base: Path | None) -> Credentials:
    """Relative paths are relative to the kubeconfig file's directory, as kubectl reads them."""
    def path(value: str) -> str:
        return str((base / value) if base is not None and not Path(value).is_absolute() else Path(value))

    token = str(user.get("token") or "")
    if not token and user.get("tokenFile"):
        token = Path(path(str(user["tokenFile"]))).read_text().strip()
    cert = path(str(user["client-certificate"])) if user.get("client-certificate") else ""
    key = path(str(user["client-key"])) if user.get("client-key") else ""
    cert_data = base64.b64decode(str(user.get("client-certificate-data") or ""))
    key_data = base64.b64decode(str(user.get("client-key-data") or ""))
    ca_data = cluster.get("certificate-authority-data")
    return Credentials(
        ca_file=path(str(cluster["certificate-authority"])) if cluster.get("certificate-authority") else "",
        ca_data=base64.b64decode(str(ca_data)).decode() if ca_data else "",
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
        cert_file=cert, key_file=key, cert_data=cert_data, key_data=key_data, token=token,
    )  # fmt: skip
