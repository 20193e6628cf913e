"""Counts and durations Kubernetes requires to be non-negative (or positive), with its paths and words."""

from __future__ import annotations

from typing import Any

from tests.registry.test_registry_validation import created


def _lease(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "l"}, "spec": {"holderIdentity": "me", **spec}}


def test_a_lease_duration_must_be_positive_and_transitions_not_negative() -> None:
    assert created("leases.coordination.k8s.io", _lease(leaseDurationSeconds=15, leaseTransitions=0)) == []
    assert created("leases.coordination.k8s.io", _lease(leaseDurationSeconds=0, leaseTransitions=-1)) == [
        "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
        "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0",
    ]


def test_a_resource_quota_hard_limit_must_not_be_negative() -> None:
    quota = {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "10", "requests.cpu": "-1"}}}
    assert created("resourcequotas", quota) == [
        'spec.hard[requests.cpu]: Invalid value: "-1": must be greater than or equal to 0'
    ]


def test_probe_and_workload_counts_must_not_be_negative() -> None:
    probe = {"httpGet": {"port": 80}, "periodSeconds": -1}
    pod = {"metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "a:1", "readinessProbe": probe}]}}  # fmt: skip
    assert "spec.containers[0].readinessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0" in (
        created("pods", pod))
    job = {"metadata": {"name": "j"}, "spec": {"parallelism": -1, "backoffLimit": -1, "template": {
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "a:1"}]}}}}  # fmt: skip
    errs = created("jobs.batch", job)
    assert "spec.parallelism: Invalid value: -1: must be greater than or equal to 0" in errs
    assert "spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0" in errs
