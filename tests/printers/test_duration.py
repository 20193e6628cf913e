"""AGE formatting: apimachinery's HumanDuration, case by case at every boundary."""

import pytest

from apiserver.printers import human_duration, translate_timestamp_since
from tests.printers.objects import NOW, ago

MINUTE = 60
HOUR = 60 * MINUTE
DAY = 24 * HOUR
YEAR = 365 * DAY


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (-5, "<invalid>"),
        (-2, "<invalid>"),
        (-1.9, "0s"),  # truncated toward zero, so almost-now in the future is still 0s
        (-1, "0s"),
        (0, "0s"),
        (0.9, "0s"),
        (59, "59s"),
        (60, "60s"),
        (119, "119s"),
        (2 * MINUTE, "2m"),
        (2 * MINUTE + 3, "2m3s"),
        (9 * MINUTE + 59, "9m59s"),
        (10 * MINUTE, "10m"),
        (10 * MINUTE + 59, "10m"),
        (179 * MINUTE + 59, "179m"),
        (3 * HOUR, "3h"),
        (3 * HOUR + 5 * MINUTE + 30, "3h5m"),
        (7 * HOUR + 59 * MINUTE, "7h59m"),
        (8 * HOUR, "8h"),
        (47 * HOUR + 59 * MINUTE, "47h"),
        (2 * DAY, "2d"),
        (3 * DAY + 5 * HOUR, "3d5h"),
        (7 * DAY + 23 * HOUR, "7d23h"),
        (8 * DAY, "8d"),
        (729 * DAY, "729d"),
        (2 * YEAR, "2y"),
        (2 * YEAR + 40 * DAY, "2y40d"),
        (7 * YEAR + 364 * DAY, "7y364d"),
        (8 * YEAR, "8y"),
        (8 * YEAR + 200 * DAY, "8y"),
        (30 * YEAR, "30y"),
    ],
)
def test_human_duration_matches_kubectl(seconds: float, expected: str) -> None:
    assert human_duration(seconds) == expected


def test_missing_timestamp_is_unknown() -> None:
    assert translate_timestamp_since(None, NOW) == "<unknown>"
    assert translate_timestamp_since("", NOW) == "<unknown>"
    assert translate_timestamp_since("not a time", NOW) == "<unknown>"


def test_timestamp_age_is_measured_from_now() -> None:
    assert translate_timestamp_since(ago(minutes=5, seconds=30), NOW) == "5m30s"
    assert translate_timestamp_since(ago(days=3, hours=5), NOW) == "3d5h"


def test_timestamp_with_fraction_and_offset_parses() -> None:
    # A MicroTime (events' eventTime) carries microseconds; offsets other than Z are legal RFC 3339.
    assert translate_timestamp_since("2025-03-01T11:59:00.123456Z", NOW) == "59s"
    assert translate_timestamp_since("2025-03-01T13:00:00+02:00", NOW) == "60m"


def test_timestamp_in_the_future_is_invalid() -> None:
    assert translate_timestamp_since("2025-03-01T12:00:10Z", NOW) == "<invalid>"
