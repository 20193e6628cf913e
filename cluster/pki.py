"""The cluster's certificates, made with the `cryptography` package: what `mini-k8s up --secure`
writes into `<data-dir>/pki/` (and what the tests use for their secure servers).

    ca.crt, ca.key            the cluster CA: signs every certificate below; clients trust it
    apiserver.crt/.key        the API server's serving certificate, for 127.0.0.1, localhost, the
                              `kubernetes` Service's ClusterIP and its DNS names
    admin.crt/.key            the administrator: CN kubernetes-admin, O system:masters
    sa.key                    signs ServiceAccount tokens (the controller-manager's Secrets, the
                              API server's TokenRequest) and verifies them
    apiserver-kubelet-client.crt/.key   what the API server presents to kubelets (pods/log, exec):
                              CN kube-apiserver-kubelet-client, O system:masters, as kubeadm makes it
    kubelet-<node>.crt/.key   each kubelet's serving certificate, for its node's address and name
                              (the kubelets verify callers against ca.crt: --client-ca-file)

Files that exist are kept (a second `up` finds the same CA, so old kubeconfigs keep working),
except a serving certificate that lacks a name it is now asked for: that one is issued again by the
same CA (clients trust the CA, not the certificate).
Keys are EC P-256, certificates valid for a year: a classroom cluster, not a production one.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALID = datetime.timedelta(days=365)


@dataclass
class Pair:
    cert: Path
    key: Path


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))  # fmt: skip
    path.chmod(0o600)


def _load_key(path: Path) -> ec.EllipticCurvePrivateKey:
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    return key


class CA:
    """A CA in `directory` (`<name>.crt`, `<name>.key`), made on first use, reused after."""

    def __init__(self, directory: Path, name: str = "ca") -> None:
        self.dir = directory
        self.pair = Pair(directory / f"{name}.crt", directory / f"{name}.key")
        if self.pair.cert.exists() and self.pair.key.exists():
            self.key = _load_key(self.pair.key)
            self.cert = x509.load_pem_x509_certificate(self.pair.cert.read_bytes())
            return
        directory.mkdir(parents=True, exist_ok=True)
        self.key = _new_key()
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mini-k8s-ca")])
        now = datetime.datetime.now(datetime.UTC)
        self.cert = (
            x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(self.key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + VALID)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self.key, hashes.SHA256())
        )  # fmt: skip
        self.pair.cert.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))
        write_key(self.pair.key, self.key)

    def issue(
        self, name: str, *, cn: str, groups: tuple[str, ...] = (), server: bool = False,
        dns: tuple[str, ...] = ("localhost",), ips: tuple[str, ...] = ("127.0.0.1",),
    ) -> Pair:  # fmt: skip
        """`<name>.crt`/`.key` signed by this CA: a client certificate (CN user, O groups) or,
        with `server`, a serving one for `dns` and `ips`. Kept if it exists."""
        pair = Pair(self.dir / f"{name}.crt", self.dir / f"{name}.key")
        if pair.cert.exists() and pair.key.exists():
            return pair
        key = _new_key()
        attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
        attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
        now = datetime.datetime.now(datetime.UTC)
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (
            x509.CertificateBuilder().subject_name(x509.Name(attrs)).issuer_name(self.cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALID)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )  # fmt: skip
        if server:
            names: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
            names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        pair.cert.write_bytes(builder.sign(self.key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM))
        write_key(pair.key, key)
        return pair

    def serving(self, name: str, *, cn: str, names: tuple[str, ...]) -> Pair:
        """A serving certificate for `names`, each a DNS name or an IP address: kept when it names
        them all, issued again when one is missing (a container renamed, another address)."""
        dns, ips = split_names(names)
        pair = Pair(self.dir / f"{name}.crt", self.dir / f"{name}.key")
        if pair.cert.exists() and pair.key.exists() and not {*dns, *ips} <= subject_alt_names(pair.cert):
            pair.cert.unlink()
            pair.key.unlink()
        return self.issue(name, cn=cn, server=True, dns=dns, ips=ips)


def split_names(names: tuple[str, ...] | list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(DNS names, IP addresses) of a list that holds both, each once, in order."""
    dns: list[str] = []
    ips: list[str] = []
    for name in names:
        try:
            ips.append(str(ipaddress.ip_address(name)))
        except ValueError:
            dns.append(name)
    return tuple(dict.fromkeys(dns)), tuple(dict.fromkeys(ips))


def subject_alt_names(path: Path) -> set[str]:
    """The DNS names and IP addresses a certificate file is for."""
    cert = x509.load_pem_x509_certificate(path.read_bytes())
    try:
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    return {*ext.get_values_for_type(x509.DNSName), *(str(ip) for ip in ext.get_values_for_type(x509.IPAddress))}


@dataclass
class ClusterPKI:
    ca: Pair
    apiserver: Pair
    admin: Pair
    service_account_key: Path
    kubelet_client: Pair


# the names every client inside the cluster reaches the API server by
APISERVER_NAMES = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                   "kubernetes.default.svc.cluster.local", "127.0.0.1")  # fmt: skip


def cluster_pki(
    directory: Path, kubernetes_service_ip: str = "10.96.0.1", apiserver_names: tuple[str, ...] = ()
) -> ClusterPKI:
    """The CA and the control plane's files; `apiserver_names`: more names or addresses of the API
    server (docker compose's `apiserver`)."""
    ca = CA(directory)
    names = (*APISERVER_NAMES, kubernetes_service_ip, *apiserver_names)
    serving = ca.serving("apiserver", cn="kube-apiserver", names=names)
    admin = ca.issue("admin", cn="kubernetes-admin", groups=("system:masters",))
    kubelet_client = ca.issue(KUBELET_CLIENT, cn="kube-apiserver-kubelet-client", groups=("system:masters",))
    sa_key = directory / "sa.key"
    if not sa_key.exists():
        write_key(sa_key, _new_key())
    return ClusterPKI(ca.pair, serving, admin, sa_key, kubelet_client)


KUBELET_CLIENT = "apiserver-kubelet-client"


def kubelet_serving(directory: Path, node: str, address: str) -> Pair:
    """`kubelet-<node>.crt/.key`: the node's kubelet serves HTTPS with it (SANs: its name, its
    address — an IP or a DNS name — localhost and 127.0.0.1)."""
    names = (node, address, "localhost", "127.0.0.1")
    return CA(directory).serving(f"kubelet-{node}", cn=f"system:node:{node}", names=names)
