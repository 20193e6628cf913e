"""When is a CronJob due? Pure functions of (schedule, time zone, last run, now) — no clock inside.

The cronjob controller asks one question each time it looks at a CronJob: "which scheduled time,
if any, should have started a Job by now and has not?" Kubernetes answers it like this, and so
do we:

    earliest = status.lastScheduleTime, or the CronJob's creationTimestamp if it never ran
    if startingDeadlineSeconds is set: earliest = max(earliest, now - startingDeadlineSeconds)
    the candidates are the schedule's times t with earliest < t <= now
    none        → nothing is due; wake up again at the next scheduled time
    some        → only the *most recent* one runs (missed ones are not caught up one by one);
                  more than 100 missed → a TooManyMissedTimes warning, and still the most recent

A due time that is older than `startingDeadlineSeconds` is missed for good (a MissSchedule event)
instead of started late. The parsing itself — five fields, ranges, steps, names, `@hourly` and the
other macros — is croniter's, a maintained library, evaluated in the CronJob's `timeZone`
(an IANA name such as `Europe/Berlin`; the controller-manager's local zone when unset, as in
Kubernetes, which for us means UTC).

Job names are the CronJob's name plus the scheduled time in minutes since the epoch
(`hello-28930012`): the same time always gives the same name, so a controller that restarts
between creating a Job and recording it cannot start that run twice — the create answers
AlreadyExists.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter
from croniter.croniter import CroniterError

TOO_MANY_MISSED = 100


class ScheduleError(ValueError):
    """The schedule or the time zone cannot be understood."""


@dataclass(frozen=True)
class Schedule:
    expression: str
    zone: tzinfo

    def next_after(self, t: datetime) -> datetime:
        """The first scheduled time strictly after `t` (an aware datetime), in UTC."""
        it = croniter(self.expression, t.astimezone(self.zone))
        return it.get_next(datetime).astimezone(UTC)  # type: ignore[no-any-return]


def parse(expression: str, time_zone: str | None) -> Schedule:
    try:
        zone: tzinfo = ZoneInfo(time_zone) if time_zone else UTC
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(f"unknown time zone {time_zone}") from None
    if not croniter.is_valid(expression):
        raise ScheduleError(f"unparseable schedule: {expression!r}")
    try:
        croniter(expression, datetime.now(UTC))
    except (CroniterError, ValueError) as exc:
        raise ScheduleError(f"unparseable schedule: {expression!r}: {exc}") from None
    return Schedule(expression, zone)


@dataclass(frozen=True)
class Due:
    scheduled: datetime | None  # the most recent unstarted scheduled time, or None
    missed: int  # how many scheduled times passed since `earliest` (for TooManyMissedTimes)
    next_time: datetime  # the next scheduled time after now: when to look again


def due(schedule: Schedule, *, created: datetime, last: datetime | None, now: datetime,
        starting_deadline_seconds: int | None) -> Due:  # fmt: skip
    """Which scheduled time should run now (see the module docstring)."""
    earliest = last or created
    if starting_deadline_seconds is not None:
        earliest = max(earliest, now - timedelta(seconds=starting_deadline_seconds))
    scheduled: datetime | None = None
    missed = 0
    t = schedule.next_after(earliest)
    while t <= now:
        scheduled, missed = t, missed + 1
        if missed > TOO_MANY_MISSED:
            # Stop counting; jump to the last scheduled time at or before now.
            scheduled = _last_at_or_before(schedule, now, scheduled)
            break
        t = schedule.next_after(t)
    return Due(scheduled, missed, schedule.next_after(now))


def _last_at_or_before(schedule: Schedule, now: datetime, known: datetime) -> datetime:
    it = croniter(schedule.expression, now.astimezone(schedule.zone) + timedelta(seconds=1))
    prev: datetime = it.get_prev(datetime).astimezone(UTC)
    return max(prev, known).replace(fold=0)


def too_late(scheduled: datetime, now: datetime, starting_deadline_seconds: int | None) -> bool:
    """A run may start late, but not later than startingDeadlineSeconds after its time."""
    return starting_deadline_seconds is not None and scheduled + timedelta(seconds=starting_deadline_seconds) < now


def rfc3339_in(t: datetime, zone: tzinfo) -> str:
    """Go's RFC 3339 of `t` in `zone`: `Z` for UTC, else the offset (`2026-11-23T11:05:00+01:00`)."""
    text = t.astimezone(zone).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def job_name(cron_job_name: str, scheduled: datetime) -> str:
    return f"{cron_job_name}-{int(scheduled.timestamp()) // 60}"
