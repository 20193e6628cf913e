"""Third-party client libraries a course may use, against the real server: lightkube, kr8s and
kubernetes-asyncio (the official client has its own module, test_python_client.py).

Each connects the way its users connect — through a kubeconfig file — and runs its basic flows:
create, get, list with a selector, patch, delete, and a watch that resumes from a list's
resourceVersion (list first, change, then watch from that version: the first event is ours,
with no thread and no sleep).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import kr8s
import pytest
from kubernetes_asyncio import client as aclient
from kubernetes_asyncio import config as aconfig
from kubernetes_asyncio import watch as awatch
from lightkube import Client as LightClient
from lightkube import KubeConfig
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import ConfigMap
from lightkube.types import PatchType

from tests.support.apiserver import APIServerProcess


@pytest.fixture
def kubeconfig(apiserver: APIServerProcess, tmp_path: Path) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: mini\n  cluster:\n    server: {apiserver.url}\n"
        "users:\n- name: student\n  user: {}\n"
        "contexts:\n- name: mini\n  context:\n    cluster: mini\n    user: student\n"
        "current-context: mini\n"
    )
    return path


def test_lightkube_crud_and_watch(kubeconfig: Path, ns: str) -> None:
    c = LightClient(config=KubeConfig.from_file(kubeconfig), namespace=ns)
    c.create(ConfigMap(metadata=ObjectMeta(name="a", labels={"app": "x"}), data={"k": "v"}))
    c.create(ConfigMap(metadata=ObjectMeta(name="b"), data={"k": "w"}))
    assert c.get(ConfigMap, "a").data == {"k": "v"}
    assert [cm.metadata.name for cm in c.list(ConfigMap, labels={"app": "x"})] == ["a"]
    patched = c.patch(ConfigMap, "a", {"data": {"k2": "v2"}}, patch_type=PatchType.MERGE)
    assert patched.data == {"k": "v", "k2": "v2"}

    rv = patched.metadata.resourceVersion  # the last write before the delete
    c.delete(ConfigMap, "b")
    for event, obj in c.watch(ConfigMap, resource_version=rv):
        assert (event, obj.metadata.name) == ("DELETED", "b")
        break
    assert [cm.metadata.name for cm in c.list(ConfigMap)] == ["a"]


def test_kr8s_crud_and_watch(kubeconfig: Path, ns: str) -> None:
    api = kr8s.api(kubeconfig=str(kubeconfig))
    assert api.version()["major"] == "1"
    cm = kr8s.objects.ConfigMap(
        {"metadata": {"name": "a", "namespace": ns, "labels": {"app": "x"}}, "data": {"k": "v"}}, api=api
    )
    cm.create()
    assert cm.metadata.uid
    found = list(api.get("configmaps", namespace=ns, label_selector={"app": "x"}))
    assert [o.name for o in found] == ["a"]
    cm.patch({"data": {"k": "changed"}})
    cm.refresh()
    assert cm.raw["data"] == {"k": "changed"}

    rv = cm.metadata.resourceVersion
    cm.delete()
    for event, obj in api.watch("configmaps", namespace=ns, since=rv):
        assert (event, obj.name) == ("DELETED", "a")
        break
    assert list(api.get("configmaps", namespace=ns, label_selector={"app": "x"})) == []


def test_kubernetes_asyncio_crud_and_watch(kubeconfig: Path, ns: str) -> None:
    async def flow() -> None:
        await aconfig.load_kube_config(config_file=str(kubeconfig))
        async with aclient.ApiClient() as api_client:
            core = aclient.CoreV1Api(api_client)
            body = aclient.V1ConfigMap(metadata=aclient.V1ObjectMeta(name="a", labels={"app": "x"}), data={"k": "v"})
            created = await core.create_namespaced_config_map(ns, body)
            assert created.metadata.uid
            listed = await core.list_namespaced_config_map(ns, label_selector="app=x")
            assert [cm.metadata.name for cm in listed.items] == ["a"]
            patched = await core.patch_namespaced_config_map("a", ns, {"data": {"k2": "v2"}})
            assert patched.data == {"k": "v", "k2": "v2"}

            rv = listed.metadata.resource_version
            w = awatch.Watch()
            async for event in w.stream(core.list_namespaced_config_map, ns, resource_version=rv, timeout_seconds=10):
                assert (event["type"], event["object"].metadata.name) == ("MODIFIED", "a")
                w.stop()
                break
            await core.delete_namespaced_config_map("a", ns)
            assert (await core.list_namespaced_config_map(ns)).items == []

    asyncio.run(flow())


def test_kubernetes_asyncio_server_side_apply(kubeconfig: Path, ns: str) -> None:
    """Its users apply by PATCHing with the apply content type (the generated API has no apply call).

    kr8s 0.20 has no server-side apply at all, so it has no such test.
    """

    async def flow() -> None:
        await aconfig.load_kube_config(config_file=str(kubeconfig))
        async with aclient.ApiClient() as api_client:
            core = aclient.CoreV1Api(api_client)
            apply_type = "application/apply-patch+yaml"
            body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}}
            created = await core.patch_namespaced_config_map(
                "a", ns, body, field_manager="student", _content_type=apply_type
            )
            assert [(m.manager, m.operation) for m in created.metadata.managed_fields] == [("student", "Apply")]
            body["data"] = {"k": "other"}
            with pytest.raises(aclient.ApiException) as err:
                await core.patch_namespaced_config_map("a", ns, body, field_manager="rival", _content_type=apply_type)
            assert err.value.status == 409
            forced = await core.patch_namespaced_config_map(
                "a", ns, body, field_manager="rival", force=True, _content_type=apply_type
            )
            assert forced.data == {"k": "other"}

    asyncio.run(flow())
