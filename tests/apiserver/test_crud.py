"""Create, read, update and delete through the REST API, with Kubernetes' metadata semantics."""

from __future__ import annotations

import httpx

from tests.apiserver.conftest import deployment, pod


def test_create_stamps_metadata_defaults_and_pending_status(api: httpx.Client, ns: str) -> None:
    r = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("p1"))
    assert r.status_code == 201, r.text
    p = r.json()
    md = p["metadata"]
    assert md["namespace"] == ns and md["uid"]
    assert "generation" not in md  # as in Kubernetes 1.32: only reconciled kinds count generations
    sent_generation = api.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "c", "generation": 7}})
    assert "generation" not in sent_generation.json()["metadata"]
    assert md["creationTimestamp"].endswith("Z") and int(md["resourceVersion"]) > 0
    spec = p["spec"]
    assert spec["restartPolicy"] == "Always" and spec["terminationGracePeriodSeconds"] == 30
    assert spec["dnsPolicy"] == "ClusterFirst" and spec["serviceAccountName"] == "default"
    assert spec["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert p["status"]["phase"] == "Pending"
    tolerations = {t["key"]: t for t in spec["tolerations"]}
    assert tolerations["node.kubernetes.io/not-ready"]["tolerationSeconds"] == 300
    assert tolerations["node.kubernetes.io/unreachable"]["effect"] == "NoExecute"
    got = api.get(f"/api/v1/namespaces/{ns}/pods/p1").json()
    assert got["metadata"]["resourceVersion"] == md["resourceVersion"]


def test_own_toleration_wins_over_the_default(api: httpx.Client, ns: str) -> None:
    mine = {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 5,
    }
    p = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("p1", tolerations=[mine])).json()
    unreachable = [t for t in p["spec"]["tolerations"] if t["key"] == "node.kubernetes.io/unreachable"]
    assert unreachable == [mine]


def test_a_pod_needs_the_service_account_it_names(api: httpx.Client, ns: str) -> None:
    r = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("robotic", serviceAccountName="robot"))
    assert r.status_code == 403 and r.json()["reason"] == "Forbidden"
    assert r.json()["message"] == (
        f'pods "robotic" is forbidden: error looking up service account {ns}/robot: serviceaccount "robot" not found'
    )
    assert api.get(f"/api/v1/namespaces/{ns}/pods/robotic").status_code == 404
    assert api.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json={"metadata": {"name": "robot"}}).status_code == 201
    r = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("robotic", serviceAccountName="robot"))
    assert r.status_code == 201 and r.json()["spec"]["serviceAccount"] == "robot"


def test_generate_name_makes_unique_names(api: httpx.Client, ns: str) -> None:
    body = pod("")
    body["metadata"] = {"generateName": "web-"}
    names = {api.post(f"/api/v1/namespaces/{ns}/pods", json=body).json()["metadata"]["name"] for _ in range(5)}
    assert len(names) == 5 and all(n.startswith("web-") and len(n) == 9 for n in names)


def test_a_long_generate_name_is_cut_to_58_characters(api: httpx.Client, ns: str) -> None:
    body = pod("")
    body["metadata"] = {"generateName": "x" * 100 + "-"}
    created = api.post(f"/api/v1/namespaces/{ns}/pods", json=body)
    assert created.status_code == 201, created.text
    md = created.json()["metadata"]
    assert md["name"].startswith("x" * 58) and len(md["name"]) == 63 and md["generateName"] == "x" * 100 + "-"


def test_create_twice_is_already_exists(api: httpx.Client, ns: str) -> None:
    assert api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("dup")).status_code == 201
    r = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("dup"))
    assert r.status_code == 409
    assert r.json()["reason"] == "AlreadyExists" and r.json()["message"] == 'pods "dup" already exists'


def test_get_missing_is_not_found_status(api: httpx.Client, ns: str) -> None:
    r = api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/nope")
    assert r.status_code == 404
    body = r.json()
    assert body["kind"] == "Status" and body["status"] == "Failure" and body["reason"] == "NotFound"
    assert body["message"] == 'deployments.apps "nope" not found'


def test_stale_resource_version_is_conflict_and_changes_nothing(api: httpx.Client, ns: str) -> None:
    created = api.post(
        f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "cm"}, "data": {"a": "1"}}
    ).json()
    first = dict(created, data={"a": "2"})
    r1 = api.put(f"/api/v1/namespaces/{ns}/configmaps/cm", json=first)
    assert r1.status_code == 200, r1.text
    assert int(r1.json()["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    stale = dict(created, data={"a": "3"})  # still carries the first resourceVersion
    r2 = api.put(f"/api/v1/namespaces/{ns}/configmaps/cm", json=stale)
    assert r2.status_code == 409 and r2.json()["reason"] == "Conflict"
    assert "the object has been modified" in r2.json()["message"]
    assert api.get(f"/api/v1/namespaces/{ns}/configmaps/cm").json()["data"] == {"a": "2"}


def test_back_to_back_updates_on_the_returned_version_never_conflict(api: httpx.Client, ns: str) -> None:
    """Updates read the object from the watch cache first, which can lag a write that just
    returned. A client writing again on top of the version it was just handed (what a kubelet does
    with pod statuses) must still succeed every time, and every write must land."""
    base = f"/api/v1/namespaces/{ns}/configmaps/fast"
    cm = api.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "fast"}, "data": {"n": "0"}})
    cm = cm.json()
    for i in range(1, 101):
        cm["data"] = {"n": str(i)}
        r = api.put(base, json=cm)
        assert r.status_code == 200, (i, r.text)
        cm = r.json()
    assert api.get(base).json()["data"] == {"n": "100"}


def test_an_update_equal_to_a_lagging_cache_still_writes(api: httpx.Client, ns: str) -> None:
    """Put back the previous content right after changing it: against a cache that has not seen the
    change yet, the update would look like a no-op. It must be judged against storage."""
    base = f"/api/v1/namespaces/{ns}/configmaps/flip"
    api.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "flip"}, "data": {"v": "a"}})
    for i in range(50):
        changed = api.put(base, json={"metadata": {"name": "flip"}, "data": {"v": f"b{i}"}})
        assert changed.status_code == 200, changed.text
        back = api.put(base, json={"metadata": {"name": "flip"}, "data": {"v": "a"}})
        assert back.status_code == 200 and back.json()["data"] == {"v": "a"}, back.text
        assert int(back.json()["metadata"]["resourceVersion"]) > int(changed.json()["metadata"]["resourceVersion"])
        assert api.get(base).json()["data"] == {"v": "a"}


def test_generation_counts_spec_changes_only(api: httpx.Client, ns: str) -> None:
    d = api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("web")).json()
    assert d["metadata"]["generation"] == 1
    d["metadata"]["labels"] = {"team": "a"}
    d = api.put(f"/apis/apps/v1/namespaces/{ns}/deployments/web", json=d).json()
    assert d["metadata"]["generation"] == 1
    d["spec"]["replicas"] = 5
    d = api.put(f"/apis/apps/v1/namespaces/{ns}/deployments/web", json=d).json()
    assert d["metadata"]["generation"] == 2


def test_deployment_defaults(api: httpx.Client, ns: str) -> None:
    d = api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("web")).json()
    s = d["spec"]
    assert s["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}
    assert s["revisionHistoryLimit"] == 10 and s["progressDeadlineSeconds"] == 600
    assert s["template"]["spec"]["restartPolicy"] == "Always"


def test_main_resource_ignores_status_and_status_ignores_spec(api: httpx.Client, ns: str) -> None:
    d = api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("web")).json()
    base = f"/apis/apps/v1/namespaces/{ns}/deployments/web"
    d["status"] = {"replicas": 7}
    d["spec"]["replicas"] = 3
    d = api.put(base, json=d).json()
    assert d["spec"]["replicas"] == 3 and d["status"].get("replicas") is None
    d["status"] = {"replicas": 3, "readyReplicas": 1}
    d["spec"]["replicas"] = 9
    r = api.put(base + "/status", json=d)
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["replicas"] == 3 and r.json()["status"]["readyReplicas"] == 1


def test_cluster_scoped_object_has_no_namespace(api: httpx.Client) -> None:
    r = api.post("/api/v1/nodes", json={"metadata": {"name": "n-crud", "namespace": "ignored"}})
    assert r.status_code == 201, r.text
    assert "namespace" not in r.json()["metadata"]
    assert api.get("/api/v1/nodes/n-crud").status_code == 200
    assert api.delete("/api/v1/nodes/n-crud").status_code == 200


def test_bootstrap_objects_exist(api: httpx.Client) -> None:
    names = {n["metadata"]["name"] for n in api.get("/api/v1/namespaces").json()["items"]}
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= names
    svc = api.get("/api/v1/namespaces/default/services/kubernetes").json()
    assert svc["spec"]["clusterIP"] == "10.96.0.1"
