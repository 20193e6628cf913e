"""`describe quota`, `describe limits` and the quota/limit part of `describe namespace`, side by side
with the real kubectl (which prints a limit's resources in random order: those rows are compared
as a set; mini-kubectl sorts them). No controller runs: the quotas' status is written through `/status`, as the
resourcequota controller would write it."""

from __future__ import annotations

import httpx

from tests.kubectl.conftest import Pair

QUOTAS = [
    {"metadata": {"name": "compute"}, "spec": {"hard": {"pods": "5", "requests.cpu": "2", "limits.memory": "2Gi"}}},
    {"metadata": {"name": "scoped"},
     "spec": {"hard": {"pods": "3", "count/deployments.apps": "2"}, "scopes": ["NotTerminating", "BestEffort"]}},
    {"metadata": {"name": "priority"},
     "spec": {"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [
         {"operator": "In", "scopeName": "PriorityClass", "values": ["high"]}]}}},
]  # fmt: skip
LIMITS = {
    "metadata": {"name": "limits"},
    "spec": {"limits": [
        {"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"}, "defaultRequest": {"cpu": "100m"},
         "max": {"cpu": "1"}, "min": {"cpu": "50m"}, "maxLimitRequestRatio": {"cpu": "10"}},
        {"type": "Pod", "max": {"memory": "1Gi"}},
        {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}},
    ]},
}  # fmt: skip


def test_describe_quota_and_limits_match_kubectl(pair: Pair, api: httpx.Client, ns: str) -> None:
    for q in QUOTAS:
        made = api.post(f"/api/v1/namespaces/{ns}/resourcequotas", json=q).json()
        used = {name: "1" if name == "pods" else "0" for name in q["spec"]["hard"]}
        r = api.put(f"/api/v1/namespaces/{ns}/resourcequotas/{q['metadata']['name']}/status",
                    json={**made, "status": {"hard": q["spec"]["hard"], "used": used}})  # fmt: skip
        assert r.status_code == 200, r.text
    assert api.post(f"/api/v1/namespaces/{ns}/limitranges", json=LIMITS).status_code == 201
    commands = [
        ("describe", "quota", "-n", ns), ("describe", "quota", "scoped", "-n", ns),
        ("describe", "limits", "-n", ns), ("describe", "limitrange", "limits", "-n", ns),
        ("describe", "namespace", ns), ("describe", "quota", "nothere", "-n", ns),
    ]  # fmt: skip
    for command, (real, mini) in zip(commands, pair.many(commands), strict=True):
        if command[1] in ("limits", "limitrange", "namespace"):
            # kubectl lists one limit item's resources in Go's random map order: compare rows as a set
            assert (mini.rc, sorted(mini.out.splitlines()), mini.err) == (
                real.rc, sorted(real.out.splitlines()), real.err), command  # fmt: skip
            continue
        assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err), command
    assert "* Matches all pods that do not have an active deadline." in pair.real(*commands[1]).out
