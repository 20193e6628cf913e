"""The resolv.conf and /etc/hosts the kubelet forms for a pod (kubelet/dns.py), policy by policy,
with Kubernetes' merge rules, limits and warning messages."""

from __future__ import annotations

from typing import Any

from kubelet import dns

HOST = dns.parse_resolv_conf("# the node's\nnameserver 192.0.2.53\nsearch corp.example lab.example\noptions edns0\n")
CLUSTER_DNS = ["10.96.0.10"]


def pod(spec: dict[str, Any] | None = None, name: str = "p", namespace: str = "shop") -> dict[str, Any]:
    meta = {"name": name, "namespace": namespace, "uid": "u-1"}
    return {"metadata": meta, "spec": {"containers": [], **(spec or {})}}


def resolv(spec: dict[str, Any] | None = None, cluster_dns: list[str] = CLUSTER_DNS) -> tuple[str, list[dns.DNSEvent]]:
    conf, events = dns.pod_resolv_conf(pod(spec), cluster_dns, "cluster.local", HOST)
    return conf.render(), events


def test_cluster_first_points_at_the_cluster_dns_with_the_namespace_first_in_the_search_path() -> None:
    text, events = resolv()
    assert text == (
        "search shop.svc.cluster.local svc.cluster.local cluster.local corp.example lab.example\n"
        "nameserver 10.96.0.10\noptions ndots:5\n"
    )
    assert events == []


def test_a_host_network_pod_gets_the_nodes_resolver_unless_it_asks_for_the_cluster() -> None:
    host_text = "search corp.example lab.example\nnameserver 192.0.2.53\noptions edns0\n"
    assert resolv({"hostNetwork": True})[0] == host_text
    assert resolv({"hostNetwork": True, "dnsPolicy": "ClusterFirstWithHostNet"})[0].startswith(
        "search shop.svc.cluster.local"
    )
    assert resolv({"dnsPolicy": "Default"})[0] == host_text


def test_without_a_cluster_dns_cluster_first_falls_back_to_default_and_says_so() -> None:
    text, events = resolv(cluster_dns=[])
    assert text.startswith("search corp.example lab.example\nnameserver 192.0.2.53")
    assert [(e.reason, e.message) for e in events] == [(
        "MissingClusterDNS",
        'pod: "p_shop(u-1)". kubelet does not have ClusterDNS IP configured and cannot create Pod using '
        '"ClusterFirst" policy. Falling back to "Default" policy.',
    )]  # fmt: skip


def test_policy_none_is_only_the_pods_dns_config_and_options_override_by_name() -> None:
    config = {"nameservers": ["1.2.3.4"], "searches": ["a.example."],
              "options": [{"name": "ndots", "value": "2"}, {"name": "edns0"}]}  # fmt: skip
    assert resolv({"dnsPolicy": "None", "dnsConfig": config})[0] == (
        "search a.example\nnameserver 1.2.3.4\noptions ndots:2 edns0\n"
    )
    merged = resolv({"dnsConfig": {**config, "nameservers": ["10.96.0.10", "1.2.3.4"]}})[0]
    assert "nameserver 10.96.0.10\nnameserver 1.2.3.4\n" in merged  # appended without duplicates
    assert merged.endswith("options ndots:2 edns0\n")  # the pod's ndots replaces the cluster's 5


def test_more_than_three_nameservers_or_32_search_domains_are_cut_with_a_warning() -> None:
    servers = [f"192.0.2.{i}" for i in range(1, 6)]
    text, events = resolv({"dnsPolicy": "None", "dnsConfig": {"nameservers": servers}})
    assert text == "nameserver 192.0.2.1\nnameserver 192.0.2.2\nnameserver 192.0.2.3\n"
    assert [(e.reason, e.message) for e in events] == [(
        "DNSConfigForming", "Nameserver limits were exceeded, some nameservers have been omitted, the applied "
        "nameserver line is: 192.0.2.1 192.0.2.2 192.0.2.3")]  # fmt: skip
    domains = [f"d{i}.example" for i in range(40)]
    text, events = resolv({"dnsConfig": {"searches": domains}})
    search = text.splitlines()[0].split()[1:]
    assert len(search) == 32 and search[:3] == ["shop.svc.cluster.local", "svc.cluster.local", "cluster.local"]
    assert events[0].reason == "DNSConfigForming" and events[0].message.endswith(" ".join(search))


def test_the_hosts_file_names_the_pod_by_its_fqdn_when_it_has_a_subdomain_and_adds_host_aliases() -> None:
    spec = {"hostname": "web-0", "subdomain": "nginx",
            "hostAliases": [{"ip": "192.0.2.9", "hostnames": ["foo.local", "bar.local"]}]}  # fmt: skip
    text = dns.pod_hosts_file(pod(spec), "10.244.0.7", "cluster.local")
    assert text.startswith("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n")
    assert "10.244.0.7\tweb-0.nginx.shop.svc.cluster.local\tweb-0\n" in text
    assert text.endswith("\n# Entries added by HostAliases.\n192.0.2.9\tfoo.local\tbar.local\n")
    assert "10.244.0.8\tp\n" in dns.pod_hosts_file(pod(), "10.244.0.8", "cluster.local")
    host_net = dns.pod_hosts_file(pod({"hostNetwork": True}), "127.0.0.1", "cluster.local", "127.0.0.1 me\n")
    assert host_net == "# Kubernetes-managed hosts file (host network).\n127.0.0.1 me\n"


def test_the_hostname_is_spec_hostname_else_the_pod_name_cut_to_a_dns_label() -> None:
    assert dns.pod_hostname(pod({"hostname": "db-1"})) == "db-1"
    assert dns.pod_hostname(pod(name="x" * 70)) == "x" * 63
