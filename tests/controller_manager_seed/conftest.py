"""Fixtures for seed 000's command line: a real API server, a CA certificate and a signing key
made with `cryptography` (what /srv/kubernetes/ca.crt and server.key are in the seed), and the
controller-manager started with the seed's flags."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from tests.support import fixtures
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, free_port

apiserver = fixtures.apiserver  # the shared module-scoped fixture
api = fixtures.api  # the shared module-scoped fixture

# Seed 000, "配置和使用", flag for flag.
SEED_COMMAND_LINE = [
    "--logtostderr=false",
    "--v=4",
    "--master=172.17.8.100:8080",
    "--log_dir=/var/log/kubernetes",
    "--root_ca_file=/srv/kubernetes/ca.crt",
    "--service-account-private-key-file=/srv/kubernetes/server.key",
]


@dataclass
class PKI:
    ca_crt: Path
    server_key: Path
    key: rsa.RSAPrivateKey


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> PKI:
    directory = tmp_path_factory.mktemp("srv-kubernetes")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubernetes-ca")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    ca_crt, server_key = directory / "ca.crt", directory / "server.key"
    ca_crt.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    server_key.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return PKI(ca_crt, server_key, key)


def seed_args(apiserver: APIServerProcess, log_dir: Path, pki: PKI) -> list[str]:
    """The seed's command line with its address and paths pointing at this test's server and files."""
    host_port = apiserver.url.split("://", 1)[1]  # the seed writes no scheme
    swaps = {
        "172.17.8.100:8080": host_port,
        "/var/log/kubernetes": str(log_dir),
        "/srv/kubernetes/ca.crt": str(pki.ca_crt),
        "/srv/kubernetes/server.key": str(pki.server_key),
    }
    out = []
    for arg in SEED_COMMAND_LINE:
        name, _, value = arg.partition("=")
        out.append(f"{name}={swaps.get(value, value)}")
    return out


@dataclass
class SeedManager:
    proc: ComponentProcess
    port: int
    log_dir: Path


@pytest.fixture(scope="module")
def seed_manager(
    apiserver: APIServerProcess, pki: PKI, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SeedManager]:
    log_dir = tmp_path_factory.mktemp("var-log-kubernetes")
    port = free_port()
    # Only --port is added: the default 10252 may be taken on this machine.
    proc = ComponentProcess("controller_manager", [*seed_args(apiserver, log_dir, pki), f"--port={port}"],
                            health_port=port)  # fmt: skip
    proc.start()
    yield SeedManager(proc, port, log_dir)
    proc.stop()
