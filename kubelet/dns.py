"""A pod's name resolution: the resolv.conf and /etc/hosts the kubelet gives every pod.

Why the kubelet does this: a container must find Services by name (`mysql`, `web.prod`) with the
programs it already has - glibc's resolver, busybox's nslookup - and those read /etc/resolv.conf.
So the kubelet writes one per pod and the runtime puts it over the container's /etc/resolv.conf
(the process runtime: a bind mount in the container's own mount namespace, kubelet/shim.py).

`dnsPolicy` decides where the nameservers come from, as Kubernetes' kubelet decides
(pkg/kubelet/network/dns):

- `ClusterFirst` (the default): the cluster DNS (`--cluster-dns`, the `kube-dns` Service's IP) with
  the search path `<ns>.svc.<zone> svc.<zone> <zone>` before the host's own, and `options ndots:5`,
  so `mysql` is tried as `mysql.<ns>.svc.cluster.local` first. A hostNetwork pod gets `Default`
  instead; a kubelet without `--cluster-dns` falls back to `Default` with a `MissingClusterDNS`
  warning event.
- `ClusterFirstWithHostNet`: ClusterFirst, for hostNetwork pods too.
- `Default`: the node's resolver configuration (`--resolv-conf`, /etc/resolv.conf).
- `None`: nothing but the pod's `dnsConfig`.

`dnsConfig` is then merged in (nameservers and searches appended without duplicates, options
overriding by name), and the limits of glibc's resolver applied: 3 nameservers, 32 search domains
of 2,048 characters in all; what is cut is said in a `DNSConfigForming` warning event.

/etc/hosts: localhost, the pod's own hostname (its FQDN first when it has a subdomain: StatefulSet
pods are `web-0.nginx.<ns>.svc.<zone>`) and `hostAliases`, in the kubelet's layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_NAMESERVERS = 3
MAX_SEARCHES = 32
MAX_SEARCH_CHARS = 2048
CLUSTER_OPTIONS = ["ndots:5"]


@dataclass
class ResolvConf:
    nameservers: list[str] = field(default_factory=list)
    searches: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)

    def render(self) -> str:
        lines = []
        if self.searches:
            lines.append("search " + " ".join(self.searches))
        lines += [f"nameserver {ns}" for ns in self.nameservers]
        if self.options:
            lines.append("options " + " ".join(self.options))
        return "\n".join(lines) + "\n" if lines else ""


@dataclass
class DNSEvent:
    """A warning the kubelet records on the pod (reason, message)."""

    reason: str
    message: str


def parse_resolv_conf(text: str) -> ResolvConf:
    """nameserver, search/domain and options lines, as glibc reads them (the last search or domain
    line wins)."""
    conf = ResolvConf()
    for line in text.splitlines():
        words = line.split("#", 1)[0].split(";", 1)[0].split()
        if not words:
            continue
        if words[0] == "nameserver" and len(words) > 1:
            conf.nameservers.append(words[1])
        elif words[0] in ("search", "domain"):
            conf.searches = [w.rstrip(".") for w in words[1:]]
        elif words[0] == "options":
            conf.options += words[1:]
    return conf


def host_resolv_conf(path: str) -> ResolvConf:
    """The node's resolver configuration (--resolv-conf; "" means none)."""
    if not path:
        return ResolvConf()
    try:
        return parse_resolv_conf(Path(path).read_text())
    except OSError:
        return ResolvConf()


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _merge_options(base: list[str], extra: list[dict[str, Any]]) -> list[str]:
    """Pod options override the ones of the same name; `name` or `name:value`, order kept."""
    merged: dict[str, str] = {}
    for opt in base:
        merged[opt.partition(":")[0]] = opt
    for option in extra:
        name = str(option.get("name") or "")
        if not name:
            continue
        value = option.get("value")
        merged[name] = f"{name}:{value}" if value not in (None, "") else name
    return list(merged.values())


def pod_dns_type(pod: dict[str, Any], cluster_dns: list[str]) -> tuple[str, DNSEvent | None]:
    """"cluster", "host" or "none" for this pod on this kubelet."""
    spec = pod.get("spec") or {}
    policy = spec.get("dnsPolicy") or "ClusterFirst"
    if policy == "None":
        return "none", None
    if policy == "Default" or (policy == "ClusterFirst" and spec.get("hostNetwork")):
        return "host", None
    if not cluster_dns:  # ClusterFirst or ClusterFirstWithHostNet without a cluster DNS to point at
        md = pod.get("metadata") or {}
        who = f"{md.get('name')}_{md.get('namespace') or 'default'}({md.get('uid') or ''})"
        return "host", DNSEvent(
            "MissingClusterDNS",
            f'pod: "{who}". kubelet does not have ClusterDNS IP configured and cannot create Pod using '
            '"ClusterFirst" policy. Falling back to "Default" policy.',
        )
    return "cluster", None


def pod_resolv_conf(
    pod: dict[str, Any], cluster_dns: list[str], cluster_domain: str, host: ResolvConf
) -> tuple[ResolvConf, list[DNSEvent]]:
    """The pod's resolv.conf, and the warnings the kubelet records while forming it."""
    kind, missing = pod_dns_type(pod, cluster_dns)
    events = [missing] if missing else []
    namespace = (pod.get("metadata") or {}).get("namespace") or "default"
    if kind == "none":
        conf = ResolvConf()
    elif kind == "host":
        conf = ResolvConf(list(host.nameservers), list(host.searches), list(host.options))
    else:
        zone = cluster_domain.strip(".")
        cluster_search = [f"{namespace}.svc.{zone}", f"svc.{zone}", zone] if zone else []
        conf = ResolvConf(list(cluster_dns), _unique(cluster_search + host.searches), list(CLUSTER_OPTIONS))
    extra = (pod.get("spec") or {}).get("dnsConfig") or {}
    if extra:
        conf.nameservers = _unique(conf.nameservers + [str(s) for s in extra.get("nameservers") or []])
        conf.searches = _unique(conf.searches + [str(s).rstrip(".") for s in extra.get("searches") or []])
        conf.options = _merge_options(conf.options, list(extra.get("options") or []))
    if len(conf.nameservers) > MAX_NAMESERVERS:
        conf.nameservers = conf.nameservers[:MAX_NAMESERVERS]
        events.append(DNSEvent(
            "DNSConfigForming",
            "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: "
            + " ".join(conf.nameservers),
        ))  # fmt: skip
    searches = _fit_searches(conf.searches)
    if searches != conf.searches:
        conf.searches = searches
        events.append(DNSEvent(
            "DNSConfigForming",
            "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: "
            + " ".join(searches),
        ))  # fmt: skip
    return conf, events


def _fit_searches(searches: list[str]) -> list[str]:
    out: list[str] = []
    length = 0
    for domain in searches[:MAX_SEARCHES]:
        length += len(domain) + (1 if out else 0)
        if length > MAX_SEARCH_CHARS:
            break
        out.append(domain)
    return out


def pod_hostname(pod: dict[str, Any]) -> str:
    """spec.hostname, else the pod's name (cut to 63 characters, a DNS label)."""
    spec = pod.get("spec") or {}
    name = spec.get("hostname") or (pod.get("metadata") or {}).get("name") or ""
    return str(name)[:63].rstrip("-.")


def pod_hosts_file(pod: dict[str, Any], pod_ip: str, cluster_domain: str, host_hosts: str = "") -> str:
    """/etc/hosts of the pod (a hostNetwork pod: the node's own file, plus its hostAliases)."""
    spec = pod.get("spec") or {}
    if spec.get("hostNetwork"):
        lines = ["# Kubernetes-managed hosts file (host network).", host_hosts.rstrip("\n")]
    else:
        lines = [
            "# Kubernetes-managed hosts file.",
            "127.0.0.1\tlocalhost",
            "::1\tlocalhost ip6-localhost ip6-loopback",
            "fe00::0\tip6-localnet",
            "fe00::0\tip6-mcastprefix",
            "fe00::1\tip6-allnodes",
            "fe00::2\tip6-allrouters",
        ]
        hostname = pod_hostname(pod)
        namespace = (pod.get("metadata") or {}).get("namespace") or "default"
        subdomain = spec.get("subdomain")
        if pod_ip and subdomain and cluster_domain:
            lines.append(f"{pod_ip}\t{hostname}.{subdomain}.{namespace}.svc.{cluster_domain.strip('.')}\t{hostname}")
        elif pod_ip:
            lines.append(f"{pod_ip}\t{hostname}")
    aliases = spec.get("hostAliases") or []
    if aliases:
        lines.append("")
        lines.append("# Entries added by HostAliases.")
        for alias in aliases:
            lines.append(f"{alias.get('ip')}\t" + "\t".join(alias.get("hostnames") or []))
    return "\n".join(lines) + "\n"
