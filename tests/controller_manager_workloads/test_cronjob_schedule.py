"""The CronJob schedule decision as a pure function: explicit times in, the due time out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from controller_manager.controllers import cronjob_schedule as cs


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_the_most_recent_missed_time_runs_and_the_next_is_when_to_look_again() -> None:
    plan = cs.due(cs.parse("*/5 * * * *", None), created=at("2026-11-23 09:58"), last=at("2026-11-23 10:00"),
                  now=at("2026-11-23 10:17:30"), starting_deadline_seconds=None)  # fmt: skip
    assert (plan.scheduled, plan.missed, plan.next_time) == (at("2026-11-23 10:15"), 3, at("2026-11-23 10:20"))


def test_nothing_is_due_between_two_scheduled_times() -> None:
    plan = cs.due(cs.parse("@hourly", None), created=at("2026-11-23 09:00"), last=at("2026-11-23 10:00"),
                  now=at("2026-11-23 10:59:59"), starting_deadline_seconds=None)  # fmt: skip
    assert (plan.scheduled, plan.missed, plan.next_time) == (None, 0, at("2026-11-23 11:00"))


def test_a_new_cron_job_counts_from_its_creation() -> None:
    plan = cs.due(cs.parse("0 * * * *", None), created=at("2026-11-23 10:30"), last=None,
                  now=at("2026-11-23 11:00:01"), starting_deadline_seconds=None)  # fmt: skip
    assert plan.scheduled == at("2026-11-23 11:00")


def test_starting_deadline_limits_how_far_back_missed_times_count() -> None:
    sched = cs.parse("* * * * *", None)
    plan = cs.due(sched, created=at("2026-01-01 00:00"), last=None, now=at("2026-11-23 10:00:30"),
                  starting_deadline_seconds=200)  # fmt: skip
    assert (plan.scheduled, plan.missed) == (at("2026-11-23 10:00"), 3)  # 09:58, 09:59, 10:00
    assert not cs.too_late(plan.scheduled, at("2026-11-23 10:00:30"), 200)


def test_more_than_a_hundred_missed_times_still_picks_the_latest() -> None:
    plan = cs.due(cs.parse("* * * * *", None), created=at("2026-11-20 00:00"), last=None,
                  now=at("2026-11-23 10:00:30"), starting_deadline_seconds=None)  # fmt: skip
    assert plan.missed > cs.TOO_MANY_MISSED and plan.scheduled == at("2026-11-23 10:00")


def test_a_run_later_than_its_starting_deadline_is_missed() -> None:
    assert cs.too_late(at("2026-11-23 10:00"), at("2026-11-23 10:00:11"), 10)
    assert not cs.too_late(at("2026-11-23 10:00"), at("2026-11-23 10:00:10"), 10)
    assert not cs.too_late(at("2026-11-23 10:00"), at("2026-11-24 10:00"), None)


def test_the_schedule_is_read_in_the_cron_jobs_time_zone() -> None:
    # 09:00 in New York is 14:00 UTC in November (EST, UTC-5).
    plan = cs.due(cs.parse("0 9 * * *", "America/New_York"), created=at("2026-11-22 12:00"), last=None,
                  now=at("2026-11-23 14:00:05"), starting_deadline_seconds=None)  # fmt: skip
    assert plan.scheduled == at("2026-11-23 14:00")
    assert cs.rfc3339_in(plan.scheduled, cs.parse("@daily", "America/New_York").zone) == "2026-11-23T09:00:00-05:00"
    assert cs.rfc3339_in(plan.scheduled, UTC) == "2026-11-23T14:00:00Z"


@pytest.mark.parametrize("macro,after,expected", [
    ("@hourly", "2026-11-23 10:10", "2026-11-23 11:00"),
    ("@daily", "2026-11-23 10:10", "2026-11-24 00:00"),
    ("@weekly", "2026-11-23 10:10", "2026-11-29 00:00"),  # Sunday
    ("@monthly", "2026-11-23 10:10", "2026-12-01 00:00"),
    ("@yearly", "2026-11-23 10:10", "2027-01-01 00:00"),
])  # fmt: skip
def test_macros(macro: str, after: str, expected: str) -> None:
    assert cs.parse(macro, None).next_after(at(after)) == at(expected)


@pytest.mark.parametrize("schedule,zone", [("bogus", None), ("61 * * * *", None), ("* * * * *", "Mars/Olympus")])
def test_bad_schedules_and_zones_are_refused(schedule: str, zone: str | None) -> None:
    with pytest.raises(cs.ScheduleError):
        cs.parse(schedule, zone)


def test_job_names_are_minutes_since_the_epoch_so_a_time_gives_one_name() -> None:
    t = at("2026-11-23 10:05")
    assert cs.job_name("hello", t) == f"hello-{int(t.timestamp()) // 60}" == "hello-29923805"
    assert cs.job_name("hello", t + timedelta(seconds=59)) == "hello-29923805"
