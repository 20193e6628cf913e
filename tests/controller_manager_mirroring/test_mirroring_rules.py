"""The endpointslicemirroring controller's pure parts, and how it is switched on and configured."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from controller_manager import registry
from controller_manager.controllers.endpointslice import plan_slices
from controller_manager.controllers.endpointslicemirroring import (
    address_type,
    desired_endpoints,
    mirrored_id,
    should_mirror,
    slice_meta,
)
from tests.support.apiserver import APIServerProcess

REPO = Path(__file__).resolve().parents[2]
HTTP = (("http", 80, "TCP", ""),)


def test_it_is_on_by_default_and_no_longer_listed_as_missing() -> None:
    assert "endpointslicemirroring" in registry.selected(["*"])
    assert "endpointslicemirroring" not in registry.selected(["*,-endpointslicemirroring"])
    assert "endpointslicemirroring" not in registry.NOT_IMPLEMENTED


def test_addresses_group_by_type_and_ports_ready_first_and_capped_per_subset() -> None:
    ports = [{"name": "http", "port": 80}]
    first = {"addresses": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}, {"ip": "nope"}],
             "notReadyAddresses": [{"ip": "10.0.0.2"}], "ports": ports}  # fmt: skip
    eps = {"metadata": {"name": "x"}, "subsets": [
        first, {"addresses": [{"ip": "10.0.0.3"}, {"ip": "10.0.0.4"}], "ports": ports}]}  # fmt: skip
    desired, invalid, over_cap = desired_endpoints(eps, 3)
    assert (invalid, over_cap) == (1, 0)
    ready = {e["addresses"][0]: e["conditions"]["ready"] for e in desired["IPv4"][HTTP].values()}
    assert ready == {"10.0.0.1": True, "10.0.0.2": False, "10.0.0.3": True, "10.0.0.4": True}
    assert [e["addresses"] for e in desired["IPv6"][HTTP].values()] == [["fd00::1"]]
    _, invalid, over_cap = desired_endpoints(eps, 1)
    assert (invalid, over_cap) == (0, 4)  # past the cap, addresses are not even looked at


def test_address_types_and_who_is_mirrored() -> None:
    assert [address_type(a) for a in ("10.0.0.1", "fd00::1", "10.0.0.256", "host", None)] == [
        "IPv4", "IPv6", None, None, None]
    def ep(name: str = "x", namespace: str = "d", **meta: object) -> dict:
        return {"metadata": {"name": name, "namespace": namespace, **meta}}

    skip = "endpointslice.kubernetes.io/skip-mirror"
    assert should_mirror(ep()) and should_mirror(ep(labels={skip: "false"}))
    assert not should_mirror(ep(labels={skip: "true"}))
    assert not should_mirror(ep(annotations={"control-plane.alpha.kubernetes.io/leader": "{}"}))


def test_slice_metadata_copies_labels_and_most_annotations() -> None:
    annotations = {"b": "2", "endpoints.kubernetes.io/last-change-trigger-time": "t",
                   "kubectl.kubernetes.io/last-applied-configuration": "{}"}  # fmt: skip
    labels = {"a": "1", "kubernetes.io/service-name": "y"}
    meta = slice_meta({"metadata": {"name": "x", "uid": "u1", "labels": labels, "annotations": annotations}})
    assert meta["labels"] == {"a": "1", "kubernetes.io/service-name": "x",
                              "endpointslice.kubernetes.io/managed-by": "endpointslicemirroring-controller.k8s.io"}
    assert meta["annotations"] == {"b": "2"}
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Endpoints", "name": "x", "uid": "u1",
                                        "controller": True, "blockOwnerDeletion": True}]  # fmt: skip


def test_plan_without_placeholder_deletes_everything_for_no_endpoints() -> None:
    old = {"metadata": {"name": "old"}, "endpoints": [{"addresses": ["10.0.0.1"]}], "ports": []}
    assert plan_slices({}, [], 10, placeholder=False) == ([], [], [])
    assert plan_slices({}, [old], 10, placeholder=False) == ([], [], [old])
    # Two addresses naming the same target are two endpoints under the mirroring identity.
    same = [{"addresses": [ip], "targetRef": {"kind": "Node", "name": "n"}} for ip in ("10.0.0.1", "10.0.0.2")]
    _, create, _ = plan_slices({(): {mirrored_id(e): e for e in same}}, [], 10, placeholder=False, identity=mirrored_id)
    assert create == [((), same)]


@pytest.mark.parametrize("flag", [("--mirroring-max-endpoints-per-subset", "0"),
                                  ("--mirroring-max-endpoints-per-subset", "1001"),
                                  ("--mirroring-concurrent-service-endpoint-syncs", "0")])  # fmt: skip
def test_out_of_range_flags_are_refused(flag: tuple[str, str]) -> None:
    res = subprocess.run([sys.executable, "-m", "controller_manager", *flag, "--port", "0"],
                         capture_output=True, text=True, cwd=REPO, timeout=60)  # fmt: skip
    assert res.returncode == 1 and f"{flag[0]} must be between" in res.stderr


def test_the_api_server_labels_its_kubernetes_endpoints_skip_mirror_also_on_old_data() -> None:
    """Endpoints stored before the label existed get it when the API server starts again."""
    api = APIServerProcess().start()
    try:
        url = f"{api.url}/api/v1/namespaces/default/endpoints/kubernetes"
        stored = httpx.get(url).json()
        assert stored["metadata"]["labels"] == {"endpointslice.kubernetes.io/skip-mirror": "true"}
        stored["metadata"]["labels"] = {}
        assert httpx.put(url, json=stored).status_code == 200  # what an old data dir holds
        api.stop()
        api.start()
        assert httpx.get(url).json()["metadata"]["labels"] == {"endpointslice.kubernetes.io/skip-mirror": "true"}
    finally:
        api.cleanup()
