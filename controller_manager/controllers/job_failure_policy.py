"""`spec.podFailurePolicy`: decide, per failed pod, what its failure means for the Job.

    podFailurePolicy:
      rules:
      - action: FailJob                  # the first matching rule wins
        onExitCodes: {containerName: main, operator: In, values: [42]}
      - action: Ignore                   # a disruption is not the program's fault
        onPodConditions: [{type: DisruptionTarget}]

Actions, as in Kubernetes:
- FailJob: the whole Job fails at once — FailureTarget, then Failed, with reason `PodFailurePolicy`
  and a message naming the container, pod, exit code and rule index;
- Ignore: the failure is not counted (neither in `status.failed` nor against backoffLimit); the
  pod is replaced;
- Count: counted as any failure would be (also what happens when no rule matches);
- FailIndex: counted, and the pod's index fails at once — no retry, whatever is left of its
  `backoffLimitPerIndex` (which the API server requires for this action; job_backoff_per_index.py).

`onExitCodes` looks at terminated containers with a non-zero exit code (app containers first, then
init containers), optionally only the one named `containerName`; `onPodConditions` matches a pod
condition by type and status (status defaults to True). A podFailurePolicy makes the Job replace
only pods that have *finished* failing (`podReplacementPolicy: Failed`).
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

FAIL_JOB, IGNORE, COUNT, FAIL_INDEX = "FailJob", "Ignore", "Count", "FailIndex"
REASON_POD_FAILURE_POLICY = "PodFailurePolicy"


def match_pod_failure_policy(policy: Obj | None, pod: Obj) -> tuple[str | None, bool, str | None]:
    """(FailJob message or None, whether the failure counts, the matched action or None)."""
    if not policy:
        return None, True, None
    status, meta = pod.get("status") or {}, pod.get("metadata") or {}
    pod_name = f"{meta.get('namespace')}/{meta.get('name')}"
    for index, rule in enumerate(policy.get("rules") or []):
        action = rule.get("action")
        if rule.get("onExitCodes") is not None:
            container = _matching_container(status, rule["onExitCodes"])
            if container is None:
                continue
            if action == FAIL_JOB:
                code = container["state"]["terminated"].get("exitCode")
                message = (
                    f"Container {container.get('name')} for pod {pod_name} failed with exit code {code} "
                    f"matching {action} rule at index {index}"
                )
                return message, True, FAIL_JOB
        elif rule.get("onPodConditions") is not None:
            condition = _matching_condition(status, rule["onPodConditions"])
            if condition is None:
                continue
            if action == FAIL_JOB:
                cond_type = condition.get("type")
                message = f"Pod {pod_name} has condition {cond_type} matching {action} rule at index {index}"
                return message, True, FAIL_JOB
        else:
            continue
        if action == IGNORE:
            return None, False, IGNORE
        if action == COUNT:
            return None, True, COUNT
        if action == FAIL_INDEX:
            return None, True, FAIL_INDEX
        # An unknown action (the API server never lets one in): Kubernetes goes on to the next rule.
    return None, True, None


def _matching_container(status: Obj, requirement: Obj) -> Obj | None:
    for statuses in (status.get("containerStatuses") or [], status.get("initContainerStatuses") or []):
        for cs in statuses:
            terminated = (cs.get("state") or {}).get("terminated")
            if terminated is None:
                continue
            name = requirement.get("containerName")
            code = int(terminated.get("exitCode") or 0)
            if (name is None or name == cs.get("name")) and code != 0 and _operator_matches(code, requirement):
                return cs  # type: ignore[no-any-return]
    return None


def _operator_matches(code: int, requirement: Obj) -> bool:
    values = [int(v) for v in requirement.get("values") or []]
    if requirement.get("operator") == "In":
        return code in values
    if requirement.get("operator") == "NotIn":
        return code not in values
    return False


def _matching_condition(status: Obj, patterns: list[Obj]) -> Obj | None:
    for cond in status.get("conditions") or []:
        for pattern in patterns:
            if cond.get("type") == pattern.get("type") and cond.get("status") == (pattern.get("status") or "True"):
                return cond  # type: ignore[no-any-return]
    return None
