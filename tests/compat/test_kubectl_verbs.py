"""The imperative verbs: delete, scale, label, annotate, create namespace, describe."""

from __future__ import annotations

import json
import re
import uuid

import httpx

from tests.compat.conftest import Kubectl, event_for, pod, two_container_deployment


def _rc(name: str) -> dict:
    labels = {"app": name}
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": labels,
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        },
    }


def test_delete_pod_by_name(kubectl: Kubectl, api: httpx.Client, ns: str) -> None:
    assert api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("x")).status_code == 201
    assert kubectl.ok("delete", "pod", "x", "-n", ns).out.strip() == 'pod "x" deleted'
    assert api.get(f"/api/v1/namespaces/{ns}/pods/x").status_code == 404
    r = kubectl("delete", "pod", "x", "-n", ns)
    assert r.rc == 1 and r.err.strip() == 'Error from server (NotFound): pods "x" not found'


def test_scale_deployment_and_rc(kubectl: Kubectl, api: httpx.Client, ns: str) -> None:
    assert api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=two_container_deployment("d")).status_code == 201
    assert api.post(f"/api/v1/namespaces/{ns}/replicationcontrollers", json=_rc("r")).status_code == 201
    assert kubectl.ok("scale", "deployment", "d", "--replicas=3", "-n", ns).out.strip() == "deployment.apps/d scaled"
    assert kubectl.ok("scale", "rc", "r", "--replicas=0", "-n", ns).out.strip() == "replicationcontroller/r scaled"
    assert api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/d").json()["spec"]["replicas"] == 3
    assert api.get(f"/api/v1/namespaces/{ns}/replicationcontrollers/r").json()["spec"]["replicas"] == 0
    # --current-replicas is a precondition kubectl checks against the Scale it reads first.
    r = kubectl("scale", "deployment", "d", "--current-replicas=2", "--replicas=5", "-n", ns)
    assert r.rc == 1 and r.err.strip() == "error: Expected replicas to be 2, was 3"


def test_label_and_annotate(kubectl: Kubectl, api: httpx.Client, ns: str) -> None:
    assert api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("web")).status_code == 201
    assert kubectl.ok("label", "pod", "web", "tier=frontend", "-n", ns).out.strip() == "pod/web labeled"
    assert kubectl.ok("annotate", "pod", "web", "owner=alice", "-n", ns).out.strip() == "pod/web annotated"
    md = api.get(f"/api/v1/namespaces/{ns}/pods/web").json()["metadata"]
    assert md["labels"] == {"app": "web", "tier": "frontend"} and md["annotations"]["owner"] == "alice"
    assert kubectl.ok("label", "pod", "web", "tier-", "-n", ns).out.strip() == "pod/web unlabeled"
    assert api.get(f"/api/v1/namespaces/{ns}/pods/web").json()["metadata"]["labels"] == {"app": "web"}
    r = kubectl("label", "pod", "web", "app=other", "-n", ns)
    assert r.rc == 1 and "already has a value (web)" in r.err


def test_create_namespace(kubectl: Kubectl, api: httpx.Client) -> None:
    name = f"made-{uuid.uuid4().hex[:6]}"
    assert kubectl.ok("create", "namespace", name).out.strip() == f"namespace/{name} created"
    assert api.get(f"/api/v1/namespaces/{name}").json()["status"]["phase"] == "Active"
    r = kubectl("create", "namespace", name)
    assert r.rc == 1 and r.err.strip() == f'Error from server (AlreadyExists): namespaces "{name}" already exists'


def test_describe_pod_lists_only_its_own_events(kubectl: Kubectl, api: httpx.Client, ns: str) -> None:
    web = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("web")).json()
    mine = event_for(web, "web.1", "Scheduled", "Successfully assigned to node-1")
    # Same name, other uid: an event about an earlier pod called "web" that no longer exists.
    stale = event_for(web, "web.2", "Killing", "Stopping the old web pod", uid=str(uuid.uuid4()))
    for ev in (mine, stale):
        assert api.post(f"/api/v1/namespaces/{ns}/events", json=ev).status_code == 201
    out = kubectl.ok("describe", "pod", "web", "-n", ns).out
    assert out.startswith("Name:") and "web" in out.splitlines()[0]
    assert f"Namespace:        {ns}" in out
    assert "Status:           Pending" in out
    assert re.findall(r"^ +Image: +(\S+)$", out, re.M) == ["nginx:1.25"]
    events = out[out.index("Events:") :]
    assert "Scheduled" in events and "Successfully assigned to node-1" in events
    assert "Stopping the old web pod" not in events


def test_describe_deployment_shows_replicas_containers_and_events(kubectl: Kubectl, api: httpx.Client, ns: str) -> None:
    d = api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=two_container_deployment("d")).json()
    ev = event_for(d, "d.1", "ScalingReplicaSet", "Scaled up replica set d-abc to 2")
    assert api.post(f"/api/v1/namespaces/{ns}/events", json=ev).status_code == 201
    out = kubectl.ok("describe", "deployment", "d", "-n", ns).out
    lines = out.splitlines()
    assert lines[0].split() == ["Name:", "d"]
    assert "Selector:               app=d" in out
    assert "Replicas:               2 desired | 0 updated | 0 total | 0 available | 0 unavailable" in out
    assert "StrategyType:           RollingUpdate" in out
    assert re.findall(r"^ +Image: +(\S+)$", out, re.M) == ["nginx:1.7.9", "busybox:1.36"]
    events = out[out.index("Events:") :]
    assert "ScalingReplicaSet" in events and "Scaled up replica set d-abc to 2" in events


def test_describe_missing_is_not_found(kubectl: Kubectl, ns: str) -> None:
    r = kubectl("describe", "pod", "nope", "-n", ns)
    assert r.rc == 1 and r.err.strip() == 'Error from server (NotFound): pods "nope" not found'


def test_create_generators_whose_bodies_kubectl_sends_as_protobuf(kubectl: Kubectl, api: httpx.Client, ns: str) -> None:
    """kubectl's typed clients send protobuf; the server must read these bodies in full."""
    cases = [
        (["configmap", "cm", "--from-literal=a=b"], "configmap/cm created"),
        (["secret", "generic", "s", "--from-literal=k=v"], "secret/s created"),
        (["serviceaccount", "robot"], "serviceaccount/robot created"),
        (["deployment", "dep", "--image=nginx:1.25", "--port=80", "--replicas=0"], "deployment.apps/dep created"),
        (["service", "nodeport", "sv", "--tcp=80:8080"], "service/sv created"),
        (["job", "jb", "--image=busybox", "--", "echo", "hi"], "job.batch/jb created"),
        (["cronjob", "cj", "--image=busybox", "--schedule=*/5 * * * *"], "cronjob.batch/cj created"),
    ]
    for args, expected in cases:
        assert kubectl.ok("create", "-n", ns, *args).out.strip() == expected  # -n first: `--` ends flags
    base = f"/api/v1/namespaces/{ns}"
    assert api.get(f"{base}/configmaps/cm").json()["data"] == {"a": "b"}
    assert api.get(f"{base}/secrets/s").json()["data"] == {"k": "dg=="}  # base64 of "v"
    dep = api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/dep").json()
    assert dep["spec"]["replicas"] == 0  # a pointer field: zero is kept, not dropped
    assert dep["spec"]["selector"] == {"matchLabels": {"app": "dep"}}
    (container,) = dep["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "nginx:1.25" and container["ports"][0]["containerPort"] == 80
    port = api.get(f"{base}/services/sv").json()["spec"]["ports"][0]
    assert port["port"] == 80 and port["targetPort"] == 8080 and 30000 <= port["nodePort"] <= 32767
    job = api.get(f"/apis/batch/v1/namespaces/{ns}/jobs/jb").json()
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["echo", "hi"]
    cj = api.get(f"/apis/batch/v1/namespaces/{ns}/cronjobs/cj").json()
    assert cj["spec"]["schedule"] == "*/5 * * * *"


def _as_sent(obj: dict) -> dict:
    """What the client chose of an object: its body without what the server adds."""
    md = {k: v for k, v in obj["metadata"].items() if k in ("name", "namespace", "labels", "annotations")}
    return {**{k: v for k, v in obj.items() if k not in ("metadata", "status")}, "metadata": md}


def test_protobuf_bodies_of_more_generators_are_read_in_full(kubectl: Kubectl, api: httpx.Client, ns: str) -> None:
    """Each object the server decoded from kubectl's protobuf body equals the JSON kubectl would send."""
    rbac = "rbac.authorization.k8s.io"
    cases = [
        (["role", "pod-reader", "--verb=get,list", "--resource=pods,deployments.apps"], "roles", rbac),
        (["rolebinding", "rb", "--role=pod-reader", "--user=alice", "--serviceaccount=default:robot"], "rolebindings",
         rbac),
        (["clusterrole", f"cr-{ns}", "--verb=get", "--resource=nodes", "--non-resource-url=/healthz"], "clusterroles",
         rbac),
        (["clusterrolebinding", f"crb-{ns}", f"--clusterrole=cr-{ns}", "--group=devs"], "clusterrolebindings", rbac),
        (["quota", "q", "--hard=pods=2,cpu=1,requests.memory=1Gi", "--scopes=NotBestEffort"], "resourcequotas", ""),
        (["secret", "docker-registry", "reg", "--docker-server=r.example", "--docker-username=u",
          "--docker-password=p"], "secrets", ""),
    ]  # fmt: skip
    for args, plural, group in cases:
        want = json.loads(kubectl.ok("create", "-n", ns, *args, "--dry-run=client", "-o", "json").out)
        kubectl.ok("create", "-n", ns, *args)
        prefix = f"/apis/{group}/" if group else "/api/"
        scope = "" if plural.startswith("cluster") else f"namespaces/{ns}/"
        got = api.get(f"{prefix}{want['apiVersion'].split('/')[-1]}/{scope}{plural}/{want['metadata']['name']}").json()
        assert _as_sent(got) == _as_sent(want), args


def test_protobuf_body_we_cannot_read_says_to_send_json(api: httpx.Client, ns: str) -> None:
    envelope = b"k8s\x00" + bytes([0x0A, 9]) + b"\x0a\x02v1\x12\x03Foo"  # TypeMeta{apiVersion: v1, kind: Foo}
    headers = {"Content-Type": "application/vnd.kubernetes.protobuf"}
    r = api.post(f"/api/v1/namespaces/{ns}/configmaps", content=envelope, headers=headers)
    assert r.status_code == 415
    assert "v1 Foo cannot be read from protobuf here" in r.json()["message"]
    assert "send it as application/json or application/yaml" in r.json()["message"]
