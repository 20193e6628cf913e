"""The official `kubernetes` Python client (the one most course notebooks use) against our server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client, watch

from tests.compat.conftest import pod, two_container_deployment
from tests.support.apiserver import APIServerProcess


@pytest.fixture
def api_client(apiserver: APIServerProcess) -> Iterator[client.ApiClient]:
    with client.ApiClient(client.Configuration(host=apiserver.url)) as c:
        yield c


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


@pytest.fixture
def apps(api_client: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api_client)


def test_pod_create_list_read_patch_delete(core: client.CoreV1Api, ns: str) -> None:
    created = core.create_namespaced_pod(ns, pod("p1", labels={"app": "a"}))
    assert isinstance(created, client.V1Pod)
    assert created.metadata.uid and created.status.phase == "Pending"
    assert created.spec.containers[0].image_pull_policy == "IfNotPresent"
    core.create_namespaced_pod(
        ns,
        client.V1Pod(
            metadata=client.V1ObjectMeta(name="p2", labels={"app": "b"}),
            spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]),
        ),
    )
    listed = core.list_namespaced_pod(ns)
    assert sorted(p.metadata.name for p in listed.items) == ["p1", "p2"]
    assert int(listed.metadata.resource_version) > 0
    assert [p.metadata.name for p in core.list_namespaced_pod(ns, label_selector="app=b").items] == ["p2"]
    assert [p.metadata.name for p in core.list_namespaced_pod(ns, field_selector="metadata.name=p1").items] == ["p1"]
    assert core.read_namespaced_pod("p1", ns).metadata.uid == created.metadata.uid

    patched = core.patch_namespaced_pod("p1", ns, {"metadata": {"labels": {"tier": "fe"}}})
    assert patched.metadata.labels == {"app": "a", "tier": "fe"}
    core.delete_namespaced_pod("p1", ns)
    assert [p.metadata.name for p in core.list_namespaced_pod(ns).items] == ["p2"]


def test_strategic_merge_patch_of_a_deployment_keeps_the_other_container(apps: client.AppsV1Api, ns: str) -> None:
    apps.create_namespaced_deployment(ns, two_container_deployment("web"))
    # A dict body: the client sends it as a strategic merge patch, so `containers` merge by name.
    body = {"spec": {"replicas": 4, "template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}}
    d = apps.patch_namespaced_deployment("web", ns, body)
    images = {c.name: c.image for c in d.spec.template.spec.containers}
    assert images == {"app": "nginx:1.25", "sidecar": "busybox:1.36"}
    assert d.spec.replicas == 4 and d.metadata.generation == 2
    sidecar = next(c for c in d.spec.template.spec.containers if c.name == "sidecar")
    assert sidecar.ports[0].container_port == 9000 and sidecar.ports[0].name == "metrics"

    assert [x.metadata.name for x in apps.list_namespaced_deployment(ns).items] == ["web"]
    assert apps.read_namespaced_deployment("web", ns).spec.replicas == 4
    scale = apps.patch_namespaced_deployment_scale("web", ns, {"spec": {"replicas": 1}})
    assert scale.kind == "Scale" and scale.spec.replicas == 1
    apps.delete_namespaced_deployment("web", ns)
    with pytest.raises(client.ApiException) as exc:
        apps.read_namespaced_deployment("web", ns)
    assert exc.value.status == 404


def test_missing_object_raises_api_exception_404(core: client.CoreV1Api, ns: str) -> None:
    with pytest.raises(client.ApiException) as exc:
        core.read_namespaced_pod("nope", ns)
    assert exc.value.status == 404 and exc.value.reason == "Not Found"
    assert '"reason":"NotFound"' in exc.value.body and 'pods \\"nope\\" not found' in exc.value.body


def test_create_duplicate_raises_api_exception_409(core: client.CoreV1Api, ns: str) -> None:
    core.create_namespaced_pod(ns, pod("dup"))
    with pytest.raises(client.ApiException) as exc:
        core.create_namespaced_pod(ns, pod("dup"))
    assert exc.value.status == 409 and '"reason":"AlreadyExists"' in exc.value.body


def test_watch_from_a_resource_version_sees_exactly_the_later_events(core: client.CoreV1Api, ns: str) -> None:
    core.create_namespaced_pod(ns, pod("before"))
    rv = core.list_namespaced_pod(ns).metadata.resource_version
    core.create_namespaced_pod(ns, pod("after"))
    core.patch_namespaced_pod("before", ns, {"metadata": {"labels": {"seen": "yes"}}})
    core.delete_namespaced_pod("after", ns)

    seen = []
    w = watch.Watch()
    for ev in w.stream(core.list_namespaced_pod, ns, resource_version=rv, timeout_seconds=2):
        seen.append((ev["type"], ev["object"].metadata.name))
        assert isinstance(ev["object"], client.V1Pod)
        if len(seen) == 3:
            w.stop()
    assert seen == [("ADDED", "after"), ("MODIFIED", "before"), ("DELETED", "after")]


def test_watch_without_resource_version_starts_with_the_existing_objects(core: client.CoreV1Api, ns: str) -> None:
    core.create_namespaced_pod(ns, pod("one"))
    core.create_namespaced_pod(ns, pod("two"))
    seen = [
        (ev["type"], ev["object"].metadata.name)
        for ev in watch.Watch().stream(core.list_namespaced_pod, ns, timeout_seconds=1)
    ]
    assert sorted(seen) == [("ADDED", "one"), ("ADDED", "two")]
