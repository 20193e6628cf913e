"""scale, label/annotate, rollout, cordon/drain, run/expose/autoscale, logs, top, discovery verbs."""

from __future__ import annotations

import threading
import uuid

import httpx

from tests.kubectl.conftest import Pair

MERGE = {"Content-Type": "application/merge-patch+json"}


def _deployment(api: httpx.Client, ns: str, name: str = "web") -> dict:
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [{"name": "app", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}]
                },
            },
        },
    }
    r = api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def _revisions(api: httpx.Client, ns: str, d: dict) -> None:
    """ReplicaSets as the deployment controller leaves them: revisions 1 and 2, owned by `d`."""
    owner = [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": d["metadata"]["name"],
            "uid": d["metadata"]["uid"],
            "controller": True,
        }
    ]
    for rev, image, cause in ((1, "nginx:1.24", "first rollout"), (2, "nginx:1.25", "")):
        labels = {"app": d["metadata"]["name"], "pod-template-hash": f"h{rev}"}
        ann = {"deployment.kubernetes.io/revision": str(rev)} | (
            {"kubernetes.io/change-cause": cause} if cause else {}
        )
        rs = {
            "metadata": {
                "name": f"{d['metadata']['name']}-h{rev}",
                "labels": labels,
                "annotations": ann,
                "ownerReferences": owner,
            },
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "containers": [{"name": "app", "image": image, "ports": [{"containerPort": 80}]}]
                    },
                },
            },
        }
        assert api.post(f"/apis/apps/v1/namespaces/{ns}/replicasets", json=rs).status_code == 201


def test_scale_label_annotate_set_image_and_generators(pair: Pair, api: httpx.Client, ns: str) -> None:
    _deployment(api, ns)
    assert pair.mini("scale", "deploy/web", "--replicas=5", "-n", ns).out == "deployment.apps/web scaled\n"
    assert api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/web").json()["spec"]["replicas"] == 5
    assert pair.mini("run", "solo", "--image=nginx", "--port=80", "-n", ns).out == "pod/solo created\n"
    real_run = pair.real("run", "x", "--image=nginx", "--port=80", "--dry-run=client", "-o", "json", "-n", ns)
    mini_run = pair.mini("run", "x", "--image=nginx", "--port=80", "--dry-run=client", "-o", "json", "-n", ns)
    import json

    def strip(o: dict) -> dict:  # the parts that do not depend on when it ran
        meta = {k: v for k, v in o["metadata"].items() if k != "creationTimestamp"}
        return {k: v for k, v in o.items() if k != "status"} | {"metadata": meta}

    assert strip(json.loads(mini_run.out)) == strip(json.loads(real_run.out))
    # label / annotate: each message and error as kubectl prints it, step by step on twin pods.
    pair.real("run", "twin", "--image=nginx", "-n", ns)
    steps = [
        ("label", "a=b"),
        ("label", "a=c"),
        ("label", "a=c", "--overwrite"),
        ("label", "a=c", "--overwrite"),
        ("label", "a-"),
        ("label", "a-"),
        ("annotate", "x=y"),
        ("annotate", "x=z"),
        ("annotate", "x-"),
        ("annotate", "example.com/load=1"),
        ("annotate", "example.com/load-"),
    ]
    for verb, *rest in steps:
        real = pair.real(verb, "pod", "twin", *rest, "-n", ns)
        mini = pair.mini(verb, "pod", "solo", *rest, "-n", ns)
        assert (mini.rc, mini.out.replace("solo", "twin"), mini.err.replace("solo", "twin")) == (
            real.rc,
            real.out,
            real.err,
        ), (verb, rest)
    assert (
        pair.mini("set", "image", "deployment/web", "app=nginx:1.26", "-n", ns).out
        == "deployment.apps/web image updated\n"
    )
    real, mini = pair.both(
        "expose",
        "deploy",
        "web",
        "--port=8080",
        "--target-port=80",
        "--dry-run=client",
        "-o",
        "json",
        "-n",
        ns,
    )
    assert {k: json.loads(mini.out)[k] for k in ("spec",)} == {k: json.loads(real.out)[k] for k in ("spec",)}
    assert pair.mini("expose", "deploy", "web", "-n", ns).out == "service/web exposed\n"
    assert (
        pair.mini("autoscale", "deploy", "web", "--max=5", "--cpu-percent=70", "-n", ns).out
        == "horizontalpodautoscaler.autoscaling/web autoscaled\n"
    )
    hpa = api.get(f"/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers/web").json()
    assert hpa["spec"]["scaleTargetRef"]["name"] == "web" and hpa["spec"]["maxReplicas"] == 5


def test_rollout_history_undo_pause_restart_and_status(pair: Pair, api: httpx.Client, ns: str) -> None:
    d = _deployment(api, ns)
    _revisions(api, ns, d)
    for args in (
        ("rollout", "history", "deployment/web"),
        ("rollout", "history", "deploy", "web", "--revision=1"),
    ):
        real, mini = pair.both(*args, "-n", ns)
        assert (mini.rc, mini.out) == (real.rc, real.out), args
    real, mini = pair.both("rollout", "undo", "deploy/web", "--to-revision=7", "-n", ns)
    assert (
        (mini.rc, mini.err)
        == (real.rc, real.err)
        == (1, "error: unable to find specified revision 7 in history\n")
    )
    undo = pair.mini("rollout", "undo", "deploy/web", "-n", ns)
    assert undo.out == "deployment.apps/web rolled back\n", undo.err
    template = api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/web").json()["spec"]["template"]
    assert template["spec"]["containers"][0]["image"] == "nginx:1.24"
    assert "pod-template-hash" not in template["metadata"]["labels"]
    assert pair.mini("rollout", "pause", "deploy/web", "-n", ns).out == "deployment.apps/web paused\n"
    real, mini = pair.both("rollout", "pause", "deploy/web", "-n", ns)
    assert (mini.rc, mini.err) == (real.rc, real.err)
    assert pair.mini("rollout", "resume", "deploy/web", "-n", ns).out == "deployment.apps/web resumed\n"
    assert pair.mini("rollout", "restart", "deploy/web", "-n", ns).out == "deployment.apps/web restarted\n"
    live = api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/web").json()
    assert "kubectl.kubernetes.io/restartedAt" in live["spec"]["template"]["metadata"]["annotations"]
    # status: simulate the controller through /status and compare kubectl's messages at each stage.
    gen = live["metadata"]["generation"]
    stages = [
        {"observedGeneration": gen, "replicas": 3, "updatedReplicas": 1, "availableReplicas": 0},
        {"observedGeneration": gen, "replicas": 4, "updatedReplicas": 3, "availableReplicas": 2},
        {"observedGeneration": gen, "replicas": 3, "updatedReplicas": 3, "availableReplicas": 1},
    ]
    for status in stages:
        r = api.patch(
            f"/apis/apps/v1/namespaces/{ns}/deployments/web/status", json={"status": status}, headers=MERGE
        )
        assert r.status_code == 200, r.text
        real, mini = pair.both("rollout", "status", "deploy/web", "--watch=false", "-n", ns)
        assert (mini.rc, mini.out) == (real.rc, real.out) and mini.out.startswith("Waiting for deployment")
    # With --watch (the default) mini-kubectl follows until the rollout completes, then exits 0.
    result: dict = {}
    t = threading.Thread(
        target=lambda: result.update(r=pair.mini("rollout", "status", "deploy/web", "-n", ns, fresh=True))
    )
    t.start()
    done = {"observedGeneration": gen, "replicas": 3, "updatedReplicas": 3, "availableReplicas": 3}
    import time

    deadline = time.monotonic() + 60
    while t.is_alive() and time.monotonic() < deadline:  # re-send until the watcher has seen it
        api.patch(
            f"/apis/apps/v1/namespaces/{ns}/deployments/web/status", json={"status": done}, headers=MERGE
        )
        t.join(2)
    assert not t.is_alive()
    assert result["r"].rc == 0 and result["r"].out.endswith('deployment "web" successfully rolled out\n')


def test_cordon_drain_logs_top_and_discovery(pair: Pair, api: httpx.Client, ns: str) -> None:
    node, twin = f"n-{uuid.uuid4().hex[:6]}", f"t-{uuid.uuid4().hex[:6]}"  # mini's node, kubectl's node
    for name in (node, twin):
        api.post("/api/v1/nodes", json={"metadata": {"name": name}})
    for verb in ("cordon", "cordon", "uncordon", "uncordon"):
        real, mini = pair.real(verb, twin), pair.mini(verb, node)
        assert (mini.rc, mini.out.replace(node, twin)) == (real.rc, real.out), verb
    for name, pod_ns in ((node, ns), (twin, ns)):
        pod = {
            "metadata": {"name": f"bare-{name}"},
            "spec": {"nodeName": name, "containers": [{"name": "c", "image": "x"}]},
        }
        assert api.post(f"/api/v1/namespaces/{pod_ns}/pods", json=pod).status_code == 201
    real, mini = pair.real("drain", twin), pair.mini("drain", node)
    assert (mini.rc, mini.out.replace(node, twin), mini.err.replace(node, twin)) == (
        real.rc,
        real.out,
        real.err,
    )
    mini = pair.mini("drain", node, "--force", "--grace-period=0", "--timeout=60s")
    assert mini.rc == 0, mini.err
    assert mini.out.splitlines() == [
        f"node/{node} already cordoned",
        f"pod/bare-{node} evicted",
        f"node/{node} drained",
    ]
    assert mini.err == (
        f"Warning: deleting Pods that declare no controller: {ns}/bare-{node}\n"
        f"evicting pod {ns}/bare-{node}\n"
    )
    assert api.get(f"/api/v1/namespaces/{ns}/pods/bare-{node}").status_code == 404
    # logs: the pod exists but no node runs it - the API server's answer, as kubectl shows it.
    api.post(
        f"/api/v1/namespaces/{ns}/pods",
        json={"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
    )
    for cmd in (("logs", "p", "-n", ns), ("logs", "nope", "-n", ns), ("logs", "p", "-c", "zz", "-n", ns)):
        real, mini = pair.real(*cmd), pair.mini(*cmd)
        assert (mini.rc, mini.err) == (real.rc, real.err), cmd
    # this API server has no metrics-server behind it: no metrics.k8s.io in discovery
    for cmd in (("top", "nodes"), ("top", "pods", "-n", ns)):
        real, mini = pair.both(*cmd)
        assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err), cmd
        assert (mini.rc, mini.err) == (1, "error: Metrics API not available\n")
    for cmd in (("api-resources",), ("api-versions",), ("api-resources", "--namespaced=false")):
        real, mini = pair.both(*cmd)
        assert (mini.rc, mini.out) == (real.rc, real.out), cmd
    real, mini = pair.both("version")
    assert mini.out.splitlines()[-1] == real.out.splitlines()[-1]  # Server Version: v1.32.0-mini-k8s
    assert "_MINI_KUBECTL_COMPLETE" in pair.mini("completion", "bash").out
