"""Validation of batch/v1 Jobs and CronJobs.

A Job runs pods *to completion*, so its pods must not be restarted forever: the template's
restartPolicy must be OnFailure or Never (Kubernetes' message says "Required value" because the
PodSpec default, Always, is never right for a Job). Its selector is normally generated from the
Job's uid (see defaults/workloads.py), and once the Job exists its selector, template and
completion mode are fixed.

A `podFailurePolicy` is checked rule by rule as Kubernetes does (at most 20 rules; an action of
FailJob, Ignore, Count or FailIndex; exactly one of onExitCodes and onPodConditions; exit-code values
ordered, unique, at most 255, never 0 for In; a containerName that exists in the template), and it
requires restartPolicy Never and podReplacementPolicy Failed. A `successPolicy` needs Indexed
completion mode. `backoffLimitPerIndex` and `maxFailedIndexes` need Indexed completion mode (and
`maxFailedIndexes`, at most `completions` and 10^5, needs `backoffLimitPerIndex`; above 10^5
completions it is required and capped at 10^4, as is parallelism); the FailIndex action needs
`backoffLimitPerIndex`, which is immutable once the Job exists.
"""

from __future__ import annotations

import re
from typing import Any

from api.errors import (
    FieldError,
    duplicate,
    invalid_value,
    not_supported,
    required,
    too_long,
    too_many,
)
from apiserver.registry.validation.meta import validate_immutable
from apiserver.registry.validation.pod import validate_pod_template
from apiserver.registry.validation.workloads import (
    label_selector_matches,
    nonnegative,
    selector_mismatch,
    validate_label_selector,
)

Obj = dict[str, Any]
Errors = list[FieldError]

SUPPORTED_COMPLETION_MODES = ["NonIndexed", "Indexed"]
SUPPORTED_CONCURRENCY_POLICIES = ["Allow", "Forbid", "Replace"]
SUPPORTED_POD_FAILURE_POLICY_ACTIONS = ["Count", "FailIndex", "FailJob", "Ignore"]
SUPPORTED_EXIT_CODES_OPERATORS = ["In", "NotIn"]
SUPPORTED_CONDITION_STATUSES = ["False", "True", "Unknown"]
SUPPORTED_POD_REPLACEMENT_POLICIES = ["Failed", "TerminatingOrFailed"]
# Kubernetes' limits for Indexed Jobs (they cap the length of completedIndexes and failedIndexes).
MAX_PARALLELISM_FOR_INDEXED_JOB = 100_000
MAX_FAILED_INDEXES_FOR_INDEXED_JOB = 100_000
COMPLETIONS_SOFT_LIMIT = 100_000
PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS = 10_000
MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS = 10_000
MAX_POD_FAILURE_POLICY_RULES = 20
MAX_ON_EXIT_CODES_VALUES = 255
MAX_ON_POD_CONDITIONS_PATTERNS = 20
MAX_SUCCESS_POLICY_RULES = 20
MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024
# A CronJob's name plus the 11-character timestamp suffix of its Jobs must fit in 63.
CRON_JOB_NAME_MAX = 52
CRON_MACROS = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
_CRON_FIELD = re.compile(r"^[0-9A-Za-z*?/,\-]+$")


def validate_job_spec(spec: object, path: str, *, selector_required: bool = True) -> Errors:
    if not isinstance(spec, dict):
        return [required(path, "")]
    errs: Errors = []
    errs += nonnegative(spec.get("parallelism"), f"{path}.parallelism")
    errs += nonnegative(spec.get("completions"), f"{path}.completions")
    errs += nonnegative(spec.get("backoffLimit"), f"{path}.backoffLimit")
    errs += nonnegative(spec.get("ttlSecondsAfterFinished"), f"{path}.ttlSecondsAfterFinished")
    deadline = spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and deadline <= 0:
        errs.append(invalid_value(f"{path}.activeDeadlineSeconds", deadline, "must be greater than 0"))
    mode = spec.get("completionMode")
    if mode and mode not in SUPPORTED_COMPLETION_MODES:
        errs.append(not_supported(f"{path}.completionMode", mode, SUPPORTED_COMPLETION_MODES))
    errs += _validate_per_index_fields(spec, mode, path)
    selector = spec.get("selector")
    template = spec.get("template")
    if selector is None:
        if selector_required:
            errs.append(required(f"{path}.selector", ""))
    else:
        errs += validate_label_selector(selector, f"{path}.selector")
        if isinstance(template, dict):
            labels = (template.get("metadata") or {}).get("labels") or {}
            errs += selector_mismatch(label_selector_matches(selector, labels), template, f"{path}.template")
    if not isinstance(template, dict):
        return errs + [required(f"{path}.template", "")]
    errs += validate_pod_template(template, f"{path}.template")
    pod_spec = template.get("spec")
    pod_spec = pod_spec if isinstance(pod_spec, dict) else {}
    failure_policy = spec.get("podFailurePolicy")
    if failure_policy is not None:
        errs += _validate_pod_failure_policy(failure_policy, spec, pod_spec, f"{path}.podFailurePolicy")
    if spec.get("successPolicy") is not None:
        if mode != "Indexed":
            errs.append(invalid_value(f"{path}.successPolicy", spec["successPolicy"],
                                      "requires indexed completion mode"))
        else:
            errs += _validate_success_policy(spec, f"{path}.successPolicy")
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None:
        if failure_policy is not None and replacement != "Failed":
            errs.append(not_supported(f"{path}.podReplacementPolicy", replacement, ["Failed"]))
        elif replacement not in SUPPORTED_POD_REPLACEMENT_POLICIES:
            errs.append(not_supported(f"{path}.podReplacementPolicy", replacement, SUPPORTED_POD_REPLACEMENT_POLICIES))
    policy = pod_spec.get("restartPolicy")
    if policy not in ("OnFailure", "Never"):
        errs.append(required(f"{path}.template.spec.restartPolicy", 'valid values: "OnFailure", "Never"'))
    elif failure_policy is not None and policy != "Never":
        errs.append(invalid_value(f"{path}.template.spec.restartPolicy", policy,
                                  'only "Never" is supported when podFailurePolicy is specified'))
    return errs


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _validate_per_index_fields(spec: Obj, mode: object, path: str) -> Errors:
    """completionMode and what depends on it: Indexed limits, backoffLimitPerIndex and maxFailedIndexes."""
    errs: Errors = []
    per_index, max_failed = spec.get("backoffLimitPerIndex"), spec.get("maxFailedIndexes")
    completions, parallelism = _int(spec.get("completions")), _int(spec.get("parallelism"))
    errs += nonnegative(per_index, f"{path}.backoffLimitPerIndex")
    if max_failed is not None:
        errs += nonnegative(max_failed, f"{path}.maxFailedIndexes")
        if per_index is None:
            errs.append(required(f"{path}.backoffLimitPerIndex", "when maxFailedIndexes is specified"))
    if mode == "Indexed":
        if spec.get("completions") is None:
            errs.append(required(f"{path}.completions", "when completion mode is Indexed"))
        if parallelism is not None and parallelism > MAX_PARALLELISM_FOR_INDEXED_JOB:
            errs.append(invalid_value(f"{path}.parallelism", parallelism, f"must be less than or equal to "
                                      f"{MAX_PARALLELISM_FOR_INDEXED_JOB} when completion mode is Indexed"))
        max_failed_int = _int(max_failed)
        if completions is not None and max_failed_int is not None and max_failed_int > completions:
            errs.append(invalid_value(f"{path}.maxFailedIndexes", max_failed_int,
                                      "must be less than or equal to completions"))
        if max_failed_int is not None and max_failed_int > MAX_FAILED_INDEXES_FOR_INDEXED_JOB:
            errs.append(invalid_value(f"{path}.maxFailedIndexes", max_failed_int,
                                      f"must be less than or equal to {MAX_FAILED_INDEXES_FOR_INDEXED_JOB}"))
        if completions is not None and completions > COMPLETIONS_SOFT_LIMIT and per_index is not None:
            high = f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
            if max_failed is None:
                errs.append(required(f"{path}.maxFailedIndexes",
                                     f"must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"))
            if parallelism is not None and parallelism > PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS:
                errs.append(invalid_value(f"{path}.parallelism", parallelism, "must be less than or equal to "
                                          f"{PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS} {high}"))
            if max_failed_int is not None and max_failed_int > MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS:
                errs.append(invalid_value(f"{path}.maxFailedIndexes", max_failed_int, "must be less than or equal "
                                          f"to {MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS} {high}"))
    elif not mode or mode == "NonIndexed":
        for name, value in (("backoffLimitPerIndex", per_index), ("maxFailedIndexes", max_failed)):
            if value is not None:
                errs.append(invalid_value(f"{path}.{name}", value, "requires indexed completion mode"))
    return errs


def _validate_pod_failure_policy(policy: object, spec: Obj, pod_spec: Obj, path: str) -> Errors:
    if not isinstance(policy, dict):
        return [invalid_value(path, policy, "must be an object")]
    rules = policy.get("rules")
    if not isinstance(rules, list):
        return [required(f"{path}.rules", "")]
    errs: Errors = []
    if len(rules) > MAX_POD_FAILURE_POLICY_RULES:
        errs.append(too_many(f"{path}.rules", len(rules), MAX_POD_FAILURE_POLICY_RULES))
    names = {c.get("name") for key in ("containers", "initContainers") for c in pod_spec.get(key) or []
             if isinstance(c, dict)}
    for i, rule in enumerate(rules):
        rule_path = f"{path}.rules[{i}]"
        if not isinstance(rule, dict):
            errs.append(invalid_value(rule_path, rule, "must be an object"))
            continue
        action = rule.get("action")
        if not action:
            errs.append(required(f"{rule_path}.action",
                                 "valid values: " + str(SUPPORTED_POD_FAILURE_POLICY_ACTIONS).replace("'", '"')))
        elif action == "FailIndex":
            if spec.get("backoffLimitPerIndex") is None:
                errs.append(invalid_value(f"{rule_path}.action", action,
                                          "requires the backoffLimitPerIndex to be set"))
        elif action not in SUPPORTED_POD_FAILURE_POLICY_ACTIONS:
            errs.append(not_supported(f"{rule_path}.action", action, SUPPORTED_POD_FAILURE_POLICY_ACTIONS))
        on_exit, on_conditions = rule.get("onExitCodes"), rule.get("onPodConditions")
        if on_exit is not None:
            errs += _validate_on_exit_codes(on_exit, names, f"{rule_path}.onExitCodes")
        if on_conditions:
            errs += _validate_on_pod_conditions(on_conditions, f"{rule_path}.onPodConditions")
        if on_exit is not None and on_conditions:
            errs.append(invalid_value(rule_path, None,
                                      "specifying both OnExitCodes and OnPodConditions is not supported"))
        if on_exit is None and not on_conditions:
            errs.append(invalid_value(rule_path, None,
                                      "specifying one of OnExitCodes and OnPodConditions is required"))
    return errs


def _validate_on_exit_codes(req: object, names: set[Any], path: str) -> Errors:
    if not isinstance(req, dict):
        return [invalid_value(path, req, "must be an object")]
    errs: Errors = []
    operator = req.get("operator")
    if not operator:
        errs.append(required(f"{path}.operator", 'valid values: ["In" "NotIn"]'))
    elif operator not in SUPPORTED_EXIT_CODES_OPERATORS:
        errs.append(not_supported(f"{path}.operator", operator, SUPPORTED_EXIT_CODES_OPERATORS))
    name = req.get("containerName")
    if name is not None and name not in names:
        errs.append(invalid_value(f"{path}.containerName", name,
                                  "must be one of the container or initContainer names in the pod template"))
    values = req.get("values") or []
    if not values:
        errs.append(invalid_value(f"{path}.values", values, "at least one value is required"))
    elif len(values) > MAX_ON_EXIT_CODES_VALUES:
        errs.append(too_many(f"{path}.values", len(values), MAX_ON_EXIT_CODES_VALUES))
    seen: set[Any] = set()
    for j, value in enumerate(values):
        if operator == "In" and value == 0:
            errs.append(invalid_value(f"{path}.values[{j}]", value, "must not be 0 for the In operator"))
        if value in seen:
            errs.append(duplicate(f"{path}.values[{j}]", value))
        seen.add(value)
    if any(not isinstance(v, int) for v in values):
        errs.append(invalid_value(f"{path}.values", values, "must be integers"))
    elif values != sorted(values):
        errs.append(invalid_value(f"{path}.values", values, "must be ordered"))
    return errs


def _validate_on_pod_conditions(patterns: object, path: str) -> Errors:
    if not isinstance(patterns, list):
        return [invalid_value(path, patterns, "must be a list")]
    errs: Errors = []
    if len(patterns) > MAX_ON_POD_CONDITIONS_PATTERNS:
        errs.append(too_many(path, len(patterns), MAX_ON_POD_CONDITIONS_PATTERNS))
    for j, pattern in enumerate(patterns):
        if not isinstance(pattern, dict) or not pattern.get("type"):
            errs.append(required(f"{path}[{j}].type", ""))
            continue
        # Kubernetes defaults an empty status to "True" before validating it.
        status = pattern.get("status") or "True"
        if status not in SUPPORTED_CONDITION_STATUSES:
            errs.append(not_supported(f"{path}[{j}].status", status, SUPPORTED_CONDITION_STATUSES))
    return errs


def _indexes_total(text: str, completions: int) -> int:
    """Kubernetes' validateIndexesFormat: ordered, non-overlapping intervals below `completions`."""
    last: int | None = None
    total = 0
    for interval in text.split(","):
        parts = interval.split("-")
        if len(parts) > 2:
            raise ValueError(f"the fragment \"{interval}\" violates the requirement that an index interval "
                             "can have at most two parts separated by '-'")
        bounds: list[int] = []
        for part in parts:
            if not part.isdigit():
                raise ValueError(f'cannot convert string to integer for index: "{part}"')
            if int(part) >= completions:
                raise ValueError(f'too large index: "{part}"')
            bounds.append(int(part))
        first, end = bounds[0], bounds[-1]
        if len(bounds) == 2 and first >= end:
            raise ValueError(f"non-increasing order, previous: {first}, current: {end}")
        if last is not None and last >= first:
            raise ValueError(f"non-increasing order, previous: {last}, current: {first}")
        total += end - first + 1
        last = end
    return total


def _validate_success_policy(spec: Obj, path: str) -> Errors:
    policy = spec["successPolicy"]
    rules = policy.get("rules") if isinstance(policy, dict) else None
    if not rules or not isinstance(rules, list):
        return [required(f"{path}.rules", "at least one rules must be specified when the successPolicy is specified")]
    errs: Errors = []
    if len(rules) > MAX_SUCCESS_POLICY_RULES:
        errs.append(too_many(f"{path}.rules", len(rules), MAX_SUCCESS_POLICY_RULES))
    completions = int(spec.get("completions") or 0)
    for i, rule in enumerate(rules):
        rule_path = f"{path}.rules[{i}]"
        rule = rule if isinstance(rule, dict) else {}
        indexes, count = rule.get("succeededIndexes"), rule.get("succeededCount")
        if indexes is None and count is None:
            errs.append(required(rule_path, "at least one of succeededCount or succeededIndexes must be specified"))
        total = 0
        if indexes is not None:
            if len(str(indexes)) > MAX_SUCCEEDED_INDEXES_LENGTH:
                errs.append(too_long(f"{rule_path}.succeededIndexes", indexes, MAX_SUCCEEDED_INDEXES_LENGTH))
            try:
                total = _indexes_total(str(indexes), completions) if indexes else 0
            except ValueError as exc:
                errs.append(invalid_value(f"{rule_path}.succeededIndexes", indexes,
                                          f"error parsing succeededIndexes: {exc}"))
        if count is not None:
            errs += nonnegative(count, f"{rule_path}.succeededCount")
            if isinstance(count, int) and count > completions:
                errs.append(invalid_value(f"{rule_path}.succeededCount", count,
                                          f"must be less than or equal to {completions} "
                                          "(the number of specified completions)"))
            if indexes is not None and isinstance(count, int) and count > total:
                errs.append(invalid_value(f"{rule_path}.succeededCount", count,
                                          f"must be less than or equal to {total} "
                                          "(the number of indexes in the specified succeededIndexes field)"))
    return errs


def validate_job_update(new_spec: Obj, old_spec: Obj) -> Errors:
    errs = validate_immutable(new_spec.get("selector"), old_spec.get("selector"), "spec.selector")
    errs += validate_immutable(new_spec.get("completionMode"), old_spec.get("completionMode"),
                               "spec.completionMode")
    if new_spec.get("completionMode") != "Indexed":
        errs += validate_immutable(new_spec.get("completions"), old_spec.get("completions"),
                                   "spec.completions")
    errs += validate_immutable(new_spec.get("template"), old_spec.get("template"), "spec.template")
    errs += validate_immutable(new_spec.get("backoffLimitPerIndex"), old_spec.get("backoffLimitPerIndex"),
                               "spec.backoffLimitPerIndex")
    return errs


def validate_schedule(schedule: object, path: str) -> Errors:
    """A standard 5-field cron line or a macro such as @hourly (TZ= prefixes are refused)."""
    if not schedule:
        return [required(path, "")]
    text = str(schedule).strip()
    if text.startswith(("TZ=", "CRON_TZ=")):
        return [invalid_value(path, schedule,
                              "cannot use TZ or CRON_TZ in schedule, use timeZone field instead")]
    if text.startswith("@"):
        if text in CRON_MACROS:
            return []
        return [invalid_value(path, schedule, f"unrecognized descriptor: {text}")]
    fields = text.split()
    if len(fields) != 5:
        return [invalid_value(path, schedule, f"expected exactly 5 fields, found {len(fields)}: {text}")]
    for f in fields:
        if not _CRON_FIELD.match(f):
            return [invalid_value(path, schedule, f"failed to parse int from {f}")]
    return []


def validate_cron_job_spec(spec: object, name: str) -> Errors:
    if not isinstance(spec, dict):
        return [required("spec", "")]
    errs: Errors = []
    if len(name) > CRON_JOB_NAME_MAX:
        errs.append(invalid_value("metadata.name", name,
                                  f"must be no more than {CRON_JOB_NAME_MAX} characters"))
    errs += validate_schedule(spec.get("schedule"), "spec.schedule")
    policy = spec.get("concurrencyPolicy")
    if not policy:
        errs.append(required("spec.concurrencyPolicy", ""))
    elif policy not in SUPPORTED_CONCURRENCY_POLICIES:
        errs.append(not_supported("spec.concurrencyPolicy", policy, SUPPORTED_CONCURRENCY_POLICIES))
    errs += nonnegative(spec.get("startingDeadlineSeconds"), "spec.startingDeadlineSeconds")
    errs += nonnegative(spec.get("successfulJobsHistoryLimit"), "spec.successfulJobsHistoryLimit")
    errs += nonnegative(spec.get("failedJobsHistoryLimit"), "spec.failedJobsHistoryLimit")
    job_template = spec.get("jobTemplate")
    if not isinstance(job_template, dict):
        return errs + [required("spec.jobTemplate", "")]
    errs += validate_job_spec(job_template.get("spec"), "spec.jobTemplate.spec", selector_required=False)
    return errs
