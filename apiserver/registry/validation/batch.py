"""Validation of batch/v1 Jobs and CronJobs.

A Job runs pods *to completion*, so its pods must not be restarted forever: the template's
restartPolicy must be OnFailure or Never (Kubernetes' message says "Required value" because the
PodSpec default, Always, is never right for a Job). Its selector is normally generated from the
Job's uid (see defaults/workloads.py), and once the Job exists its selector, template and
completion mode are fixed.
"""

from __future__ import annotations

import re
from typing import Any

from api.errors import FieldError, invalid_value, not_supported, required
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
    if mode == "Indexed" and spec.get("completions") is None:
        errs.append(required(f"{path}.completions", "when completion mode is Indexed"))
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
    policy = pod_spec.get("restartPolicy") if isinstance(pod_spec, dict) else None
    if policy not in ("OnFailure", "Never"):
        errs.append(required(f"{path}.template.spec.restartPolicy", 'valid values: "OnFailure", "Never"'))
    return errs


def validate_job_update(new_spec: Obj, old_spec: Obj) -> Errors:
    errs = validate_immutable(new_spec.get("selector"), old_spec.get("selector"), "spec.selector")
    errs += validate_immutable(new_spec.get("completionMode"), old_spec.get("completionMode"),
                               "spec.completionMode")
    if new_spec.get("completionMode") != "Indexed":
        errs += validate_immutable(new_spec.get("completions"), old_spec.get("completions"),
                                   "spec.completions")
    errs += validate_immutable(new_spec.get("template"), old_spec.get("template"), "spec.template")
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
