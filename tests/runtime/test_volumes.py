"""Pod volumes on the process runtime, end to end: emptyDir, configMap, secret, downwardAPI,
projected, hostPath, persistentVolumeClaim; subPath, readOnly; FailedMount; and that nothing of it
shows on the host outside the data dir (mountPaths such as /etc/mini-k8s-test-config never exist
there) or is left after the pod goes. See kubelet/volumes.py and kubelet/shim.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.conftest import Cluster, state, unique
from tests.support.component import ComponentProcess, free_port, wait_for

CONFIG_PATH = Path("/etc/mini-k8s-test-config")  # not on the host, before, during or after
HOST_ONLY_PATHS = [CONFIG_PATH, Path("/etc/mini-k8s-test-sub"), Path("/mini-k8s-test-data"), Path("/cache-mini-k8s")]


@pytest.fixture(scope="module", autouse=True)
def _host_paths_absent() -> Iterator[None]:
    already = [p for p in HOST_ONLY_PATHS if p.exists()]
    assert not already, f"remove these first: {already}"
    yield
    made = [p for p in HOST_ONLY_PATHS if p.exists()]
    assert not made, f"the tests made these on the host: {made}"


@pytest.fixture(scope="module")
def binder(cluster: Cluster) -> Iterator[None]:
    """The persistentvolume-binder, in a controller-manager of its own (the cluster's runs the Job controller)."""
    port = free_port()
    manager = ComponentProcess("controller_manager", ["--master", cluster.apiserver.url, "--port", str(port),
                                                      "--controllers", "persistentvolume-binder",
                                                      "--pvclaimbinder-sync-period", "1s"],
                               health_port=port).start()  # fmt: skip
    try:
        yield
    finally:
        manager.stop()


def create(cluster: Cluster, doc: dict[str, Any]) -> None:
    out = subprocess.run([cluster.kubectl_path, "-s", cluster.apiserver.url, "create", "-f", "-"],
                         input=json.dumps(doc), capture_output=True, text=True, timeout=30)  # fmt: skip
    assert out.returncode == 0, out.stderr


def pod(name: str, containers: list[dict[str, Any]], volumes: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    metadata = {"name": name, **spec.pop("metadata", {})}
    body = {"containers": containers, "volumes": volumes, "terminationGracePeriodSeconds": 1, **spec}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": body}


def sh(name: str, script: str, mounts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": name, "image": "busybox", "command": ["sh", "-c", script], "volumeMounts": mounts}


def config_map(name: str, data: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def logs(cluster: Cluster, name: str, container: str = "") -> str:
    out = cluster.kubectl("logs", name, *(["-c", container] if container else []))
    return out.stdout if out.returncode == 0 else ""


def wait_logs(cluster: Cluster, name: str, text: str, container: str = "", timeout: float = 30.0) -> str:
    try:
        return wait_for(lambda: (lambda out: out if text in out else "")(logs(cluster, name, container)),
                        timeout=timeout, interval=0.2, what=f"{text!r} in the log of {name}")  # fmt: skip
    except AssertionError as exc:
        raise AssertionError(f"{exc}\nstatus: {cluster.pod(name).get('status')}\n"
                             f"kubelet:\n{cluster.kubelet.log_tail(20)}") from None  # fmt: skip


def events(cluster: Cluster, name: str) -> list[dict[str, Any]]:
    resp = cluster.api.get("/api/v1/namespaces/default/events", params={"fieldSelector": f"involvedObject.name={name}"})
    resp.raise_for_status()
    return list(resp.json()["items"])


def running(p: dict[str, Any]) -> bool:
    return all("running" in (s.get("state") or {}) for s in (p.get("status") or {}).get("containerStatuses") or [{}])


def test_an_empty_dir_is_shared_by_the_containers_of_a_pod(cluster: Cluster) -> None:
    """Kubernetes' `test-pd` example (emptyDir at /cache, sizeLimit 500Mi) with a second container
    reading what the first writes, and a Memory emptyDir that is a tmpfs."""
    name = unique("test-pd")
    writer = sh("writer", "echo hello from $HOSTNAME > /cache-mini-k8s/msg; grep ' /mem ' /proc/mounts; "
                          "sleep 3600", [{"name": "cache-volume", "mountPath": "/cache-mini-k8s"},
                                         {"name": "mem", "mountPath": "/mem"}])  # fmt: skip
    reader = sh("reader", "until cat /mini-k8s-test-data/msg; do sleep 0.1; done; sleep 3600",
                [{"name": "cache-volume", "mountPath": "/mini-k8s-test-data"}])
    create(cluster, pod(name, [writer, reader], [{"name": "cache-volume", "emptyDir": {"sizeLimit": "500Mi"}},
                                                 {"name": "mem", "emptyDir": {"medium": "Memory",
                                                                              "sizeLimit": "16Mi"}}]))  # fmt: skip
    assert f"hello from {name}" in wait_logs(cluster, name, "hello from", "reader")
    tmpfs = wait_logs(cluster, name, " /mem ", "writer")
    assert "tmpfs /mem tmpfs" in tmpfs and "size=16384k" in tmpfs
    uid = cluster.pod(name)["metadata"]["uid"]
    shared = cluster.root_dir / "pods" / uid / "volumes" / "kubernetes.io~empty-dir" / "cache-volume" / "msg"
    assert shared.read_text() == f"hello from {name}\n"
    assert not Path("/cache-mini-k8s").exists() and not Path("/mini-k8s-test-data").exists()


def test_a_config_map_volume_appears_at_a_path_the_host_lacks_and_follows_updates(cluster: Cluster) -> None:
    name, cm = unique("cm-vol"), unique("game-config")
    create(cluster, config_map(cm, {"greeting": "hello", "game.properties": "lives=3\n"}))
    script = ("ls -A /etc/mini-k8s-test-config | tr '\\n' ' '; echo; last=; "
              "while true; do cur=$(cat /etc/mini-k8s-test-config/greeting); "
              "[ \"$cur\" != \"$last\" ] && echo \"greeting=$cur\"; last=$cur; sleep 0.2; done")
    create(cluster, pod(name, [sh("c", script, [{"name": "config", "mountPath": str(CONFIG_PATH)}])],
                        [{"name": "config", "configMap": {"name": cm}}]))  # fmt: skip
    out = wait_logs(cluster, name, "greeting=hello")
    listing = out.splitlines()[0].split()
    assert {"..data", "greeting", "game.properties"} <= set(listing)  # the atomic writer's layout
    assert any(entry.startswith("..20") for entry in listing)
    assert not CONFIG_PATH.exists()
    patch = cluster.kubectl("patch", "configmap", cm, "-p", json.dumps({"data": {"greeting": "bye"}}))
    assert patch.returncode == 0, patch.stderr
    wait_logs(cluster, name, "greeting=bye")
    assert not CONFIG_PATH.exists()


def test_the_docs_configmap_pod_with_items(cluster: Cluster) -> None:
    """Kubernetes' `configmap-pod` example: key log_level as /etc/config/log_level.conf (moved to
    a path no host has, so that the test can say the host never got it)."""
    name, cm = unique("configmap-pod"), unique("log-config")
    create(cluster, config_map(cm, {"log_level": "INFO", "other": "x"}))
    script = 'echo "The app is running!" && cat /etc/mini-k8s-test-config/log_level.conf && echo && ' \
             "ls /etc/mini-k8s-test-config && tail -f /dev/null"
    create(cluster, pod(name, [sh("test", script, [{"name": "config-vol", "mountPath": str(CONFIG_PATH)}])],
                        [{"name": "config-vol", "configMap": {"name": cm, "items": [
                            {"key": "log_level", "path": "log_level.conf"}]}}]))  # fmt: skip
    out = wait_logs(cluster, name, "log_level.conf\n")
    assert out.splitlines()[:3] == ["The app is running!", "INFO", "log_level.conf"]


def test_a_secret_volume_with_items_and_default_mode_0400(cluster: Cluster) -> None:
    name, secret = unique("secret-vol"), unique("db")
    create(cluster, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": secret},
                     "stringData": {"username": "admin", "password": "s3cret"}})  # fmt: skip
    script = ("stat -L -c '%a' /etc/secret-volume/db/password; cat /etc/secret-volume/db/password; echo; "
              "ls /etc/secret-volume; stat -L -c '%a' /etc/secret-volume/user; sleep 3600")
    create(cluster, pod(name, [sh("c", script, [{"name": "secret", "mountPath": "/etc/secret-volume"}])],
                        [{"name": "secret", "secret": {"secretName": secret, "defaultMode": 0o400, "items": [
                            {"key": "password", "path": "db/password"},
                            {"key": "username", "path": "user", "mode": 0o440}]}}]))  # fmt: skip
    out = wait_logs(cluster, name, "440")
    assert out.split() == ["400", "s3cret", "db", "user", "440"]
    assert not Path("/etc/secret-volume").exists()


def test_a_downward_api_volume_has_the_labels_file(cluster: Cluster) -> None:
    name = unique("downward")
    script = "cat /etc/podinfo/labels; echo; cat /etc/podinfo/name; echo; cat /etc/podinfo/mem; echo; sleep 3600"
    c = sh("client", script, [{"name": "podinfo", "mountPath": "/etc/podinfo"}])
    c["resources"] = {"limits": {"memory": "64Mi"}}
    create(cluster, pod(name, [c], [{"name": "podinfo", "downwardAPI": {"items": [
        {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
        {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}},
        {"path": "mem", "resourceFieldRef": {"containerName": "client", "resource": "limits.memory",
                                             "divisor": "1Mi"}}]}}],
                        metadata={"labels": {"zone": "us-est-coast", "cluster": "test-cluster1"}}))  # fmt: skip
    out = wait_logs(cluster, name, "\n64\n")
    assert out.splitlines()[:4] == ['cluster="test-cluster1"', 'zone="us-est-coast"', name, "64"]
    label = cluster.kubectl("label", "pod", name, "rack=r1")
    assert label.returncode == 0, label.stderr
    uid = cluster.pod(name)["metadata"]["uid"]
    labels = cluster.root_dir / "pods" / uid / "volumes" / "kubernetes.io~downward-api" / "podinfo" / "labels"
    wait_for(lambda: 'rack="r1"' in labels.read_text(), timeout=20, what="the new label in the file")


def test_a_projected_volume_joins_sources_and_refuses_a_token_it_cannot_get(cluster: Cluster) -> None:
    name, cm, secret = unique("projected"), unique("proj-cm"), unique("proj-secret")
    create(cluster, config_map(cm, {"config": "a=1"}))
    create(cluster, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": secret}, "stringData": {"user": "u"}})
    script = "cat /projected/config /projected/my-group/user /projected/ns; echo; sleep 3600"
    create(cluster, pod(name, [sh("c", script, [{"name": "all", "mountPath": "/projected"}])],
                        [{"name": "all", "projected": {"sources": [
                            {"configMap": {"name": cm}},
                            {"secret": {"name": secret, "items": [{"key": "user", "path": "my-group/user"}]}},
                            {"downwardAPI": {"items": [{"path": "ns", "fieldRef": {
                                "fieldPath": "metadata.namespace"}}]}}]}}]))  # fmt: skip
    assert "a=1udefault" in wait_logs(cluster, name, "a=1")
    # This test API server has no --service-account-signing-key-file: no TokenRequest API, so a
    # token source cannot be set up - a FailedMount event says why, the pod waits.
    name2 = unique("token")
    create(cluster, pod(name2, [sh("c", "sleep 3600", [{"name": "token", "mountPath": "/var/run/secrets/tokens"}])],
                        [{"name": "token", "projected": {"sources": [
                            {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}}]}}]))  # fmt: skip

    def failed_mount() -> str:
        return next((e["message"] for e in events(cluster, name2) if e["reason"] == "FailedMount"), "")

    message = wait_for(failed_mount, timeout=20, what="FailedMount for the token")
    assert message.startswith('MountVolume.SetUp failed for volume "token" : failed to fetch token')
    assert state(cluster.pod(name2))["state"]["waiting"]["reason"] == "ContainerCreating"


def test_host_path_directory_or_create_and_type_checks(cluster: Cluster, tmp_path: Path) -> None:
    name = unique("hostpath")
    target = tmp_path / "made" / "here"
    create(cluster, pod(name, [sh("c", "echo from-pod > /host/out.txt; sleep 3600",
                                  [{"name": "h", "mountPath": "/host"}])],
                        [{"name": "h", "hostPath": {"path": str(target), "type": "DirectoryOrCreate"}}]))  # fmt: skip
    wait_for(lambda: (target / "out.txt").exists() and (target / "out.txt").read_text() == "from-pod\n",
             timeout=30, what="the pod's file on the host")  # fmt: skip
    assert oct(target.stat().st_mode & 0o777) == "0o755"
    (tmp_path / "a-file").write_text("x")
    name2 = unique("hostpath-bad")
    create(cluster, pod(name2, [sh("c", "sleep 3600", [{"name": "h", "mountPath": "/host"}])],
                        [{"name": "h", "hostPath": {"path": str(tmp_path / "a-file"), "type": "Directory"}}]))

    def failed_mount() -> str:
        return next((e["message"] for e in events(cluster, name2) if e["reason"] == "FailedMount"), "")

    message = wait_for(failed_mount, timeout=20, what="FailedMount")
    assert message == f'MountVolume.SetUp failed for volume "h" : hostPath type check failed: {tmp_path / "a-file"} ' \
                      "is not a directory"


def test_a_claim_waits_until_bound_then_mounts_the_host_path_volume(cluster: Cluster, binder: None,
                                                                   tmp_path: Path) -> None:  # fmt: skip
    name, claim, volume = unique("pvc-pod"), unique("claim"), unique("pv")
    klass = f"manual-{uuid.uuid4().hex[:6]}"
    create(cluster, {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": claim},
                     "spec": {"storageClassName": klass, "accessModes": ["ReadWriteOnce"],
                              "resources": {"requests": {"storage": "1Gi"}}}})  # fmt: skip
    create(cluster, pod(name, [sh("c", "echo persisted > /usr/share/nginx/html/index.html; sleep 3600",
                                  [{"name": "www", "mountPath": "/usr/share/nginx/html"}])],
                        [{"name": "www", "persistentVolumeClaim": {"claimName": claim}}]))  # fmt: skip

    def failed_mount() -> str:
        return next((e["message"] for e in events(cluster, name) if e["reason"] == "FailedMount"), "")

    message = wait_for(failed_mount, timeout=20, what="FailedMount for the unbound claim")
    assert message == ("Unable to attach or mount volumes: unmounted volumes=[www], unattached volumes=[www], "
                       f"failed to process volumes=[www]: error processing PVC default/{claim}: PVC is not bound")
    assert state(cluster.pod(name))["state"]["waiting"]["reason"] == "ContainerCreating"
    data = tmp_path / "pv"
    data.mkdir()
    create(cluster, {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": volume},
                     "spec": {"storageClassName": klass, "capacity": {"storage": "2Gi"},
                              "accessModes": ["ReadWriteOnce"], "hostPath": {"path": str(data)}}})  # fmt: skip
    cluster.wait_pod(name, running, timeout=40, what="running once the claim is bound")
    wait_for(lambda: (data / "index.html").exists() and (data / "index.html").read_text() == "persisted\n",
             timeout=20, what="the file in the volume's directory")  # fmt: skip
    nginx = Path("/usr/share/nginx/html/index.html")
    assert not nginx.exists() or nginx.read_text() != "persisted\n"


def test_read_only_mounts_refuse_writes_and_sub_path_mounts_one_entry(cluster: Cluster) -> None:
    name, cm = unique("ro-sub"), unique("app-config")
    create(cluster, config_map(cm, {"app.conf": "port=80", "other.conf": "x"}))
    script = ("touch /ro/x 2>/dev/null && echo ro-written || echo ro-refused; "
              "touch /etc/mini-k8s-test-config/x 2>/dev/null && echo cm-written || echo cm-refused; "
              "cat /etc/mini-k8s-test-sub/app.conf; echo; ls /etc/mini-k8s-test-sub; "
              "echo sub > /logs/file; echo rw-done; sleep 3600")
    mounts: list[dict[str, Any]] = [{"name": "scratch", "mountPath": "/ro", "readOnly": True},
              {"name": "config", "mountPath": str(CONFIG_PATH)},
              {"name": "config", "mountPath": "/etc/mini-k8s-test-sub/app.conf", "subPath": "app.conf"},
              {"name": "scratch", "mountPath": "/logs", "subPathExpr": "logs-$(POD_NAME)"}]  # fmt: skip
    c = sh("c", script, mounts)
    c["env"] = [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]
    volumes = [{"name": "scratch", "emptyDir": {}}, {"name": "config", "configMap": {"name": cm}}]
    create(cluster, pod(name, [c], volumes))
    out = wait_logs(cluster, name, "rw-done")
    assert out.split() == ["ro-refused", "cm-refused", "port=80", "app.conf", "rw-done"]
    uid = cluster.pod(name)["metadata"]["uid"]
    sub = cluster.root_dir / "pods" / uid / "volumes" / "kubernetes.io~empty-dir" / "scratch" / f"logs-{name}" / "file"
    assert sub.read_text() == "sub\n"


def test_a_missing_config_map_is_failed_mount_until_it_is_created(cluster: Cluster) -> None:
    name, cm = unique("wait-cm"), unique("late")
    create(cluster, pod(name, [sh("c", "cat /etc/mini-k8s-test-config/k; echo; sleep 3600",
                                  [{"name": "config", "mountPath": str(CONFIG_PATH)}])],
                        [{"name": "config", "configMap": {"name": cm}}]))  # fmt: skip

    def failed_mount() -> dict[str, Any]:
        return next((e for e in events(cluster, name) if e["reason"] == "FailedMount"), {})

    event = wait_for(failed_mount, timeout=20, what="FailedMount")
    assert event["type"] == "Warning"
    assert event["message"] == f'MountVolume.SetUp failed for volume "config" : configmap "{cm}" not found'
    p = cluster.pod(name)
    assert p["status"]["phase"] == "Pending"
    assert state(p)["state"]["waiting"]["reason"] == "ContainerCreating"
    assert "ContainerCreating" in cluster.kubectl("get", "pod", name).stdout
    create(cluster, config_map(cm, {"k": "finally"}))
    cluster.wait_pod(name, running, timeout=30, what="running once the ConfigMap exists")
    wait_logs(cluster, name, "finally")


def _left(cluster: Cluster, uid: str) -> list[str]:
    base = cluster.root_dir / "pods" / uid
    with open("/proc/self/mountinfo") as f:
        mounts = [line.strip() for line in f if str(base) in line]
    dirs = [str(base)] if base.exists() else []
    containers = cluster.root_dir / "containers"
    runs = []
    for d in containers.iterdir():
        try:
            if uid in (d / "meta.json").read_text(errors="replace"):
                runs.append(str(d))
        except FileNotFoundError:  # another pod's run, being removed while we look: not ours
            continue
    return mounts + dirs + runs


def test_after_deletion_nothing_is_mounted_or_left(cluster: Cluster) -> None:
    name, cm = unique("leaves"), unique("leaves-cm")
    create(cluster, config_map(cm, {"k": "v"}))
    mounts = [{"name": "config", "mountPath": str(CONFIG_PATH)}, {"name": "mem", "mountPath": "/mem"},
              {"name": "disk", "mountPath": "/disk"}]
    volumes = [{"name": "config", "configMap": {"name": cm}}, {"name": "mem", "emptyDir": {"medium": "Memory"}},
               {"name": "disk", "emptyDir": {}}]
    create(cluster, pod(name, [sh("c", "cat /etc/mini-k8s-test-config/k; echo; sleep 3600", mounts)], volumes))
    wait_logs(cluster, name, "v")
    uid = cluster.pod(name)["metadata"]["uid"]
    before = _left(cluster, uid)
    assert any(" tmpfs " in line for line in before)  # the Memory emptyDir, on the node
    assert any(line.endswith(uid) for line in before)
    out = cluster.kubectl("delete", "pod", name, "--wait=true", timeout=60)
    assert out.returncode == 0, out.stderr
    wait_for(lambda: not _left(cluster, uid), timeout=15, what="nothing of the pod left")
    assert not CONFIG_PATH.exists() and not Path("/mem").exists() and not Path("/disk").exists()


def test_mini_k8s_down_cleanup_removes_volumes_too(cluster: Cluster) -> None:
    """What `mini-k8s down` runs (kubelet/cleanup.py), on a root dir of its own with a pod's volume
    directory holding a tmpfs, as a kubelet would leave it."""
    root = cluster.root_dir.parent / f"down-{uuid.uuid4().hex[:6]}"
    mem = root / "pods" / "uid-1" / "volumes" / "kubernetes.io~empty-dir" / "mem"
    mem.mkdir(parents=True)
    (root / "containers").mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(mem)], check=True)
    (mem / "f").write_text("x")
    out = subprocess.run([sys.executable, "-m", "kubelet.cleanup", "--root-dir", str(root)], capture_output=True,
                         text=True, timeout=30)  # fmt: skip
    assert out.returncode == 0, out.stderr
    with open("/proc/self/mountinfo") as f:
        assert not [line for line in f if str(root) in line]
    assert not (root / "pods" / "uid-1").exists()
    shutil.rmtree(root)


def test_exec_probes_see_the_volumes_and_a_kubelet_restart_keeps_them(cluster: Cluster) -> None:
    """An exec readiness probe runs in the container's mount namespace, so it reads the volume; a
    kubelet crash and restart adopts the container and its volumes go on following the object."""
    name, cm = unique("restart-vol"), unique("restart-cm")
    create(cluster, config_map(cm, {"ready": "yes", "value": "one"}))
    script = ("last=; while true; do cur=$(cat /etc/mini-k8s-test-config/value); "
              "[ \"$cur\" != \"$last\" ] && echo \"value=$cur\"; last=$cur; sleep 0.2; done")
    c = sh("c", script, [{"name": "config", "mountPath": str(CONFIG_PATH)}])
    c["readinessProbe"] = {"exec": {"command": ["cat", f"{CONFIG_PATH}/ready"]}, "periodSeconds": 1}
    create(cluster, pod(name, [c], [{"name": "config", "configMap": {"name": cm}}]))
    before = cluster.wait_pod(name, lambda p: state(p).get("ready"), what="ready through the exec probe")
    wait_logs(cluster, name, "value=one")
    cluster.restart_kubelet()
    patch = cluster.kubectl("patch", "configmap", cm, "-p", json.dumps({"data": {"value": "two"}}))
    assert patch.returncode == 0, patch.stderr
    wait_logs(cluster, name, "value=two")
    after = cluster.pod(name)
    assert state(after)["containerID"] == state(before)["containerID"]
    assert state(after)["restartCount"] == 0
    assert not CONFIG_PATH.exists()
