"""CronJobController: start a Job at each time of a CronJob's schedule, and keep its history short.

Desired state: for each scheduled time of `spec.schedule` (in `spec.timeZone`) since the CronJob
last ran, one Job made from `spec.jobTemplate`, unless the CronJob is suspended, the time is older
than `startingDeadlineSeconds`, or `concurrencyPolicy: Forbid` and a Job is still running
(`Replace` deletes the running one first). At most `successfulJobsHistoryLimit` finished-Complete
and `failedJobsHistoryLimit` finished-Failed Jobs are kept.
Current state: the CronJob's `status` (active Jobs, lastScheduleTime, lastSuccessfulTime) and the
Jobs it owns, from the informers.
What it does about the difference, in one pass per key: bring `status.active` up to date with the
Jobs (a finished one leaves it: SawCompletedJob; a vanished one: MissingJob), work out which
scheduled time is due (`cronjob_schedule.due`, a pure function of the times), create that Job,
named after its scheduled time so a restart cannot create it twice, record it in `status`, delete
the oldest finished Jobs over the limits, and queue the key again for the next scheduled time.
Events come "From cronjob-controller" with Kubernetes' reasons and wording:

    Normal   SuccessfulCreate    Created job hello-29923805
    Normal   SawCompletedJob     Saw completed job: hello-29923805, condition: Complete
    Normal   SuccessfulDelete    Deleted job hello-29923801
    Normal   JobAlreadyActive    Not starting job because prior execution is running and concurrency policy is Forbid
    Warning  MissSchedule        Missed scheduled time to start a job: Mon, 23 Nov 2026 10:05:00 +0000
    Warning  TooManyMissedTimes  too many missed start times: 101. Set or decrease
                                 .spec.startingDeadlineSeconds or check clock skew

The only clock is `datetime.now()` at the top of `reconcile`: every decision below it is made on
explicit times, so tests can give any.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from api import errors
from api.timestamps import parse_time
from client import NORMAL, WARNING
from client.informer import split_key
from controller_manager.controller import Controller
from controller_manager.controllers import cronjob_schedule as cs

log = logging.getLogger("controller_manager")
Obj = dict[str, Any]

SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"
NEXT_SCHEDULE_DELTA = 0.1  # seconds past the scheduled time to wake up, as Kubernetes pads it


def _at(value: str) -> datetime:
    """An RFC 3339 Time from the wire as an aware datetime (the epoch if unreadable)."""
    return datetime.fromtimestamp(parse_time(value) or 0.0, UTC)


def _rfc3339(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _finished(job: Obj) -> str | None:
    """"Complete" or "Failed" once the Job is finished, else None."""
    for cond in (job.get("status") or {}).get("conditions") or []:
        if cond.get("type") in ("Complete", "Failed") and cond.get("status") == "True":
            return str(cond["type"])
    return None


def _owned_by(job: Obj, cron_job_uid: str) -> bool:
    return any(
        ref.get("controller") and ref.get("kind") == "CronJob" and ref.get("uid") == cron_job_uid
        for ref in (job.get("metadata") or {}).get("ownerReferences") or []
    )


class CronJobController(Controller):
    name = "cronjob"
    component = "cronjob-controller"

    def setup(self) -> None:
        f = self.ctx.informers
        self.cron_jobs = f.informer_for("cronjobs")
        self.jobs = f.informer_for("jobs")
        self.cron_jobs.add_event_handler(self.enqueue, lambda _old, new: self.enqueue(new), self.enqueue)
        self.jobs.add_event_handler(self._job_changed, lambda _old, new: self._job_changed(new), self._job_changed)

    def _job_changed(self, job: Obj) -> None:
        md = job.get("metadata") or {}
        for ref in md.get("ownerReferences") or []:
            if ref.get("controller") and ref.get("kind") == "CronJob":
                self.enqueue(f"{md.get('namespace')}/{ref.get('name')}")

    async def reconcile(self, key: str) -> None:
        cron_job = self.cron_jobs.get(key)
        if cron_job is None:
            return
        namespace, _ = split_key(key)
        uid = cron_job["metadata"]["uid"]
        jobs = [j for j in self.jobs.by_index("namespace", namespace) if _owned_by(j, uid)]
        now = datetime.now(UTC)
        status = dict(cron_job.get("status") or {})
        changed = await self._sync_active(cron_job, status, jobs)
        wake_at, created = await self._maybe_start(cron_job, status, now)
        changed = changed or created
        if changed:
            await self._write_status(cron_job, status)
        await self._cleanup_history(cron_job, jobs)
        if wake_at is not None:
            self.enqueue_after(key, max(0.0, (wake_at - now).total_seconds()) + NEXT_SCHEDULE_DELTA)

    # -- status.active against the Jobs that exist --------------------------------------------------------
    async def _sync_active(self, cron_job: Obj, status: Obj, jobs: list[Obj]) -> bool:
        active: list[Obj] = list(status.get("active") or [])
        active_uids = {ref.get("uid") for ref in active}
        changed = False
        for job in jobs:
            md = job["metadata"]
            outcome = _finished(job)
            if md["uid"] in active_uids and outcome:
                active = [ref for ref in active if ref.get("uid") != md["uid"]]
                self.recorder.event(
                    cron_job, NORMAL, "SawCompletedJob", f"Saw completed job: {md['name']}, condition: {outcome}"
                )
                changed = True
            elif md["uid"] not in active_uids and not outcome:
                # Our own status write may simply not have reached the cache yet: ask the API server.
                cmd = cron_job["metadata"]
                fresh = await self.client.get("cronjobs", cmd["name"], cmd["namespace"])
                fresh_active = (fresh.get("status") or {}).get("active") or []
                if any(ref.get("uid") == md["uid"] for ref in fresh_active):
                    active = list(fresh_active)
                    active_uids = {ref.get("uid") for ref in active}
                    status.update({k: v for k, v in (fresh.get("status") or {}).items() if k != "active"})
                    continue
                message = f"Saw a job that the controller did not create or forgot: {md['name']}"
                self.recorder.event(cron_job, WARNING, "UnexpectedJob", message)
            if outcome == "Complete":
                done = (job.get("status") or {}).get("completionTime")
                last = status.get("lastSuccessfulTime")
                if done and (not last or _at(done) > _at(last)):
                    status["lastSuccessfulTime"] = done
                    changed = True
        existing = {j["metadata"]["uid"] for j in jobs}
        for ref in list(active):
            if ref.get("uid") in existing:
                continue
            try:  # the informer may lag behind our own create: ask the API server before giving up on it
                await self.client.get("jobs", ref["name"], ref.get("namespace"))
                continue
            except errors.NotFoundError:
                pass
            self.recorder.event(cron_job, NORMAL, "MissingJob", f"Active job went missing: {ref['name']}")
            active = [r for r in active if r.get("uid") != ref.get("uid")]
            changed = True
        status["active"] = active
        return changed

    # -- the schedule ---------------------------------------------------------------------------------------
    async def _maybe_start(self, cron_job: Obj, status: Obj, now: datetime) -> tuple[datetime | None, bool]:
        """Start the Job that is due, if any. (When to look again, whether status changed.)"""
        md, spec = cron_job["metadata"], cron_job.get("spec") or {}
        if md.get("deletionTimestamp") or spec.get("suspend"):
            return None, False
        try:
            schedule = cs.parse(str(spec.get("schedule") or ""), spec.get("timeZone"))
        except cs.ScheduleError as exc:
            reason = "UnknownTimeZone" if "time zone" in str(exc) else "UnparseableSchedule"
            self.recorder.event(cron_job, WARNING, reason, str(exc))
            return None, False
        deadline = spec.get("startingDeadlineSeconds")
        last = status.get("lastScheduleTime")
        plan = cs.due(
            schedule,
            created=_at(md["creationTimestamp"]),
            last=_at(last) if last else None,
            now=now,
            starting_deadline_seconds=deadline,
        )
        if plan.missed > cs.TOO_MANY_MISSED:
            self.recorder.event(
                cron_job, WARNING, "TooManyMissedTimes",
                f"too many missed start times: {plan.missed}. Set or decrease .spec.startingDeadlineSeconds "
                "or check clock skew",
            )  # fmt: skip
        scheduled = plan.scheduled
        if scheduled is None:
            return plan.next_time, False
        if cs.too_late(scheduled, now, deadline):
            when = scheduled.strftime("%a, %d %b %Y %H:%M:%S +0000")
            self.recorder.event(cron_job, WARNING, "MissSchedule", f"Missed scheduled time to start a job: {when}")
            return plan.next_time, False
        name = cs.job_name(md["name"], scheduled)
        active: list[Obj] = status["active"]
        if any(ref.get("name") == name for ref in active) or (last and _at(last) == scheduled):
            return plan.next_time, False  # this scheduled time was already handled
        policy = spec.get("concurrencyPolicy") or "Allow"
        if policy == "Forbid" and active:
            self.recorder.event(
                cron_job, NORMAL, "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy is Forbid",
            )  # fmt: skip
            return plan.next_time, False
        if policy == "Replace":
            for ref in list(active):
                await self._delete_job(cron_job, ref["name"])
                active.remove(ref)
        job = self._job_for(cron_job, name, scheduled, schedule)
        try:
            created = await self.client.create("jobs", job, md["namespace"])
        except errors.AlreadyExistsError:
            return plan.next_time, False  # made before a restart: the next pass finds it among our Jobs
        except errors.StatusError as exc:
            self.recorder.event(cron_job, WARNING, "FailedCreate", f"Error creating job: {exc}")
            raise
        self.recorder.event(cron_job, NORMAL, "SuccessfulCreate", f"Created job {name}")
        cmd = created["metadata"]
        active.append(
            {"kind": "Job", "namespace": cmd["namespace"], "name": cmd["name"], "uid": cmd["uid"],
             "apiVersion": "batch/v1", "resourceVersion": cmd["resourceVersion"]}
        )  # fmt: skip
        status["lastScheduleTime"] = _rfc3339(scheduled)
        return plan.next_time, True

    def _job_for(self, cron_job: Obj, name: str, scheduled: datetime, schedule: cs.Schedule) -> Obj:
        template = cron_job["spec"].get("jobTemplate") or {}
        tmd = template.get("metadata") or {}
        md = cron_job["metadata"]
        annotations = {
            **(tmd.get("annotations") or {}),
            SCHEDULED_TIMESTAMP: cs.rfc3339_in(scheduled, schedule.zone),
        }
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": name,
                "namespace": md["namespace"],
                "labels": dict(tmd.get("labels") or {}),
                "annotations": annotations,
                "ownerReferences": [
                    {"apiVersion": "batch/v1", "kind": "CronJob", "name": md["name"], "uid": md["uid"],
                     "controller": True, "blockOwnerDeletion": True}
                ],  # fmt: skip
            },
            "spec": template.get("spec") or {},
        }

    async def _write_status(self, cron_job: Obj, status: Obj) -> None:
        body = {**cron_job, "status": {k: v for k, v in status.items() if v not in (None, [])}}
        await self.client.update_status("cronjobs", body)

    # -- history ----------------------------------------------------------------------------------------------
    async def _cleanup_history(self, cron_job: Obj, jobs: list[Obj]) -> None:
        spec = cron_job.get("spec") or {}
        for outcome, limit in (("Complete", spec.get("successfulJobsHistoryLimit")),
                               ("Failed", spec.get("failedJobsHistoryLimit"))):  # fmt: skip
            if limit is None:
                continue
            finished = [j for j in jobs if _finished(j) == outcome and not j["metadata"].get("deletionTimestamp")]
            # Oldest first by start time, then name, as Kubernetes orders them.
            finished.sort(key=lambda j: ((j.get("status") or {}).get("startTime") or "", j["metadata"]["name"]))
            for job in finished[: max(0, len(finished) - int(limit))]:
                await self._delete_job(cron_job, job["metadata"]["name"])

    async def _delete_job(self, cron_job: Obj, name: str) -> None:
        try:
            await self.client.delete("jobs", name, cron_job["metadata"]["namespace"], propagation_policy="Background")
        except errors.NotFoundError:
            return
        self.recorder.event(cron_job, NORMAL, "SuccessfulDelete", f"Deleted job {name}")
