"""`mini-kubelet --runtime process` end to end: real processes, real logs, real exit codes, with
the real kubectl (see conftest.py for the cluster)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.conftest import Cluster, state, unique
from tests.support.component import wait_for
from tests.support.examples import EXAMPLES_DIR

CGROUP_ROOTS = [Path("/sys/fs/cgroup/memory/mini-k8s"), Path("/sys/fs/cgroup/mini-k8s"),
                Path("/sys/fs/cgroup/cpu/mini-k8s")]


def apply(cluster: Cluster, doc: dict[str, Any]) -> None:
    out = subprocess.run([cluster.kubectl_path, "-s", cluster.apiserver.url, "apply", "-f", "-"],
                         input=json.dumps(doc), capture_output=True, text=True, timeout=30)  # fmt: skip
    assert out.returncode == 0, out.stderr


def pod_doc(name: str, container: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", **container}], **spec}}  # fmt: skip


def test_node_reports_the_process_runtime(cluster: Cluster) -> None:
    out = cluster.kubectl("get", "node", cluster.node, "-o", "wide")
    assert out.returncode == 0, out.stderr
    assert "mini-process://0.1" in out.stdout


def test_run_echo_hi_completes_and_logs_hi(cluster: Cluster) -> None:
    name = unique("tmp")
    out = cluster.kubectl("run", name, "--image=busybox", "--restart=Never", "--", "echo", "hi")
    assert out.returncode == 0, out.stderr
    pod = cluster.wait_pod(name, lambda p: p["status"].get("phase") == "Succeeded")
    terminated = state(pod)["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
    assert terminated["containerID"].startswith("mini-process://")
    assert " Completed " in cluster.kubectl("get", "pod", name).stdout
    logs = cluster.kubectl("logs", name)
    assert (logs.returncode, logs.stdout) == (0, "hi\n"), logs.stderr
    stamped = cluster.kubectl("logs", name, "--timestamps").stdout
    assert stamped[:4].isdigit() and stamped.endswith("Z hi\n")


def test_the_pi_job_prints_pi(cluster: Cluster) -> None:
    out = cluster.kubectl("apply", "-f", str(EXAMPLES_DIR / "pi-job.yaml"))
    assert out.returncode == 0, out.stderr

    def succeeded_pod() -> str | None:
        pods = cluster.api.get("/api/v1/namespaces/default/pods", params={"labelSelector": "job-name=pi"}).json()
        done = [p for p in pods["items"] if p["status"].get("phase") == "Succeeded"]
        return done[0]["metadata"]["name"] if done else None

    try:
        name = wait_for(succeeded_pod, timeout=60, what="a Succeeded pi pod")
    except AssertionError as exc:
        pods = cluster.kubectl("get", "pods", "-o", "wide").stdout
        raise AssertionError(f"{exc}\n{pods}\nkubelet log:\n{cluster.kubelet.log_tail(30)}") from None
    logs = cluster.kubectl("logs", name)
    assert logs.stdout.startswith("3.14159"), logs.stdout + logs.stderr
    assert len(logs.stdout.strip()) > 150  # bpi(200): two hundred digits


def test_a_crashing_container_goes_to_crashloopbackoff_with_previous_logs(cluster: Cluster) -> None:
    name = unique("crash")
    out = cluster.kubectl("run", name, "--image=busybox", "--", "sh", "-c", "echo run $HOSTNAME; exit 3")
    assert out.returncode == 0, out.stderr
    pod = cluster.wait_pod(name, lambda p: state(p).get("restartCount", 0) >= 2
                           and state(p)["state"].get("waiting", {}).get("reason") == "CrashLoopBackOff")  # fmt: skip
    last = state(pod)["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (3, "Error")
    previous = cluster.kubectl("logs", name, "--previous")
    assert (previous.returncode, previous.stdout) == (0, f"run {name}\n"), previous.stderr
    assert "CrashLoopBackOff" in cluster.kubectl("get", "pod", name).stdout
    events = cluster.kubectl("get", "events", "--field-selector", f"involvedObject.name={name}").stdout
    assert "Back-off restarting failed container c" in events


def test_a_cpu_limit_is_a_cfs_quota_that_throttles_a_busy_loop(cluster: Cluster) -> None:
    name = unique("cpu")
    resources = {"requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}}
    apply(cluster, pod_doc(name, {"image": "busybox", "command": ["sh", "-c", "while :; do :; done"],
                                  "resources": resources}))  # fmt: skip
    pod = cluster.wait_pod(name, lambda p: state(p).get("state", {}).get("running"))
    cid = state(pod)["containerID"].split("://", 1)[1]
    v1, v2 = Path("/sys/fs/cgroup/cpu/mini-k8s") / cid, Path("/sys/fs/cgroup/mini-k8s") / cid
    if v1.exists():
        cgroup = v1
        assert (cgroup / "cpu.cfs_quota_us").read_text().strip() == "20000"  # 200m of each 100 ms
        assert (cgroup / "cpu.shares").read_text().strip() == "102"  # 100m * 1024 / 1000
    elif (v2 / "cpu.max").exists():
        cgroup = v2
        assert (cgroup / "cpu.max").read_text().split() == ["20000", "100000"]
    else:
        pytest.skip("this machine has no cpu cgroup controller (neither v1's hierarchy nor v2's cpu.max)")
    pid_file = cluster.root_dir / "containers" / cid / "pid.json"  # the shim writes it just after the fork
    pid = int(json.loads(wait_for(lambda: pid_file.exists() and pid_file.read_text(), what="pid.json"))["pid"])
    assert str(pid) in (cgroup / "cgroup.procs").read_text().split()

    def throttled() -> bool:
        stat = dict(line.split() for line in (cgroup / "cpu.stat").read_text().splitlines())
        return int(stat["nr_throttled"]) > 3

    wait_for(throttled, timeout=10, what="the kernel throttling the loop at its quota")
    cluster.kubectl("delete", "pod", name, "--wait=false")
    wait_for(lambda: not cgroup.exists(), timeout=30, what="its cpu cgroup removed with it")


def test_a_memory_hog_is_oomkilled(cluster: Cluster) -> None:
    name = unique("hog")
    hog = {"image": "python", "command": ["python3", "-c", "a = bytearray(400 * 1024 * 1024); print(len(a))"],
           "resources": {"limits": {"memory": "64Mi"}}}  # fmt: skip
    apply(cluster, pod_doc(name, hog, restartPolicy="Never"))
    pod = cluster.wait_pod(name, lambda p: p["status"].get("phase") == "Failed")
    terminated = state(pod)["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (137, "OOMKilled")
    assert " OOMKilled " in cluster.kubectl("get", "pod", name).stdout


def test_env_fieldref_configmap_expansion_and_hostname(cluster: Cluster) -> None:
    name = unique("env")
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-cm"},
          "data": {"GREETING": "hello", "color": "blue"}}  # fmt: skip
    apply(cluster, cm)
    container = {
        "image": "busybox",
        "command": ["sh", "-c", 'echo "$1"; hostname', "--"],
        "args": ["$(GREETING) $(MY_POD) $(COLOR) $(MEM) $$(LITERAL) $(UNDEFINED)"],
        "env": [
            {"name": "MY_POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "COLOR", "valueFrom": {"configMapKeyRef": {"name": f"{name}-cm", "key": "color"}}},
            {"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}}},
        ],
        "envFrom": [{"configMapRef": {"name": f"{name}-cm"}}],
        "resources": {"limits": {"memory": "128Mi"}},
    }
    apply(cluster, pod_doc(name, container, restartPolicy="Never"))
    cluster.wait_pod(name, lambda p: p["status"].get("phase") == "Succeeded")
    logs = cluster.kubectl("logs", name).stdout
    assert logs == f"hello {name} blue 128 $(LITERAL) $(UNDEFINED)\n{name}\n"


def test_a_missing_configmap_is_createcontainerconfigerror(cluster: Cluster) -> None:
    name = unique("nocm")
    container = {"image": "busybox", "command": ["true"],
                 "envFrom": [{"configMapRef": {"name": "does-not-exist"}}]}  # fmt: skip
    apply(cluster, pod_doc(name, container))
    pod = cluster.wait_pod(name, lambda p: state(p).get("state", {}).get("waiting", {}).get("reason")
                           == "CreateContainerConfigError")  # fmt: skip
    assert state(pod)["state"]["waiting"]["message"] == 'configmap "does-not-exist" not found'


def test_an_unknown_image_without_command_is_imagepullbackoff(cluster: Cluster) -> None:
    name = unique("nope")
    apply(cluster, pod_doc(name, {"image": "example.com/no-such-image:1"}))
    reasons: set[str] = set()

    def backing_off() -> dict[str, Any] | None:
        pod = cluster.pod(name)
        waiting = state(pod).get("state", {}).get("waiting", {})
        reasons.add(waiting.get("reason", ""))
        return pod if waiting.get("reason") == "ImagePullBackOff" else None

    pod = wait_for(backing_off, timeout=20, interval=0.05, what="ImagePullBackOff")
    assert "catalog" in state(pod)["state"]["waiting"]["message"]
    events = cluster.kubectl("get", "events", "--field-selector", f"involvedObject.name={name}").stdout
    assert "Error: ErrImagePull" in events and "Error: ImagePullBackOff" in events
    assert 'Failed to pull image "example.com/no-such-image:1"' in events


def test_init_containers_run_first_and_in_order(cluster: Cluster) -> None:
    name = unique("init")
    inits = [{"name": "one", "image": "busybox", "command": ["echo", "first"]},
             {"name": "two", "image": "busybox", "command": ["sh", "-c", "echo second"]}]  # fmt: skip
    doc = pod_doc(name, {"image": "busybox", "command": ["sh", "-c", "echo main; sleep 3600"]}, initContainers=inits)
    apply(cluster, doc)
    pod = cluster.wait_pod(name, lambda p: p["status"].get("phase") == "Running" and state(p).get("ready"))
    inits = pod["status"]["initContainerStatuses"]
    assert [s["state"]["terminated"]["reason"] for s in inits] == ["Completed", "Completed"]
    assert inits[0]["state"]["terminated"]["finishedAt"] <= inits[1]["state"]["terminated"]["startedAt"]
    assert cluster.kubectl("logs", name, "-c", "two").stdout == "second\n"
    assert cluster.kubectl("logs", name, "-c", "c").stdout == "main\n"


def _watch_until_deleted(cluster: Cluster, name: str, rv: str) -> list[dict[str, Any]]:
    seen = []
    params = {"watch": "1", "fieldSelector": f"metadata.name={name}", "resourceVersion": rv}
    with cluster.api.stream("GET", "/api/v1/namespaces/default/pods", params=params, timeout=30) as resp:
        for line in resp.iter_lines():
            if line:
                event = json.loads(line)
                seen.append(event["object"])
                if event["type"] == "DELETED":
                    break
    return seen


def test_graceful_termination_sigkills_after_the_grace_period(cluster: Cluster) -> None:
    name = unique("stubborn")
    script = "trap 'echo ignoring TERM' TERM; echo started; while true; do sleep 0.2; done"
    apply(cluster, pod_doc(name, {"image": "busybox", "command": ["sh", "-c", script]},
                           terminationGracePeriodSeconds=1))  # fmt: skip
    pod = cluster.wait_pod(name, lambda p: state(p).get("ready"))
    out = cluster.kubectl("delete", "pod", name, "--wait=false")
    assert out.returncode == 0, out.stderr
    seen = _watch_until_deleted(cluster, name, pod["metadata"]["resourceVersion"])
    final = [state(p)["state"]["terminated"] for p in seen if "terminated" in state(p).get("state", {})]
    assert final and final[-1]["exitCode"] == 137 and final[-1]["reason"] == "Error"


def test_kubelet_crash_and_restart_adopts_running_containers(cluster: Cluster) -> None:
    name = unique("adopt")
    apply(cluster, pod_doc(name, {"image": "busybox", "command": ["sh", "-c", "echo up; sleep 3600"]}))
    before = state(cluster.wait_pod(name, lambda p: state(p).get("ready")))
    cluster.restart_kubelet()
    # a change the new kubelet must act on proves it is running the pod again
    out = cluster.kubectl("label", "pod", name, "touched=yes")
    assert out.returncode == 0, out.stderr
    wait_for(lambda: cluster.kubectl("logs", name).stdout == "up\n", what="logs served by the new kubelet")
    after = state(cluster.pod(name))
    assert after["containerID"] == before["containerID"]
    assert after["state"]["running"]["startedAt"] == before["state"]["running"]["startedAt"]
    assert after["restartCount"] == 0
    cid = after["containerID"].split("://", 1)[1]
    assert json.loads((cluster.root_dir / "containers" / cid / "meta.json").read_text())["pod"] == name


def _ours(cluster: Cluster, cid: str) -> list[str]:
    """Every trace of one container run: its directory, its cgroup, processes naming it."""
    left = [str(p) for p in [cluster.root_dir / "containers" / cid, *(r / cid for r in CGROUP_ROOTS)] if p.exists()]
    ps = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True).stdout
    left += [line for line in ps.splitlines() if cid in line]
    return left


def test_deleting_a_pod_leaves_no_process_cgroup_or_directory(cluster: Cluster) -> None:
    name = unique("gone")
    doc = pod_doc(name, {"image": "busybox", "command": ["sh", "-c", "sleep 3600 & sleep 3600"],
                         "resources": {"limits": {"memory": "32Mi"}}}, terminationGracePeriodSeconds=2)  # fmt: skip
    apply(cluster, doc)
    pod = cluster.wait_pod(name, lambda p: state(p).get("ready"))
    cid = state(pod)["containerID"].split("://", 1)[1]
    uid = pod["metadata"]["uid"]
    veth = json.loads((cluster.root_dir / "sandboxes" / f"{uid}.json").read_text())["veth"]
    network = [Path(f"/var/run/netns/mk-{uid}"), Path(f"/sys/class/net/{veth}")]

    def traces() -> list[str]:
        return _ours(cluster, cid) + [str(p) for p in network if p.exists()]

    assert len(traces()) >= 5  # directory, cgroup, shim, namespace, veth: the listing finds them
    out = cluster.kubectl("delete", "pod", name, "--wait=true", timeout=60)
    assert out.returncode == 0, out.stderr
    wait_for(lambda: not traces(), timeout=15, what="no trace of the pod")


def test_logs_follow_streams_until_the_container_exits(cluster: Cluster) -> None:
    name = unique("follow")
    script = "for i in 1 2 3; do echo line $i; sleep 0.3; done; echo oops >&2"
    apply(cluster, pod_doc(name, {"image": "busybox", "command": ["sh", "-c", script]}, restartPolicy="Never"))
    cluster.wait_pod(name, lambda p: state(p).get("containerID"))  # started (running, or done already)
    out = cluster.kubectl("logs", "-f", name, timeout=30)
    assert (out.returncode, out.stdout) == (0, "line 1\nline 2\nline 3\noops\n"), out.stderr
    assert cluster.kubectl("logs", name, "--tail=1").stdout == "oops\n"


def test_containers_get_the_service_variables(cluster: Cluster) -> None:
    svc = unique("myweb")
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": svc},
               "spec": {"selector": {"app": svc}, "ports": [{"name": "http", "port": 8080}]}}  # fmt: skip
    apply(cluster, service)
    ip = cluster.api.get(f"/api/v1/namespaces/default/services/{svc}").json()["spec"]["clusterIP"]
    var = svc.upper().replace("-", "_")
    name = unique("svcenv")
    script = f'echo "${var}_SERVICE_HOST:${var}_SERVICE_PORT ${var}_PORT ${var}_SERVICE_PORT_HTTP"'
    apply(cluster, pod_doc(name, {"image": "busybox", "command": ["sh", "-c", script]}, restartPolicy="Never"))
    cluster.wait_pod(name, lambda p: p["status"].get("phase") == "Succeeded")
    assert cluster.kubectl("logs", name).stdout == f"{ip}:8080 tcp://{ip}:8080 8080\n"
