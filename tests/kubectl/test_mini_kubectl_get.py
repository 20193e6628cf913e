"""`get`: mini-kubectl prints what the real kubectl prints, on the same server."""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid

import httpx
import yaml

from tests.kubectl.conftest import Pair, cells, write_kubeconfig
from tests.support.examples import EXAMPLES_DIR

EXAMPLES = str(EXAMPLES_DIR)


def _seed(pair: Pair, api: httpx.Client, ns: str) -> str:
    """RCs and services from the repository's examples/, a deployment, a pod, an event and a node."""
    r = pair.real(
        "apply",
        "-n",
        ns,
        "-f",
        f"{EXAMPLES}/nginx-rc.yaml",
        "-f",
        f"{EXAMPLES}/mysql-rc-svc.yaml",
        "-f",
        f"{EXAMPLES}/nginx-deployment.yaml",
    )
    assert r.rc == 0, r.err
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "solo", "labels": {"app": "solo", "tier": "x"}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}]},
    }
    created = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod).json()
    event = {
        "metadata": {"name": "solo.1"},
        "type": "Normal",
        "reason": "Scheduled",
        "message": "hello",
        "involvedObject": {"kind": "Pod", "name": "solo", "namespace": ns, "uid": created["metadata"]["uid"]},
        "source": {"component": "test"},
        "count": 1,
        "firstTimestamp": created["metadata"]["creationTimestamp"],
        "lastTimestamp": created["metadata"]["creationTimestamp"],
    }
    assert api.post(f"/api/v1/namespaces/{ns}/events", json=event).status_code == 201
    node = f"n-{uuid.uuid4().hex[:6]}"
    assert (
        api.post("/api/v1/nodes", json={"metadata": {"name": node, "labels": {"zone": "a"}}}).status_code
        == 201
    )
    return node


def test_tables_match_kubectl_for_every_kind_and_flag(pair: Pair, api: httpx.Client, ns: str) -> None:
    node = _seed(pair, api, ns)
    commands = [
        ("get", "pods", "-n", ns),
        ("get", "rc", "-n", ns),
        ("get", "rs", "-n", ns),
        ("get", "deploy", "-n", ns),
        ("get", "svc", "-n", ns),
        ("get", "ep", "-n", ns),
        ("get", "events", "-n", ns),
        ("get", "ns", ns),
        ("get", "nodes", node),
        ("get", "nodes", node, "-o", "wide"),
        ("get", "pods", "-o", "wide", "-n", ns),
        ("get", "rc,svc", "-n", ns, "-o", "wide"),
        ("get", "all", "-n", ns),
        ("get", "pods", "--show-labels", "-n", ns),
        ("get", "deploy,svc", "-n", ns, "--show-labels"),
        ("get", "rc/nginx-server", "svc/mysql", "-n", ns),
        ("get", "pods", "-l", "app=solo", "-n", ns),
        ("get", "pods", "--field-selector", "metadata.name=solo", "-n", ns),
    ]
    for cmd, (real, mini) in zip(commands, pair.many(commands), strict=True):
        assert real.rc == mini.rc == 0, (cmd, real.err, mini.err)
        assert cells(mini.out) == cells(real.out), (cmd, real.out, mini.out)
        assert mini.err == real.err, cmd


def test_name_yaml_json_and_jsonpath_outputs_carry_the_same_data(
    pair: Pair, api: httpx.Client, ns: str
) -> None:
    _seed(pair, api, ns)
    runs = pair.many(
        [
            ("get", "all", "-n", ns, "-o", "name"),
            ("get", "pods", "-n", ns, "-o", "json"),
            ("get", "deploy", "nginx-deployment", "-n", ns, "-o", "yaml"),
            ("get", "rc", "-n", ns, "-o", "yaml"),
            ("get", "pods", "-n", ns, "-o", "jsonpath={.items[*].metadata.name}"),
            (
                "get",
                "rc",
                "nginx-server",
                "-n",
                ns,
                "-o",
                "jsonpath={range .spec.template.spec.containers[*]}{.name}={.image}{'\\n'}{end}",
            ),
        ]
    )
    (name_r, name_m), (json_r, json_m), (dy_r, dy_m), (ry_r, ry_m), (jp_r, jp_m), (rng_r, rng_m) = runs
    assert name_m.out == name_r.out and "deployment.apps/nginx-deployment" in name_m.out
    assert json.loads(json_m.out) == json.loads(json_r.out)
    assert yaml.safe_load(dy_m.out) == yaml.safe_load(dy_r.out)
    assert yaml.safe_load(ry_m.out) == yaml.safe_load(ry_r.out)
    assert jp_m.out == jp_r.out == "solo"
    assert rng_m.out == rng_r.out and "nginx-server=" in rng_m.out


def test_errors_and_empty_results_read_like_kubectl(pair: Pair, ns: str) -> None:
    runs = pair.many(
        [
            ("get", "pods", "nope", "-n", ns),
            ("get", "pods", "-n", ns),
            ("get", "nosuchtype"),
            ("get", "pods", "-A", "-l", "nothing=here"),
        ]
    )
    runs.append(
        (
            pair.real("-s", "http://127.0.0.1:1", "get", "pods"),
            pair.mini("-s", "http://127.0.0.1:1", "get", "pods", fresh=True),
        )
    )  # the real entry point
    for real, mini in runs:
        assert mini.rc == real.rc
        assert mini.out == real.out
        assert mini.err.strip().splitlines()[-1] == real.err.strip().splitlines()[-1]
    assert runs[0][1].err == 'Error from server (NotFound): pods "nope" not found\n'
    assert runs[1][1].err == f"No resources found in {ns} namespace.\n" and runs[1][1].rc == 0
    assert runs[4][1].err.strip() == (
        "The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?"
    )


def test_namespace_flags_contexts_and_config_commands(pair: Pair, api: httpx.Client, ns: str) -> None:
    api.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "here"}})
    cfg = write_kubeconfig(pair.home / f"kc-{ns}", pair.server.url, namespace=ns)
    env = {"KUBECONFIG": str(cfg)}
    assert "here" in pair.mini("get", "cm", "--context", "other", env=env).out
    assert "here" not in pair.mini("get", "cm", env=env).out
    # -A adds a NAMESPACE column and finds it across namespaces, exactly as kubectl does.
    real, mini = pair.both("get", "cm", "-A", "--field-selector", "metadata.name=here")
    assert cells(mini.out) == cells(real.out) and mini.out.startswith("NAMESPACE")
    assert pair.mini("get", "-n", ns, "cm", "here", "-o", "name").out == "configmap/here\n"
    # config: both tools read the same file the same way...
    for args in (("config", "get-contexts"), ("config", "current-context")):
        r, m = pair.real(*args, env=env), pair.mini(*args, env=env)
        assert (m.rc, m.out) == (r.rc, r.out), args
    # ...and what mini-kubectl writes, kubectl reads.
    assert pair.mini("config", "use-context", "other", env=env).out == 'Switched to context "other".\n'
    assert pair.real("config", "current-context", env=env).out == "other\n"
    assert (
        pair.mini("config", "set-context", "--current", "--namespace=default", env=env).out
        == 'Context "other" modified.\n'
    )
    assert (
        pair.real(
            "config", "view", "-o", "jsonpath={.contexts[?(@.name=='other')].context.namespace}", env=env
        ).out
        == "default"
    )
    r, m = pair.real("config", "view", env=env), pair.mini("config", "view", env=env)
    assert yaml.safe_load(m.out) == yaml.safe_load(r.out)


def test_watch_prints_the_table_then_one_line_per_change(pair: Pair, api: httpx.Client, ns: str) -> None:
    api.post(
        f"/api/v1/namespaces/{ns}/pods",
        json={"metadata": {"name": "a"}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
    )
    proc = pair.stream("get", "pods", "-w", "-n", ns)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x.rstrip("\n")) for x in proc.stdout], daemon=True).start()  # type: ignore[union-attr]

    def next_line(timeout: float = 30.0) -> str:
        return lines.get(timeout=timeout)

    try:
        assert next_line().split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
        assert next_line().split()[0] == "a"
        deadline = time.monotonic() + 30
        api.post(
            f"/api/v1/namespaces/{ns}/pods",
            json={
                "metadata": {"name": "much-longer-name"},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        )
        line = next_line(max(1.0, deadline - time.monotonic()))
        assert line.split()[:3] == ["much-longer-name", "0/1", "Pending"]
        api.patch(
            f"/api/v1/namespaces/{ns}/pods/a",
            json={"metadata": {"labels": {"x": "y"}}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        line = next_line()
        # kubectl keeps the widest column width seen so far: "a" is now padded like the long name.
        assert line.startswith("a" + " " * (len("much-longer-name") + 2))
    finally:
        proc.kill()
        proc.wait(5)
