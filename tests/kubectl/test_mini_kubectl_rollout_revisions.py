"""`rollout status|history|undo|pause` for DaemonSets and StatefulSets, side by side with the real kubectl.

No controller runs here: each tool gets its own twin StatefulSet and DaemonSet with two
ControllerRevisions and a status written through `/status`, exactly what a controller would
leave, so both read the same history and the comparison is of the client alone. Undo is checked
by what it stores: the twin's template equals the old revision's.
"""

from __future__ import annotations

import copy
from typing import Any

import httpx

from tests.kubectl.conftest import Pair, Result


def _template(image: str, app: str) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "c", "image": image}]}}


def _owner(api: httpx.Client, ns: str, kind: str, name: str) -> dict[str, Any]:
    plural = {"StatefulSet": "statefulsets", "DaemonSet": "daemonsets"}[kind]
    spec: dict[str, Any] = {"selector": {"matchLabels": {"app": name}}, "template": _template("nginx:1.25", name)}
    if kind == "StatefulSet":
        spec.update(replicas=2, serviceName=name)
    r = api.post(f"/apis/apps/v1/namespaces/{ns}/{plural}",
                 json={"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name}, "spec": spec})  # fmt: skip
    assert r.status_code == 201, r.text
    obj = r.json()
    ref = {"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": obj["metadata"]["uid"], "controller": True}
    for number, image in ((1, "nginx:1.24"), (2, "nginx:1.25")):
        data = {"spec": {"template": {**_template(image, name), "$patch": "replace"}}}
        revision = {"apiVersion": "apps/v1", "kind": "ControllerRevision",
                    "metadata": {"name": f"{name}-r{number}", "ownerReferences": [ref], "labels": {"app": name},
                                 "annotations": {"kubernetes.io/change-cause": f"set image {image}"}},
                    "revision": number, "data": data}  # fmt: skip
        assert api.post(f"/apis/apps/v1/namespaces/{ns}/controllerrevisions", json=revision).status_code == 201
    if kind == "StatefulSet":
        status = {"observedGeneration": 1, "replicas": 2, "readyReplicas": 1, "updatedReplicas": 1,
                  "currentRevision": f"{name}-r1", "updateRevision": f"{name}-r2"}  # fmt: skip
    else:
        status = {"observedGeneration": 1, "desiredNumberScheduled": 3, "currentNumberScheduled": 3,
                  "updatedNumberScheduled": 3, "numberAvailable": 2, "numberReady": 2}  # fmt: skip
    r = api.put(f"/apis/apps/v1/namespaces/{ns}/{plural}/{name}/status", json={**obj, "status": status})
    assert r.status_code == 200, r.text
    return r.json()


def _same(real: Result, mini: Result, real_name: str, mini_name: str) -> None:
    def norm(text: str) -> str:
        return text.replace(mini_name, real_name)

    assert (mini.rc, norm(mini.out), norm(mini.err)) == (real.rc, real.out, real.err)


def test_history_status_undo_and_pause_match_kubectl(pair: Pair, api: httpx.Client, ns: str) -> None:
    for kind, short in (("StatefulSet", "sts"), ("DaemonSet", "ds")):
        real_name, mini_name = f"{short}-real", f"{short}-mini"
        _owner(api, ns, kind, real_name)
        _owner(api, ns, kind, mini_name)
        for args in (("history",), ("history", "--revision=1"), ("history", "--revision=7"),
                     ("status", "--watch=false"), ("pause",), ("undo", "--to-revision=9")):  # fmt: skip
            verb, *rest = args
            real = pair.real("rollout", verb, f"{short}/{real_name}", "-n", ns, *rest)
            mini = pair.mini("rollout", verb, f"{short}/{mini_name}", "-n", ns, *rest)
            _same(real, mini, real_name, mini_name)
        real = pair.real("rollout", "undo", f"{short}/{real_name}", "-n", ns)
        mini = pair.mini("rollout", "undo", f"{short}/{mini_name}", "-n", ns)
        _same(real, mini, real_name, mini_name)
        assert real.rc == 0 and real.out == f"{kind.lower()}.apps/{real_name} rolled back\n"
        plural = "statefulsets" if kind == "StatefulSet" else "daemonsets"
        for name in (real_name, mini_name):
            stored = api.get(f"/apis/apps/v1/namespaces/{ns}/{plural}/{name}").json()["spec"]["template"]
            assert stored["spec"]["containers"][0]["image"] == "nginx:1.24"
        # undo to revision 1 again: these hand-made revisions hold the template without the server's
        # defaults, so both tools see a difference and patch again (a controller's revisions would not)
        real = pair.real("rollout", "undo", f"{short}/{real_name}", "-n", ns, "--to-revision=1")
        mini = pair.mini("rollout", "undo", f"{short}/{mini_name}", "-n", ns, "--to-revision=1")
        _same(real, mini, real_name, mini_name)


def test_status_messages_follow_the_statefulset_strategy(pair: Pair, api: httpx.Client, ns: str) -> None:
    obj = _owner(api, ns, "StatefulSet", "parted")
    on_delete = copy.deepcopy(obj)
    on_delete["spec"]["updateStrategy"] = {"type": "OnDelete"}
    assert api.put(f"/apis/apps/v1/namespaces/{ns}/statefulsets/parted", json=on_delete).status_code == 200
    real, mini = pair.both("rollout", "status", "sts/parted", "-n", ns, "--watch=false")
    assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err)
    assert real.err == "error: rollout status is only available for RollingUpdate strategy type\n"
