"""On the secure port, API Priority and Fairness classifies a request by who it was authenticated
as (Kubernetes' FlowSchemas), not by its User-Agent: the same client program lands in `exempt`,
`service-accounts` or `global-default` depending on its credentials."""

from __future__ import annotations

import ssl

import httpx
import yaml

from tests.security.conftest import BOB_TOKEN, SecureCluster
from tests.support.flowcontrol import metric

SCHEMAS = [("exempt", "exempt"), ("service-accounts", "workload-low"), ("global-default", "global-default"),
           ("probes", "exempt")]  # fmt: skip


def dispatched(secure: SecureCluster) -> dict[tuple[str, str], float]:
    """Requests started per (flow_schema, priority_level), from the server's /metrics."""
    name = "apiserver_flowcontrol_dispatched_requests_total"
    return {(s, p): metric(secure.apiserver, name, flow_schema=s, priority_level=p) for s, p in SCHEMAS}


def test_the_secure_port_classifies_by_the_authenticated_user(secure: SecureCluster, plain: httpx.Client) -> None:
    admin = yaml.safe_load(secure.kubeconfigs["admin"].read_text())["users"][0]["user"]
    plain.post("/api/v1/namespaces/default/serviceaccounts", json={"metadata": {"name": "apf-bot"}})
    made = plain.post("/api/v1/namespaces/default/serviceaccounts/apf-bot/token", json={"spec": {}})
    assert made.status_code == 201, made.text
    sa_token = made.json()["status"]["token"]

    before = dispatched(secure)
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
    after = dispatched(secure)

    grown = {k: after[k] - before[k] for k in SCHEMAS}
    assert grown[("exempt", "exempt")] >= 2, grown  # the administrator's, and the plain port's /metrics reads
    assert grown[("service-accounts", "workload-low")] == 1, grown
    assert grown[("global-default", "global-default")] == 1, grown  # bob only: not the administrator
    assert grown[("probes", "exempt")] == 1, grown
