"""podFailurePolicy (FailJob, Ignore, Count), its API validation, and successPolicy, end to end
(the processes of test_job.py) plus the rule matching at explicit pod states."""

from __future__ import annotations

from typing import Any

import httpx

from controller_manager.controllers.job_failure_policy import match_pod_failure_policy
from controller_manager.controllers.job_success_policy import match_success_policy
from tests.controller_manager_workloads.test_job import (  # noqa: F401  (job_cluster is a fixture)
    condition,
    create_job,
    get_job,
    job_cluster,
    job_pods,
    jobs_path,
    simple_job,
    wait_condition,
    wait_events,
)
from tests.support.component import ComponentProcess, wait_for
from tests.support.fixtures import new_namespace

Obj = dict[str, Any]
FAIL_ON_42 = {
    "rules": [{"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}}]
}
IGNORE_DISRUPTION = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}


def job_with_policy(name: str, command: list[str], policy: Obj, **spec: Any) -> Obj:
    job = simple_job(name, command, podFailurePolicy=policy, **spec)
    job["spec"]["template"]["spec"]["containers"][0]["name"] = "main"
    return job


def pod_in(phase: str, exit_code: int | None = None, conditions: list[Obj] | None = None) -> Obj:
    statuses = [] if exit_code is None else [{"name": "main", "state": {"terminated": {"exitCode": exit_code}}}]
    return {
        "metadata": {"namespace": "ns", "name": "p"},
        "status": {"phase": phase, "containerStatuses": statuses, "conditions": conditions or []},
    }


def test_rules_match_in_order_as_kubernetes_does() -> None:
    policy = {"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
        {"action": "Count", "onExitCodes": {"containerName": "main", "operator": "NotIn", "values": [3]}},
    ]}  # fmt: skip
    message = "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1"
    assert match_pod_failure_policy(policy, pod_in("Failed", 42)) == (message, True, "FailJob")
    disrupted = pod_in("Failed", 42, [{"type": "DisruptionTarget", "status": "True"}])
    assert match_pod_failure_policy(policy, disrupted) == (None, False, "Ignore")
    assert match_pod_failure_policy(policy, pod_in("Failed", 1)) == (None, True, "Count")
    assert match_pod_failure_policy(policy, pod_in("Failed", 3)) == (None, True, None)  # no rule: counted
    assert match_pod_failure_policy(None, pod_in("Failed", 42)) == (None, True, None)


def test_success_policy_rules() -> None:
    by_count = {"rules": [{"succeededIndexes": "0", "succeededCount": 1}, {"succeededCount": 3}]}
    assert match_success_policy(by_count, 5, {1, 2}) == ("", False)
    assert match_success_policy(by_count, 5, {0}) == ("Matched rules at index 0", True)
    assert match_success_policy(by_count, 5, {1, 2, 4}) == ("Matched rules at index 1", True)
    assert match_success_policy({"rules": [{"succeededIndexes": "1-3"}]}, 5, {1, 3}) == ("", False)


def test_fail_job_rule_fails_the_job_at_once(api: httpx.Client, job_cluster: ComponentProcess) -> None:  # noqa: F811
    ns = new_namespace(api, "job-pfp")
    job = create_job(api, ns, job_with_policy("answer", ["sh", "-c", "exit 42"], FAIL_ON_42, backoffLimit=6))
    done = wait_condition(api, ns, "answer", "Failed")
    (pod,) = job_pods(api, ns, "answer")
    message = (f"Container main for pod {ns}/{pod['metadata']['name']} failed with exit code 42 "
               "matching FailJob rule at index 0")  # fmt: skip
    for type_ in ("FailureTarget", "Failed"):
        cond = condition(done, type_)
        assert cond is not None and (cond["reason"], cond["message"]) == ("PodFailurePolicy", message)
    assert done["status"]["failed"] == 1  # one pod, well under backoffLimit 6
    wait_events(api, ns, job["metadata"]["uid"], lambda ev: ("Warning", "PodFailurePolicy", message) in ev)


def test_count_rule_counts_towards_the_backoff_limit(
    api: httpx.Client, job_cluster: ComponentProcess  # noqa: F811
) -> None:
    ns = new_namespace(api, "job-pfp")
    policy = {"rules": [{"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [42]}}]}
    create_job(api, ns, job_with_policy("counted", ["sh", "-c", "exit 1"], policy, backoffLimit=1))
    done = wait_condition(api, ns, "counted", "Failed")
    cond = condition(done, "Failed")
    assert cond is not None and cond["reason"] == "BackoffLimitExceeded"
    assert done["status"]["failed"] == 2


def test_ignore_rule_does_not_count_a_disrupted_pod(
    api: httpx.Client, job_cluster: ComponentProcess  # noqa: F811
) -> None:
    ns = new_namespace(api, "job-pfp")
    manifest = job_with_policy("patient", ["sleep", "300"], IGNORE_DISRUPTION, backoffLimit=0)
    manifest["spec"]["template"]["spec"]["nodeName"] = "ghost-node"  # no kubelet: the test writes pod status
    create_job(api, ns, manifest)
    first = wait_for(lambda: job_pods(api, ns, "patient"), what="the first pod")
    assert first is not None
    set_status(api, ns, first[0], "Failed", [{"type": "DisruptionTarget", "status": "True", "reason": "Evicted"}])

    def replacement() -> Obj | None:
        fresh = [p for p in job_pods(api, ns, "patient") if p["metadata"]["uid"] != first[0]["metadata"]["uid"]]
        return fresh[0] if fresh else None

    second = wait_for(replacement, what="a replacement for the disrupted pod")
    assert second is not None
    set_status(api, ns, second, "Succeeded", [])
    done = wait_condition(api, ns, "patient", "Complete")
    assert done["status"]["succeeded"] == 1 and not done["status"].get("failed")  # backoffLimit 0, not failed


def set_status(api: httpx.Client, ns: str, pod: Obj, phase: str, conditions: list[Obj]) -> None:
    """Play the kubelet (or the eviction that marked the pod) for a pod on a node nobody serves."""
    fresh = api.get(f"/api/v1/namespaces/{ns}/pods/{pod['metadata']['name']}").json()
    code = 0 if phase == "Succeeded" else 137
    fresh["status"] = {
        "phase": phase,
        "conditions": conditions,
        "containerStatuses": [{"name": "main", "ready": False, "restartCount": 0, "image": "busybox", "imageID": "",
                               "state": {"terminated": {"exitCode": code, "finishedAt": "2024-01-01T00:00:00Z"}}}],
    }  # fmt: skip
    resp = api.put(f"/api/v1/namespaces/{ns}/pods/{pod['metadata']['name']}/status", json=fresh)
    assert resp.status_code == 200, resp.text


def test_api_server_validates_the_policy_as_kubernetes(api: httpx.Client) -> None:
    ns = new_namespace(api, "job-pfp")
    on_failure = job_with_policy("a", ["true"], FAIL_ON_42)
    on_failure["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    fail_index = job_with_policy("b", ["true"], {"rules": [{"action": "FailIndex", "onExitCodes": {
        "operator": "In", "values": [1]}}]})  # fmt: skip
    unordered = job_with_policy("c", ["true"], {"rules": [{"action": "Count", "onExitCodes": {
        "containerName": "nope", "operator": "In", "values": [3, 0]}}]})  # fmt: skip
    per_index = simple_job("d", ["true"], completions=2, backoffLimitPerIndex=1)  # NonIndexed
    not_indexed = simple_job("e", ["true"], successPolicy={"rules": [{"succeededCount": 1}]})
    cases = {
        "a": 'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when '
             "podFailurePolicy is specified",
        "b": 'spec.podFailurePolicy.rules[0].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex '
             "to be set",
        "c": "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [3,0]: must be ordered",
        "d": "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
        "e": "spec.successPolicy: Invalid value:",
    }  # fmt: skip
    for manifest in (on_failure, fail_index, unordered, per_index, not_indexed):
        resp = api.post(jobs_path(ns), json=manifest)
        assert resp.status_code == 422, resp.text
        assert cases[manifest["metadata"]["name"]] in resp.json()["message"], resp.json()["message"]
    assert "must not be 0 for the In operator" in api.post(jobs_path(ns), json=unordered).json()["message"]
    assert "must be one of the container or initContainer names" in api.post(jobs_path(ns), json=unordered).text


def test_success_policy_completes_an_indexed_job_early(
    api: httpx.Client, job_cluster: ComponentProcess  # noqa: F811
) -> None:
    ns = new_namespace(api, "job-pfp")
    policy = {"rules": [{"succeededCount": 2}]}
    create_job(api, ns, simple_job("early", ["run-something"], completions=6, parallelism=2,
                                   completionMode="Indexed", successPolicy=policy))  # fmt: skip
    done = wait_condition(api, ns, "early", "Complete", timeout=30)
    status = done["status"]
    for type_ in ("SuccessCriteriaMet", "Complete"):
        cond = condition(done, type_)
        assert cond is not None and (cond["reason"], cond["message"]) == ("SuccessPolicy", "Matched rules at index 0")
    assert status["succeeded"] >= 2 and len(status["completedIndexes"].split(",")) >= 1
    assert not status.get("active") and status["terminating"] == 0
    wait_for(lambda: all(p["status"].get("phase") in ("Succeeded", "Failed") for p in job_pods(api, ns, "early")),
             what="no pod left running")  # fmt: skip
    assert len(job_pods(api, ns, "early")) < 6  # it stopped before running every index
    assert get_job(api, ns, "early")["status"]["succeeded"] == status["succeeded"]
