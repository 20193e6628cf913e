"""`describe`: the same layout as kubectl 1.32, line for line (ages normalised)."""

from __future__ import annotations

import uuid

import httpx

from tests.kubectl.conftest import Pair, normalise
from tests.support.examples import EXAMPLES_DIR

EXAMPLES = str(EXAMPLES_DIR)


def _event(api: httpx.Client, obj: dict, reason: str, message: str, count: int = 1) -> None:
    md = obj["metadata"]
    ns = md.get("namespace") or "default"
    body = {
        "metadata": {"name": f"{md['name']}.{uuid.uuid4().hex[:6]}"},
        "type": "Normal",
        "reason": reason,
        "message": message,
        "count": count,
        "source": {"component": "compat-test"},
        "involvedObject": {
            "kind": obj["kind"],
            "name": md["name"],
            "namespace": md.get("namespace", ""),
            "uid": md["uid"],
        },
        "firstTimestamp": md["creationTimestamp"],
        "lastTimestamp": md["creationTimestamp"],
    }
    assert api.post(f"/api/v1/namespaces/{ns}/events", json=body).status_code == 201


def test_describe_matches_kubectl_for_pod_rc_rs_deployment_node_service_namespace(
    pair: Pair, api: httpx.Client, ns: str
) -> None:
    r = pair.real(
        "apply",
        "-n",
        ns,
        "-f",
        f"{EXAMPLES}/nginx-rc.yaml",
        "-f",
        f"{EXAMPLES}/myweb-nodeport.yaml",
        "-f",
        f"{EXAMPLES}/nginx-deployment.yaml",
    )
    assert r.rc == 0, r.err
    pod = {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": "web",
            "labels": {"app": "web", "tier": "fe"},
            "annotations": {"note": "x" * 150},
        },
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "nginx:1.25",
                    "command": ["nginx"],
                    "args": ["-g", "daemon off;"],
                    "ports": [{"containerPort": 80}, {"containerPort": 443}],
                    "env": [{"name": "MODE", "value": "prod"}],
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "200m"}},
                    "livenessProbe": {"httpGet": {"path": "/healthz", "port": 80}},
                    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                }
            ],
            "volumes": [{"name": "data", "emptyDir": {}}],
            "nodeSelector": {"disk": "ssd"},
            "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}],
        },
    }
    created = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod).json()
    _event(api, created, "Scheduled", "Successfully assigned")
    _event(api, created, "Pulled", "Container image already present", count=3)
    rc = api.get(f"/api/v1/namespaces/{ns}/replicationcontrollers/nginx-server").json()
    _event(api, {**rc, "kind": "ReplicationController"}, "SuccessfulCreate", "Created pod: nginx-server-abc")
    dep = api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/nginx-deployment").json()
    owner = [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": "nginx-deployment",
            "uid": dep["metadata"]["uid"],
            "controller": True,
        }
    ]
    template = dep["spec"]["template"]
    for i, image in ((1, "nginx:1.7.8"), (2, template["spec"]["containers"][0]["image"])):
        t = {
            "metadata": {"labels": {**template["metadata"]["labels"], "pod-template-hash": f"h{i}"}},
            "spec": {"containers": [{**template["spec"]["containers"][0], "image": image}]},
        }
        rs = {
            "metadata": {
                "name": f"nginx-deployment-h{i}",
                "labels": t["metadata"]["labels"],
                "ownerReferences": owner,
                "annotations": {"deployment.kubernetes.io/revision": str(i)},
            },
            "spec": {
                "replicas": 2 if i == 2 else 0,
                "selector": {"matchLabels": t["metadata"]["labels"]},
                "template": t,
            },
        }
        assert api.post(f"/apis/apps/v1/namespaces/{ns}/replicasets", json=rs).status_code == 201
    node = f"n-{uuid.uuid4().hex[:6]}"
    api.post(
        "/api/v1/nodes",
        json={
            "metadata": {"name": node, "labels": {"node-role.kubernetes.io/worker": ""}},
            "spec": {
                "taints": [{"key": "a", "value": "b", "effect": "NoSchedule"}],
                "podCIDR": "10.244.9.0/24",
            },
        },
    )
    api.put(
        f"/api/v1/nodes/{node}/status",
        json={
            **api.get(f"/api/v1/nodes/{node}").json(),
            "status": {
                "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                "addresses": [{"type": "InternalIP", "address": "10.0.0.9"}],
                "nodeInfo": {
                    "kubeletVersion": "v1.32.0",
                    "operatingSystem": "linux",
                    "architecture": "amd64",
                },
            },
        },
    )
    commands = [
        ("describe", "pod", "web", "-n", ns),
        ("describe", "rc", "nginx-server", "-n", ns),
        ("describe", "deploy", "nginx-deployment", "-n", ns),
        ("describe", "rs", "-n", ns),
        ("describe", "node", node),
        ("describe", "svc", "myweb", "-n", ns),
        ("describe", "ns", ns),
        ("describe", "pods", "we", "-n", ns),
        ("describe", "pod", "nope", "-n", ns),
    ]
    for cmd, (real, mini) in zip(commands, pair.many(commands), strict=True):
        assert mini.rc == real.rc, (cmd, real.err, mini.err)
        assert mini.err == real.err, cmd
        assert normalise(mini.out) == normalise(real.out), (cmd, real.out, mini.out)
    # Where nothing depends on the clock, the layout is identical to the byte.
    real, mini = pair.both("describe", "rc", "nginx-server", "-n", ns, "--show-events=false")
    assert mini.out == real.out
