"""On the secure port, API Priority and Fairness classifies a request by who it was authenticated
as (Kubernetes' FlowSchemas), not by its User-Agent: the same client program lands in `exempt`,
`service-accounts` or `global-default` depending on its credentials."""

from __future__ import annotations

import re
import ssl
from collections import Counter

import httpx
import yaml

from tests.security.conftest import BOB_TOKEN, SecureCluster

METRIC = re.compile(r'^apiserver_flowcontrol_dispatched_requests_total\{([^}]*)\} ([0-9.e+]+)$')


def dispatched(plain: httpx.Client) -> Counter[tuple[str, str]]:
    """(flow_schema, priority_level) → requests started, from the server's /metrics."""
    counts: Counter[tuple[str, str]] = Counter()
    for line in plain.get("/metrics").text.splitlines():
        m = METRIC.match(line)
        if m:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
            counts[(labels["flow_schema"], labels["priority_level"])] += int(float(m.group(2)))
    return counts


def test_the_secure_port_classifies_by_the_authenticated_user(secure: SecureCluster, plain: httpx.Client) -> None:
    admin = yaml.safe_load(secure.kubeconfigs["admin"].read_text())["users"][0]["user"]
    plain.post("/api/v1/namespaces/default/serviceaccounts", json={"metadata": {"name": "apf-bot"}})
    made = plain.post("/api/v1/namespaces/default/serviceaccounts/apf-bot/token", json={"spec": {}})
    assert made.status_code == 201, made.text
    sa_token = made.json()["status"]["token"]

    before = dispatched(plain)
    agent = {"User-Agent": "kubectl/v1.32.0 (linux/amd64) kubernetes/abc"}  # one program for every user
    tls = ssl.create_default_context(cafile=str(secure.ca))
    tls.load_cert_chain(admin["client-certificate"], admin["client-key"])
    with httpx.Client(base_url=secure.secure_url, verify=tls, headers=agent) as c:  # system:masters
        assert c.get("/api/v1/namespaces/default/configmaps").status_code == 200
    with secure.https(headers={**agent, "Authorization": f"Bearer {sa_token}"}) as c:
        assert c.get("/version").status_code == 200
    with secure.https(headers={**agent, "Authorization": f"Bearer {BOB_TOKEN}"}) as c:
        assert c.get("/version").status_code == 200
    with secure.https(headers=agent) as c:  # anonymous
        assert c.get("/readyz").status_code == 200
    after = dispatched(plain)

    grown = after - before
    assert grown[("exempt", "exempt")] >= 2, grown  # the administrator's, and the plain port's /metrics
    assert grown[("service-accounts", "workload-low")] == 1, grown
    assert grown[("global-default", "global-default")] == 1, grown  # bob only: not the administrator
    assert grown[("probes", "exempt")] == 1, grown
