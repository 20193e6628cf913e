"""plan_slices, the endpointslice controller's arithmetic: pods stay in the slice they are in, new
ones fill free room before a new slice is made, empty slices go, and a Service without endpoints
keeps one placeholder."""

from __future__ import annotations

from controller_manager.controllers.endpointslice import PortsKey, plan_slices

HTTP: PortsKey = (("http", 8080, "TCP", ""),)


def ep(uid: str) -> dict:
    return {"addresses": [f"10.0.0.{uid}"], "targetRef": {"kind": "Pod", "name": uid, "uid": uid}}


def slice_(name: str, uids: list[str], ports: PortsKey = HTTP) -> dict:
    return {"metadata": {"name": name}, "endpoints": [ep(u) for u in uids],
            "ports": [{"name": n, "port": p, "protocol": pr} for n, p, pr, _ in ports]}


def test_pods_stay_put_and_new_ones_fill_room_first() -> None:
    desired = {HTTP: {u: ep(u) for u in ("1", "2", "3", "4", "5")}}
    keep, create, delete = plan_slices(desired, [slice_("a", ["1", "9"]), slice_("b", ["2", "3"])], 3)
    assert [(s["metadata"]["name"], [e["targetRef"]["uid"] for e in es]) for s, es in keep] == [
        ("a", ["1", "4", "5"]), ("b", ["2", "3"])]
    assert create == [] and delete == []


def test_overflow_makes_new_slices_and_empty_ones_are_deleted() -> None:
    desired = {HTTP: {u: ep(u) for u in ("1", "2", "3", "4", "5")}}
    keep, create, delete = plan_slices(desired, [slice_("old", ["7"], ports=(("x", 1, "TCP", ""),))], 2)
    assert keep == [] and [s["metadata"]["name"] for s in delete] == ["old"]
    assert [(ports, [e["targetRef"]["uid"] for e in es]) for ports, es in create] == [
        (HTTP, ["1", "2"]), (HTTP, ["3", "4"]), (HTTP, ["5"])]


def test_no_endpoints_leaves_one_placeholder() -> None:
    keep, create, delete = plan_slices({}, [], 100)
    assert keep == [] and create == [((), [])] and delete == []
    placeholder = {"metadata": {"name": "p"}}
    keep, create, delete = plan_slices({}, [placeholder, slice_("a", ["1"])], 100)
    assert create == [] and [s["metadata"]["name"] for s in delete] == ["a"]
