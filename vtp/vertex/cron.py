"""Vertex schedule crons: `[TZ=Zone |CRON_TZ=Zone ]m h dom mon dow`, and their fire times.

Vertex takes standard five-field unix cron; a time zone from the IANA database may prefix it
(`TZ=Europe/Paris 0 3 * * *`), otherwise the cron is in UTC. Fire times follow the zone's wall
clock (03:00 Paris stays 03:00 across daylight-saving changes) and are returned in UTC.
"""

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_PREFIXES = ("TZ=", "CRON_TZ=")
_REFERENCE = datetime(2000, 1, 1, tzinfo=UTC)
"""Where `check` looks for a first fire time: day-of-month, month and day-of-week repeat within
the decades croniter searches, so a cron with none after this date has none at all."""


class CronError(ValueError):
    """A cron or time zone Vertex would refuse; the message says what is wrong."""


def split(cron: str) -> tuple[str, str]:
    """(time zone, five-field expression) of a Vertex cron; the zone defaults to UTC."""
    text = cron.strip()
    for prefix in _PREFIXES:
        if text.startswith(prefix):
            zone, _, expression = text[len(prefix) :].partition(" ")
            return zone, expression.strip()
    return "UTC", text


def check(expression: str, zone: str) -> None:
    """Raise CronError unless `expression` is five-field unix cron and `zone` an IANA zone."""
    zone_info(zone)
    if expression.startswith(_PREFIXES):
        raise CronError("give the time zone separately, not as a TZ= prefix")
    fields = expression.split()
    if len(fields) != 5:
        raise CronError(
            f"{expression!r} has {len(fields)} fields; unix cron has 5: "
            "minute hour day-of-month month day-of-week (e.g. '0 3 * * *')"
        )
    from croniter import CroniterError, croniter  # here: every local service imports this module

    if not croniter.is_valid(expression):
        raise CronError(f"{expression!r} is not a valid cron expression (e.g. '*/15 * * * *')")
    try:
        croniter(expression, _REFERENCE).get_next(datetime)
    except CroniterError:  # croniter's bad-date error: no day matches (30 February)
        raise CronError(
            f"{expression!r} never fires: no date has that day of the month in that month"
        ) from None


def zone_info(zone: str) -> ZoneInfo:
    """The IANA time zone `zone`; CronError when the database has no such zone."""
    try:
        return ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise CronError(
            f"{zone!r} is not an IANA time zone (e.g. UTC, Europe/Paris, America/New_York)"
        ) from None


def parse(cron: str) -> tuple[str, str]:
    """`split` and `check` a Vertex cron; return (zone, expression)."""
    zone, expression = split(cron)
    check(expression, zone)
    return zone, expression


def next_time(cron: str, after: datetime) -> datetime:
    """The first fire time of `cron` strictly after `after`, in UTC; CronError when there is
    none before the end of the calendar (year 9999)."""
    from croniter import CroniterError, croniter

    zone, expression = split(cron)
    try:
        start = after.astimezone(zone_info(zone))
        return croniter(expression, start).get_next(datetime).astimezone(UTC)
    except (CroniterError, OverflowError):
        raise CronError(f"{cron!r} does not fire after {after.isoformat()}") from None


def first_time(cron: str, start: datetime) -> datetime:
    """The first fire time at or after `start` (a run may fire exactly at its start time)."""
    from croniter import croniter

    zone, expression = split(cron)
    try:
        local = start.astimezone(zone_info(zone))
    except OverflowError:
        raise CronError(f"{cron!r} does not fire after {start.isoformat()}") from None
    if croniter.match(expression, local) and local.second == 0 and local.microsecond == 0:
        return start.astimezone(UTC)
    return next_time(cron, start)
