"""Vertex schedule crons: the TZ prefix, five-field checks and fire times in the cron's zone."""

from datetime import UTC, datetime

import pytest

from vtp.vertex import cron


@pytest.mark.parametrize(
    ("text", "zone", "expression"),
    [
        ("0 3 * * *", "UTC", "0 3 * * *"),
        ("TZ=Europe/Paris 0 3 * * *", "Europe/Paris", "0 3 * * *"),
        ("CRON_TZ=America/New_York */5 * * * 1-5", "America/New_York", "*/5 * * * 1-5"),
    ],
)
def test_split_reads_the_zone_prefix(text, zone, expression):
    assert cron.split(text) == (zone, expression)
    assert cron.parse(text) == (zone, expression)


@pytest.mark.parametrize(
    ("expression", "zone", "message"),
    [
        ("0 3 * *", "UTC", "has 4 fields; unix cron has 5"),
        ("0 0 3 * * *", "UTC", "has 6 fields"),
        ("61 * * * *", "UTC", "not a valid cron expression"),
        ("0 3 * * *", "Mars/Olympus", "not an IANA time zone"),
        ("TZ=UTC 0 3 * * *", "UTC", "not as a TZ= prefix"),
        ("0 0 30 2 *", "UTC", "never fires"),  # 30 February: croniter's bad-date error
        ("0 0 31 4,6,9,11 *", "Europe/Paris", "never fires"),
    ],
)
def test_check_refuses_what_vertex_refuses(expression, zone, message):
    with pytest.raises(cron.CronError, match=message):
        cron.check(expression, zone)


def test_fire_times_follow_the_zone_wall_clock_across_daylight_saving():
    # Paris moves from UTC+1 to UTC+2 on 2024-03-31: 03:00 local is 02:00 UTC, then 01:00 UTC.
    first = cron.next_time("TZ=Europe/Paris 0 3 * * *", datetime(2024, 3, 30, 12, tzinfo=UTC))
    second = cron.next_time("TZ=Europe/Paris 0 3 * * *", first)
    assert first == datetime(2024, 3, 31, 1, tzinfo=UTC)
    assert second == datetime(2024, 4, 1, 1, tzinfo=UTC)


def test_next_time_is_strictly_after_and_first_time_may_be_the_start():
    start = datetime(2024, 1, 1, 10, 0, tzinfo=UTC)
    assert cron.next_time("* * * * *", start) == datetime(2024, 1, 1, 10, 1, tzinfo=UTC)
    assert cron.first_time("* * * * *", start) == start
    late = datetime(2024, 1, 1, 10, 0, 30, tzinfo=UTC)
    assert cron.first_time("* * * * *", late) == datetime(2024, 1, 1, 10, 1, tzinfo=UTC)


def test_a_cron_that_fires_rarely_is_valid_and_the_end_of_the_calendar_is_a_cron_error():
    cron.check("0 0 29 2 *", "UTC")  # leap days only
    assert cron.next_time("0 0 29 2 *", datetime(2025, 1, 1, tzinfo=UTC)).year == 2028
    with pytest.raises(cron.CronError, match="does not fire after 9999"):
        cron.first_time("0 0 1 1 *", datetime(9999, 12, 31, 23, 59, 30, tzinfo=UTC))
