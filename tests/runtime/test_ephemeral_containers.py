"""Ephemeral containers (`kubectl debug`) run by the process-runtime kubelet, with the real kubectl.

The secure process-runtime cluster of test_exec.py. `kubectl debug` adds a container to
spec.ephemeralContainers through pods/ephemeralcontainers; the kubelet starts it in the pod's
network namespace (own UTS and mount namespaces, as every container here), never restarts it,
reports it in status.ephemeralContainerStatuses, and stops and removes it with the pod.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.runtime.test_attach import PROMPT, kubectl_on_a_terminal, pod_of
from tests.runtime.test_exec import Secure, secure  # noqa: F401  (the module's cluster)
from tests.support.component import wait_for


def ephemeral_status(s: Secure, pod: str, name: str) -> dict[str, Any]:
    statuses = (pod_of(s, pod).get("status") or {}).get("ephemeralContainerStatuses") or []
    return next((x for x in statuses if x.get("name") == name), {})


def runs_of(s: Secure, uid: str) -> list[Path]:
    out = []
    for meta in (s.root / "containers").glob("*/meta.json"):
        try:
            if json.loads(meta.read_text()).get("uid") == uid:
                out.append(meta.parent)
        except (OSError, ValueError):
            continue
    return out


def test_kubectl_debug_runs_a_container_in_the_pods_namespaces(secure: Secure) -> None:  # noqa: F811
    name = secure.pod("eph-app")
    out = secure.kubectl("debug", name, "--image=busybox", "-c", "dbg", "--", "sh", "-c", "echo hi; sleep 3600")
    assert out.returncode == 0, out.stderr
    running = wait_for(lambda: ephemeral_status(secure, name, "dbg").get("state", {}).get("running"),
                       timeout=30, what="dbg running")  # fmt: skip
    assert running["startedAt"]
    status = ephemeral_status(secure, name, "dbg")
    assert status["ready"] is False and status["restartCount"] == 0 and "started" not in status
    assert status["containerID"].startswith("mini-process://")
    wait_for(lambda: secure.kubectl("logs", name, "-c", "dbg").stdout == "hi\n", what="the debug container's log")
    host = secure.kubectl("exec", name, "-c", "dbg", "--", "hostname")
    assert (host.returncode, host.stdout) == (0, f"{name}\n"), host
    netns = [secure.kubectl("exec", name, "-c", c, "--", "readlink", "/proc/self/ns/net").stdout
             for c in ("main", "dbg")]  # fmt: skip
    assert netns[0] == netns[1] and netns[0].startswith("net:["), netns  # the pod's network namespace
    pod = pod_of(secure, name)
    assert pod["status"]["phase"] == "Running"
    assert {c["type"]: c["status"] for c in pod["status"]["conditions"]}["Ready"] == "True"
    events = secure.kubectl("get", "events", "--field-selector", f"involvedObject.name={name}",
                            "-o", "jsonpath={range .items[*]}{.reason}: {.message}{'\\n'}{end}").stdout  # fmt: skip
    assert "Created: Created container: dbg" in events and "Started: Started container dbg" in events, events
    # a kubelet restart adopts it: the same run goes on
    cid = status["containerID"]
    secure.restart_kubelet()
    assert secure.kubectl("exec", name, "-c", "dbg", "--", "true").returncode == 0
    assert ephemeral_status(secure, name, "dbg")["containerID"] == cid
    # it stops and goes with the pod
    uid = pod["metadata"]["uid"]
    assert len(runs_of(secure, uid)) == 2
    assert secure.kubectl("delete", "pod", name, "--wait=true", timeout=60).returncode == 0
    wait_for(lambda: not runs_of(secure, uid), timeout=30, what="the pod's runs removed")


def test_kubectl_debug_it_attaches_and_the_container_is_never_restarted(secure: Secure) -> None:  # noqa: F811
    name = secure.pod("eph-it", restartPolicy="Always")
    term = kubectl_on_a_terminal(secure, "debug", "-it", name, "--image=busybox", "--target=main", "-c", "shell",
                                 "--", "sh")  # fmt: skip
    try:
        term.read_until(PROMPT.encode())
        term.type(b"echo h''i-$((40+2)); exit 7\n")
        term.read_until(b"hi-42")
        assert term.wait(60) == 0, term.seen
    finally:
        term.close()
    terminated = wait_for(lambda: ephemeral_status(secure, name, "shell").get("state", {}).get("terminated"),
                          timeout=30, what="shell terminated")  # fmt: skip
    assert terminated["exitCode"] == 7 and terminated["reason"] == "Error"
    assert b"Targeting container \"main\"" in term.seen
    # never restarted (a pod with restartPolicy Always notwithstanding), and the pod runs on
    again = secure.kubectl("get", "pod", name, "-o", "json")
    status = json.loads(again.stdout)["status"]
    (shell,) = status["ephemeralContainerStatuses"]
    assert shell["restartCount"] == 0 and "terminated" in shell["state"]
    assert status["phase"] == "Running"
    assert secure.kubectl("exec", name, "-c", "shell", "--", "true").returncode == 1  # it is not running


def test_the_simulated_runtime_reports_ephemeral_containers_running(secure: Secure) -> None:  # noqa: F811
    name = secure.pod("eph-sim", node=secure.sim_node)
    out = secure.kubectl("debug", name, "--image=busybox", "-c", "dbg", "--", "sleep", "3600")
    assert out.returncode == 0, out.stderr
    wait_for(lambda: ephemeral_status(secure, name, "dbg").get("state", {}).get("running"), timeout=30,
             what="dbg running (simulated)")  # fmt: skip
    out = secure.kubectl("attach", name, "-c", "dbg")
    assert out.returncode == 1 and "the simulated runtime runs no processes" in out.stderr, out.stderr


def test_an_ephemeral_container_stops_when_the_pod_finishes(secure: Secure) -> None:  # noqa: F811
    main = {"name": "main", "image": "busybox", "command": ["sh", "-c", "read x; echo main-got-$x"], "stdin": True}
    name = secure.pod("eph-done", restartPolicy="Never", containers=[main])
    out = secure.kubectl("debug", name, "--image=busybox", "-c", "dbg", "--", "sleep", "3600")
    assert out.returncode == 0, out.stderr
    wait_for(lambda: ephemeral_status(secure, name, "dbg").get("state", {}).get("running"), what="dbg running")
    finish = secure.kubectl("attach", "-i", name, "-c", "main", stdin="go\n")  # main reads its line and exits 0
    assert finish.returncode == 0, finish.stderr
    wait_for(lambda: pod_of(secure, name)["status"]["phase"] == "Succeeded", what="the pod Succeeded")
    stopped = wait_for(lambda: ephemeral_status(secure, name, "dbg").get("state", {}).get("terminated"),
                       timeout=30, what="dbg stopped with the pod")  # fmt: skip
    assert stopped["exitCode"] in (137, 143)  # SIGTERM (sleep may die of it) or SIGKILL after the grace period
    assert pod_of(secure, name)["status"]["phase"] == "Succeeded"  # it counts for nothing in the phase
