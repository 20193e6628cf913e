"""`kubectl get -w`: the existing rows first, then one new row per change, as they happen."""

from __future__ import annotations

import httpx

from tests.compat.conftest import Kubectl, columns, pod

MERGE = {"Content-Type": "application/merge-patch+json"}


def test_get_watch_prints_existing_row_then_a_row_per_change(kubectl: Kubectl, api: httpx.Client, ns: str) -> None:
    assert api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("web")).status_code == 201
    w = kubectl.stream("get", "pods", "-w", "-n", ns)
    try:
        assert columns(w.next_line()) == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
        assert columns(w.next_line())[:3] == ["web", "0/1", "Pending"]
        # The status subresource is how a kubelet reports; the watch must show the new phase.
        r = api.patch(f"/api/v1/namespaces/{ns}/pods/web/status", json={"status": {"phase": "Running"}}, headers=MERGE)
        assert r.status_code == 200, r.text
        assert columns(w.next_line())[:3] == ["web", "0/1", "Running"]
        assert api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("late")).status_code == 201
        assert columns(w.next_line())[:3] == ["late", "0/1", "Pending"]
    finally:
        w.close()


def test_output_watch_events_names_each_event_type(kubectl: Kubectl, api: httpx.Client, ns: str) -> None:
    assert api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("web")).status_code == 201
    w = kubectl.stream("get", "pods", "-w", "--output-watch-events", "-n", ns)
    try:
        assert columns(w.next_line())[:2] == ["EVENT", "NAME"]
        assert columns(w.next_line())[:2] == ["ADDED", "web"]
        r = api.patch(f"/api/v1/namespaces/{ns}/pods/web", json={"metadata": {"labels": {"v": "2"}}}, headers=MERGE)
        assert r.status_code == 200, r.text
        assert columns(w.next_line())[:2] == ["MODIFIED", "web"]
        assert api.delete(f"/api/v1/namespaces/{ns}/pods/web").status_code == 200
        assert columns(w.next_line())[:2] == ["DELETED", "web"]
    finally:
        w.close()
