"""`spec.successPolicy` (Indexed Jobs only): declare success before every index has succeeded.

    successPolicy:
      rules:
      - succeededIndexes: "0"          # the leader (index 0) succeeded: done
      - succeededCount: 3              # or any three indexes succeeded
      - {succeededIndexes: "1-9", succeededCount: 2}   # or two of indexes 1…9

A rule with `succeededIndexes` is met when all of those indexes succeeded, or at least
`succeededCount` of them; a rule with only `succeededCount` when that many indexes succeeded at all.
The first rule met (in order) makes the Job `SuccessCriteriaMet` with reason `SuccessPolicy` and
message "Matched rules at index <i>"; the pods still running are then deleted and, once none is
left, the Job is `Complete` with the same reason and message.
"""

from __future__ import annotations

from typing import Any

from controller_manager.controllers import job_indexed

Obj = dict[str, Any]

REASON_SUCCESS_POLICY = "SuccessPolicy"


def match_success_policy(policy: Obj | None, completions: int, succeeded: set[int]) -> tuple[str, bool]:
    if not policy or not succeeded:
        return "", False
    for index, rule in enumerate(policy.get("rules") or []):
        count = rule.get("succeededCount")
        if rule.get("succeededIndexes") is not None:
            required = {i for i in job_indexed.parse_intervals(rule["succeededIndexes"]) if 0 <= i < completions}
            if not required:
                continue  # unreadable: Kubernetes skips the rule
            contains = len(required & succeeded)
            if contains == len(required) or (count is not None and contains >= int(count)):
                return f"Matched rules at index {index}", True
        elif count is not None and len(succeeded) >= int(count):
            return f"Matched rules at index {index}", True
    return "", False
