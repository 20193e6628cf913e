"""A kubeconfig's cluster and user entries turned into what a connection needs: TLS settings and
an Authorization header.

    cluster: certificate-authority / certificate-authority-data   → the CA the server's certificate must chain to
             insecure-skip-tls-verify: true                        → do not check it (kubectl's flag of that name)
    user:    client-certificate(-data) + client-key(-data)         → x509 authentication
             token / tokenFile                                     → "Authorization: Bearer <token>"

The `-data` forms are base64 PEM inside the file; Python's ssl module loads a certificate chain
only from files, so those are written to a private temporary directory first (removed at exit).
"""

from __future__ import annotations

import atexit
import base64
import shutil
import ssl
import tempfile
from dataclasses import dataclass
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

    def ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=self.ca_file or None, cadata=self.ca_data or None)
        if self.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if self.cert_file:
            ctx.load_cert_chain(self.cert_file, self.key_file or None)
        return ctx

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


_TEMP: list[str] = []


def _data_file(b64: str, suffix: str) -> str:
    if not _TEMP:
        _TEMP.append(tempfile.mkdtemp(prefix="mini-k8s-creds-"))
        atexit.register(shutil.rmtree, _TEMP[0], True)
    path = Path(_TEMP[0]) / f"{len(list(Path(_TEMP[0]).iterdir()))}{suffix}"
    path.write_bytes(base64.b64decode(b64))
    path.chmod(0o600)
    return str(path)


def from_kubeconfig(cluster: dict[str, Any], user: dict[str, Any], base: Path | None) -> Credentials:
    """Relative paths are relative to the kubeconfig file's directory, as kubectl reads them."""
    def path(value: str) -> str:
        return str((base / value) if base is not None and not Path(value).is_absolute() else Path(value))

    token = str(user.get("token") or "")
    if not token and user.get("tokenFile"):
        token = Path(path(str(user["tokenFile"]))).read_text().strip()
    cert = path(str(user["client-certificate"])) if user.get("client-certificate") else ""
    if user.get("client-certificate-data"):
        cert = _data_file(str(user["client-certificate-data"]), ".crt")
    key = path(str(user["client-key"])) if user.get("client-key") else ""
    if user.get("client-key-data"):
        key = _data_file(str(user["client-key-data"]), ".key")
    ca_data = cluster.get("certificate-authority-data")
    return Credentials(
        ca_file=path(str(cluster["certificate-authority"])) if cluster.get("certificate-authority") else "",
        ca_data=base64.b64decode(str(ca_data)).decode() if ca_data else "",
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
        cert_file=cert, key_file=key, token=token,
    )  # fmt: skip
