"""The two files seed 000 passes to the controller-manager, read once at start-up.

`--service-account-private-key-file` is the PEM private key (RSA or EC) the Token controller signs
ServiceAccount tokens with; the API server verifies them with the matching public key.
`--root-ca-file` is the PEM bundle of the cluster's CA: it goes into every token Secret (`ca.crt`)
and into the `kube-root-ca.crt` ConfigMap of every namespace, so a pod can verify the API server.
A file that cannot be read or parsed stops the start, as in kube-controller-manager — a controller
that silently signs nothing would be worse.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

SigningKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


@dataclass(frozen=True)
class Credentials:
    root_ca: bytes | None = None  # the PEM text, as written to ca.crt
    signing_key: SigningKey | None = None


def load(root_ca_file: str, private_key_file: str) -> Credentials:
    """Read and check both files (either may be ""); ValueError says which file and why."""
    root_ca = None
    if root_ca_file:
        try:
            root_ca = Path(root_ca_file).read_bytes()
            if not x509.load_pem_x509_certificates(root_ca):
                raise ValueError("no certificate in it")
        except (OSError, ValueError) as exc:
            raise ValueError(f"error parsing root-ca-file at {root_ca_file}: {exc}") from None
    key = None
    if private_key_file:
        try:
            loaded = serialization.load_pem_private_key(Path(private_key_file).read_bytes(), password=None)
        except (OSError, ValueError, TypeError) as exc:
            raise ValueError(f"error reading key for service account token controller: {exc}") from None
        if not isinstance(loaded, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
            raise ValueError(f"{private_key_file}: only RSA and EC keys can sign service account tokens")
        key = loaded
    return Credentials(root_ca, key)
