"""Dates and times on a public time axis: seconds since 1970-01-01 00:00:00 (no time zone).

A date column is a numeric attribute (:class:`~dpquery.data.domain.Numeric`) whose ``time``
names the format its values are written in (a ``strftime`` format): it is binned, measured
and decoded as a quantity on this axis, and released back as text in that format, at the
format's precision (:func:`format_unit`: a date gives dates, a timestamp to the minute gives
minutes).

Each cell is read alone, never a dtype inferred from the column. Undeclared, a cell is a date
when it is written in the ISO 8601 family :data:`ISO_FORMATS` (``YYYY-MM-DD``, then
optionally ``HH:MM`` or ``HH:MM:SS`` after a space or a ``T``) and names a real day and time
(``2019-02-30`` is not one). A cell written in one of the public
:data:`COMMON_FORMATS` (``M/D/YYYY``, ``D.M.YYYY``, ``YYYY/MM/DD``, ... with or without a time)
is read by :func:`common_cell` in each order that names a real day: ``03/04/2019`` in both,
which is never guessed (the learning takes an order only on evidence of it,
``dpquery.domain_learning.common_rule``). A column whose times are all midnight
(``9/30/1990 0:00:00``, ``2020-01-03T00:00:00``) is learned in one of
:data:`MIDNIGHT_FORMATS`: a date's, its time written as text. Any other format is read only
when declared (``types={"day": "date:%d %b %Y"}``), with pandas' exact-format parser; a
two-digit year (``%y``) with its century window, the first year of the hundred it reads
(``"date:%m/%d/%y@1950"``: ``7/1/62`` is 1962-07-01, ``3/9/05`` 2005-03-09;
:data:`WINDOW_MARK`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

ISO_FORMATS = (
    "%Y-%m-%d",
    "%Y-%m-%d %H:%M",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%dT%H:%M",
    "%Y-%m-%dT%H:%M:%S",
)
"""The public format rule of an undeclared date column, by class: a date, a time to the
minute or to the second after a space, the same after a ``T``."""

ZONES = ("Z", "+00:00")
"""A time's zone as written back (:data:`ZONE_FORMATS`): ``Z``, or a numeric offset
(``+01:00``, ``-0500``: read as the instant it names, written back in UTC, ``+00:00``)."""
ZONE_FORMATS = tuple(f + zone for zone in ZONES for f in ISO_FORMATS[1:])
"""The ISO 8601 family's times with a zone, by class after :data:`ISO_FORMATS`: for each of
:data:`ZONES`, a time to the minute or to the second after a space, the same after a ``T``
(``2015-01-03T05:50:00Z``: ``%Y-%m-%dT%H:%M:%SZ``). A cell with a zone is read as the
instant it names, on the time axis in UTC; one without, as written (no zone)."""
ISO_CLASSES = ISO_FORMATS + ZONE_FORMATS
"""Every format class of :func:`iso_cell`: :data:`ISO_FORMATS`, then :data:`ZONE_FORMATS`
(13 classes, one a cell)."""

_ISO = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:([ T])(\d{2}):(\d{2})(?::(\d{2}))?"
    r"(Z|[+-](\d{2}):?(\d{2}))?)?"
)
_EPOCH_ORDINAL = 719163  # datetime.date(1970, 1, 1).toordinal()
_DAYS_BEFORE_MONTH = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)

DAY = 86400
"""Seconds in a day: the unit of a date written without a time."""
_ISO_UNITS: dict[int, Literal["s", "m", "D"]] = {1: "s", 60: "m", DAY: "D"}  # numpy's units


def _leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def iso_cell(text: str) -> tuple[int, int] | None:
    """``(seconds since the epoch, class in ISO_CLASSES)`` of one cell written in the ISO
    family, None for any other text or a day or time that does not exist (``2019-02-30``,
    ``25:00``, an offset ``+24:00``). A time with a zone (``Z``, ``+01:00``, ``-0500``) is
    the instant it names, in UTC (``10:00+01:00`` is ``09:00Z``), its class one of
    :data:`ZONE_FORMATS`."""
    m = _ISO.fullmatch(text)
    if m is None:
        return None
    y, mo, d = int(m[1]), int(m[2]), int(m[3])
    if not 1 <= mo <= 12:
        return None
    days_in = (31, 29 if _leap(y) else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[mo - 1]
    if not 1 <= d <= days_in or y < 1:
        return None
    # the day's ordinal (proleptic Gregorian, as datetime.date.toordinal)
    p = y - 1
    ordinal = p * 365 + p // 4 - p // 100 + p // 400 + _DAYS_BEFORE_MONTH[mo - 1] + d
    if mo > 2 and _leap(y):
        ordinal += 1
    seconds = (ordinal - _EPOCH_ORDINAL) * DAY
    if m[4] is None:
        return seconds, 0
    h, mi, s = int(m[5]), int(m[6]), int(m[7] or 0)
    if h > 23 or mi > 59 or s > 59:
        return None
    cls = (1 if m[7] is None else 2) + (2 if m[4] == "T" else 0)
    seconds += h * 3600 + mi * 60 + s
    if m[8] is None:
        return seconds, cls
    if m[8] == "Z":
        return seconds, cls + len(ISO_FORMATS) - 1
    oh, om = int(m[9]), int(m[10])
    if oh > 23 or om > 59:
        return None
    offset = (oh * 3600 + om * 60) * (1 if m[8][0] == "+" else -1)
    return seconds - offset, cls + len(ISO_FORMATS) + len(ISO_FORMATS) - 2


def format_unit(fmt: str) -> int:
    """The precision of values written in ``fmt``, in seconds: 1 with seconds (``%S``), 60
    with minutes, 3600 with hours, a day otherwise (``%-H`` as ``%H``)."""
    fmt = fmt.replace("%-", "%")
    if "%S" in fmt or "%T" in fmt:
        return 1
    if "%M" in fmt:
        return 60
    if "%H" in fmt or "%I" in fmt:
        return 3600
    return DAY


def check_format(fmt: object) -> str:
    """``fmt`` if it is a ``strftime`` format naming a year (``%Y``) that writes a date back
    as it reads it; a ``ValueError`` naming it otherwise."""
    if (fmt in COMMON_FORMATS or fmt in CLOCK_FORMATS or fmt in ZONE_FORMATS
            or fmt in MIDNIGHT_FORMATS or fmt in ISO_ZERO_FORMATS):  # own rules  # fmt: skip
        return fmt  # (a time of day alone has no %Y: it is a day's seconds, 1970-01-01)
    if fmt in NAMED_SPELLINGS and fmt not in NAMED_FORMATS:  # this module's reader and writer
        return fmt  # (%y and the case flags: strftime's differ by platform)
    if not isinstance(fmt, str):
        raise ValueError(f"a date format must be a strftime format with %Y, got {fmt!r}")
    base, first = split_window(fmt)
    if first is None and "%y" in base.replace("%-", "%"):
        raise ValueError(
            f"the two-digit year (%y) of {fmt!r} needs its century window: the first year of "
            f"the hundred its years fall in, after {WINDOW_MARK} ({base}{WINDOW_MARK}1950 "
            "reads 50-99 as 1950-1999 and 00-49 as 2000-2049)"
        )
    if first is not None and ("%y" not in base.replace("%-", "%") or "%Y" in base):
        raise ValueError(
            f"a century window ({WINDOW_MARK}{first}) is for a two-digit year (%y) alone; "
            f"{fmt!r} has {'%Y' if '%Y' in base else 'no %y'}"
        )
    if first is None and "%Y" not in base:
        raise ValueError(
            f"a date format must be a strftime format with %Y (or %y and its century "
            f"window, %d/%m/%y{WINDOW_MARK}1950), got {fmt!r}"
        )
    probe = pd.Timestamp("2001-02-03 04:05:06")
    if first is not None:  # read as times_of reads it: the %- flag (no leading zero) as %
        base = base.replace("%-", "%")
    try:
        text = probe.strftime(base)
        back = pd.to_datetime(pd.Series([text]), format=base, errors="raise")
    except (ValueError, TypeError) as exc:
        raise ValueError(f"the date format {fmt!r} cannot be read back: {exc}") from None
    if back.isna().any():
        raise ValueError(f"the date format {fmt!r} cannot be read back")
    return fmt


def times_of(values: pd.Series, fmt: str) -> pd.Series:
    """``values`` on the time axis (seconds since the epoch, float), NaN for a missing value
    or one that is not a date written in ``fmt``: any format of the ISO family when ``fmt``
    is one of :data:`ISO_CLASSES`, :data:`ISO_MIDNIGHT_FORMATS` or :data:`ISO_ZERO_FORMATS`
    (a date written to the second in a column of dates reads, as does ``10:30:15`` in a
    column written ``%H:%M:00``; its day is released; a time with a zone, its
    instant), any date of a common format's order alike, otherwise exactly ``fmt`` (pandas'
    parser, cell by cell)."""
    base, first = split_window(fmt)
    if first is not None:  # read with Python's %y, then moved to the window's century
        read = times_of(values, base.replace("%-", "%")).to_numpy()  # strptime reads 7 as %m
        return pd.Series(_windowed(read, first), index=values.index, name=values.name)
    out = np.full(len(values), np.nan)
    present = values.notna().to_numpy()
    cells = values.to_numpy(dtype=object)
    if fmt in ISO_CLASSES or fmt in ISO_MIDNIGHT_FORMATS or fmt in ISO_ZERO_FORMATS:
        # each distinct text read once: a column of timestamps repeats few of them
        codes, texts = pd.factorize(pd.Series([str(v).strip() for v in cells[present]]))
        reads = [iso_cell(t) for t in texts]
        secs = np.array([np.nan if r is None else float(r[0]) for r in reads] + [np.nan])
        out[present] = secs[codes]
    elif (order := common_order(fmt)) is not None:  # the order's dates, whatever the layout
        codes, texts = pd.factorize(pd.Series([str(v).strip() for v in cells[present]]))
        out[present] = np.append(_common_seconds(list(texts), order), np.nan)[codes]
    elif fmt in NAMED_SPELLINGS and fmt not in NAMED_FORMATS:  # a spelling: its own reader
        codes, texts = pd.factorize(pd.Series([str(v).strip() for v in cells[present]]))
        out[present] = np.append(_spelled_seconds(list(texts), fmt), np.nan)[codes]
    elif present.any():
        texts = pd.Series([str(v).strip() for v in cells[present]], dtype=object)
        parsed = pd.to_datetime(texts, format=fmt, errors="coerce")
        ok = parsed.notna().to_numpy()
        secs = np.full(len(texts), np.nan)
        secs[ok] = parsed[ok].to_numpy(dtype="datetime64[s]").astype(np.int64).astype(float)
        if fmt in NAMED_FORMATS and not ok.all():  # Sept, which strptime does not read
            secs[~ok] = _spelled_seconds(list(texts[~ok]), fmt)
        out[present] = secs
    return pd.Series(out, index=values.index, name=values.name)


def written(seconds: np.ndarray, missing: np.ndarray, fmt: str) -> pd.Series:
    """Times on the axis written as text in ``fmt`` (truncated to its precision); None
    where ``missing``. A format with a century window (:data:`WINDOW_MARK`) writes a time
    outside its hundred years as the window's nearest end (two digits name no other)."""
    base, first = split_window(fmt)
    if first is not None:
        start, end = _window_bounds(first)
        inside = np.clip(np.asarray(seconds, dtype=np.float64), start, end)
        if _DIGIT_FIELDS.fullmatch(base):  # digits alone: this module's writer (%-m too)
            secs = np.where(missing, 0, np.floor(inside)).astype(np.int64)
            out = _written_common(secs.astype("datetime64[s]"), base)
            out[np.asarray(missing, dtype=bool)] = None
            return pd.Series(out, dtype=object)
        return written(inside, missing, base)
    secs = np.where(missing, 0, np.floor(np.asarray(seconds, dtype=np.float64))).astype(np.int64)
    stamps = secs.astype("datetime64[s]")
    if fmt in ISO_CLASSES:
        unit = _ISO_UNITS[format_unit(fmt)]
        text = np.datetime_as_string(stamps.astype(f"datetime64[{unit}]"), unit=unit)
        if "T" not in fmt:
            text = np.char.replace(text, "T", " ")
        zone = next((z for z in ZONES if fmt.endswith(z)), "")  # the axis is UTC's then
        out = np.char.add(text, zone).astype(object)
    elif fmt in ISO_ZERO_FORMATS:  # to the hour or the minute, then its zeros as text
        field = "%H" if fmt in ISO_HOUR_FORMATS else "%M"
        step: Literal["h", "m"] = "h" if field == "%H" else "m"
        text = np.datetime_as_string(stamps.astype(f"datetime64[{step}]"), unit=step)
        if "T" not in fmt:
            text = np.char.replace(text, "T", " ")
        out = np.char.add(text, fmt[fmt.index(field) + 2 :]).astype(object)
    elif fmt in ISO_MIDNIGHT_FORMATS:  # the day, then its midnight as text
        text = np.datetime_as_string(stamps.astype("datetime64[D]"), unit="D")
        out = np.char.add(text, fmt[len(ISO_FORMATS[0]) :]).astype(object)
    elif fmt in COMMON_FORMATS or fmt in CLOCK_FORMATS or fmt in COMMON_MIDNIGHT_FORMATS:
        out = _written_common(stamps, fmt)
    elif fmt in NAMED_SPELLINGS and fmt not in NAMED_FORMATS:
        out = _written_spelled(stamps, fmt)
    else:
        out = pd.DatetimeIndex(stamps).strftime(fmt).to_numpy(dtype=object)
    out[np.asarray(missing, dtype=bool)] = None
    return pd.Series(out, dtype=object)


def iso_format(
    precision: int, with_t: bool, zone: str = "", midnight: bool = False, whole: int = 0
) -> str:
    """The ISO format of precision 0 (a day), 1 (a minute) or 2 (a second), its time after
    a ``T`` (``with_t``) or a space, and ``zone`` (one of :data:`ZONES`, a time's only)
    after it; with ``midnight`` (a time without a zone), that time always midnight
    (:data:`ISO_MIDNIGHT_FORMATS`); with ``whole`` (a time without a zone), its values
    whole hours (1: :data:`ISO_HOUR_FORMATS`) or, written with seconds, whole minutes (2:
    :data:`ISO_MINUTE_FORMATS`)."""
    k = precision + (2 if with_t and precision else 0)
    if midnight and precision and not zone:
        return ISO_MIDNIGHT_FORMATS[k - 1]
    if whole == 1 and precision and not zone:
        return ISO_HOUR_FORMATS[k - 1]
    if whole == 2 and precision == 2 and not zone:
        return ISO_MINUTE_FORMATS[k // 2 - 1]
    fmt = ISO_FORMATS[k]
    return fmt + zone if precision else fmt


# --- common formats other than ISO 8601: a public list, read by order -----------------------
ORDERS = ("mdy", "dmy", "ymd")
"""The orders of the common formats: month first (``10/3/2016``), day first (``3.10.2016``),
year first (``2016/10/03``)."""
SEPARATORS = ("/", ".", "-")
"""The separators of a common format's date (a year-first date with ``-`` is ISO 8601's, or
not a common format when written without its zeros)."""
TIME_FORMS = (
    "",
    " %H:00",
    " %H:%M",
    " %H:00:00",
    " %H:%M:00",
    " %H:%M:%S",
)
"""A common format's time, by class: none (a date), ``H:MM`` to the hour (every minute 0)
or to the minute, ``H:MM:SS`` to the hour, the minute or the second. A ``:00`` written as it
is: the precision (:func:`format_unit`) is the finest field read."""
MIDNIGHT_FORMS = (" 0:00", " 0:00:00")
"""A common format's time that is always midnight, by class after :data:`TIME_FORMS`
(``common_format``'s ``time`` 6 and 7): ``H:MM`` and ``H:MM:SS`` written as text, ``0:00``
and ``0:00:00`` (``00:00``, ``00:00:00`` with the leading zeros). A format of one is a date's
(:func:`format_unit`: a day): its values are days, each written at midnight."""
ORDER_CLASSES = ("month first only", "day first only", "either order", "year first")
"""The disjoint classes of a cell in a common format's date (:func:`common_cell`): month
first only (``10/13/2016``: 13 is no month), day first only (``13/10/2016``), either order
(both of the first two fields at most 12: ``10/3/2016``) and year first."""
CLOCK_CLASSES = ("time of day",)
"""The class of a cell written as a time of day alone (``00:20``, ``7:05``, ``23:50:10``):
disjoint from :data:`ORDER_CLASSES` (no date is read in it), from numbers and from ISO dates.
A :class:`CommonCell` of it has ``order_class`` ``len(ORDER_CLASSES)`` and its seconds since
midnight under the order ``"clock"``."""

_COMMON = re.compile(r"(\d{1,4})([/.-])(\d{1,2})\2(\d{1,4})(?: (\d{1,2}):(\d{2})(?::(\d{2}))?)?")
_CLOCK = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?")
_DATE_PARTS: dict[str, tuple[str, ...]] = {
    "mdy": ("m", "d", "Y"),
    "dmy": ("d", "m", "Y"),
    "ymd": ("Y", "m", "d"),
    "clock": (),  # a time of day: no date part
}


def common_format(order: str, sep: str, time: int, padded: bool) -> str:
    """The ``strftime``-like format of a common date: ``order`` (:data:`ORDERS`), ``sep``
    (:data:`SEPARATORS`), ``time`` (a class of :data:`TIME_FORMS`, or 6 and 7 for
    :data:`MIDNIGHT_FORMS`, a date order's only), the month, day and hour
    written with their leading zeros (``padded``) or without (``%-m``, glibc's flag:
    ``10/3/2016 0:00``). The order ``"clock"`` has no date: its format is the time alone
    (``%-H:%M``), ``sep`` unused."""
    flag = "%" if padded else "%-"
    date = sep.join(("%Y" if p == "Y" else flag + p) for p in _DATE_PARTS[order])
    if time >= len(TIME_FORMS):  # always midnight: the time written as text
        clock = MIDNIGHT_FORMS[time - len(TIME_FORMS)]
        return date + (clock.replace(" 0:", " 00:") if padded else clock)
    return (date + TIME_FORMS[time].replace("%H", flag + "H")).strip()


COMMON_FORMATS = tuple(
    common_format(order, sep, time, padded)
    for order in ORDERS
    for sep in SEPARATORS
    if not (order == "ymd" and sep == "-")
    for padded in (False, True)
    for time in range(len(TIME_FORMS))
)
"""The public list of common formats an undeclared column is read in (besides
:data:`ISO_FORMATS`): 8 dates (``M/D/YYYY``, ``D/M/YYYY`` with ``/``, ``.`` or ``-``;
``YYYY/MM/DD``, ``YYYY.MM.DD``), with or without leading zeros, each with a time of
:data:`TIME_FORMS`: 96 formats."""
CLOCK_FORMATS = tuple(
    common_format("clock", "", time, padded)
    for padded in (False, True)
    for time in range(1, len(TIME_FORMS))
)
"""The common formats' family with no date part: a time of day alone, each time of
:data:`TIME_FORMS` but none, the hour with or without its leading zero (``%-H:%M`` reads
``7:05``, ``%H:%M`` ``07:05``, ``%H:%M:%S`` ``07:05:10``): 10 formats, read as seconds since
midnight, ``[0, 86400)``."""
MIDNIGHT = len(TIME_FORMS)
"""``common_format``'s ``time`` of the first of :data:`MIDNIGHT_FORMS` (``H:MM`` always
``0:00``); ``MIDNIGHT + 1``: ``H:MM:SS`` always ``0:00:00``."""
COMMON_MIDNIGHT_FORMATS = tuple(
    common_format(order, sep, MIDNIGHT + j, padded)
    for order in ORDERS
    for sep in SEPARATORS
    if not (order == "ymd" and sep == "-")
    for padded in (False, True)
    for j in range(len(MIDNIGHT_FORMS))
)
"""The common formats' dates with a time that is always midnight (``M/D/YYYY 0:00:00``,
``DD.MM.YYYY 00:00``): each of the 8 dates of :data:`COMMON_FORMATS`, with or without
leading zeros, by :data:`MIDNIGHT_FORMS`: 32 formats, read as any date of their order (a
time that is not midnight reads as written) and written at midnight."""
ISO_MIDNIGHT_FORMATS = ("%Y-%m-%d 00:00", "%Y-%m-%d 00:00:00", "%Y-%m-%dT00:00",
                        "%Y-%m-%dT00:00:00")  # fmt: skip
"""The ISO 8601 family's times that are always midnight, by class after the date of
:data:`ISO_FORMATS` (``ISO_MIDNIGHT_FORMATS[k - 1]`` is ``ISO_FORMATS[k]`` at midnight): a
date's format (a day), read as any ISO cell and written with ``00:00`` or ``00:00:00`` after
a space or a ``T``."""
MIDNIGHT_FORMATS = COMMON_MIDNIGHT_FORMATS + ISO_MIDNIGHT_FORMATS
"""Every format of a date written with a time that is always midnight (36)."""
ISO_HOUR_FORMATS = ("%Y-%m-%d %H:00", "%Y-%m-%d %H:00:00", "%Y-%m-%dT%H:00",
                    "%Y-%m-%dT%H:00:00")  # fmt: skip
"""The ISO 8601 family's times that are always whole hours, by class after the date of
:data:`ISO_FORMATS` (``ISO_HOUR_FORMATS[k - 1]`` is ``ISO_FORMATS[k]`` with its minutes and
seconds ``00``): to the hour (:func:`format_unit`), read as any ISO cell (``10:30:15``
reads as written) and written with ``:00`` or ``:00:00`` after the hour."""
ISO_MINUTE_FORMATS = ("%Y-%m-%d %H:%M:00", "%Y-%m-%dT%H:%M:00")
"""The ISO 8601 family's times written with seconds that are always 0 (pandas writes a
datetime to the minute ``2020-01-03 10:30:00``), after a space or a ``T``: to the minute,
read as any ISO cell and written with ``:00`` after the minute."""
ISO_ZERO_FORMATS = ISO_HOUR_FORMATS + ISO_MINUTE_FORMATS
"""Every ISO format whose time ends in fields written as zeros (6)."""
_COMMON_SPEC = (
    {
        common_format(o, s, t, p): (o, s, t, p)
        for o in ORDERS
        for s in SEPARATORS
        for t in range(len(TIME_FORMS))
        for p in (False, True)
    }
    | {
        common_format("clock", "", t, p): ("clock", "", t, p)
        for t in range(1, len(TIME_FORMS))
        for p in (False, True)
    }
    | {
        common_format(o, s, MIDNIGHT + j, p): (o, s, MIDNIGHT + j, p)
        for o in ORDERS
        for s in SEPARATORS
        for j in range(len(MIDNIGHT_FORMS))
        for p in (False, True)
    }
)


@dataclass(frozen=True)
class CommonCell:
    """One cell in a common format (:func:`common_cell`): its order class (an index of
    :data:`ORDER_CLASSES`), its seconds read month first, day first (None where that order
    names no day: ``13/10/2016`` month first) or year first, its separator, time class (an
    index of :data:`TIME_FORMS`) and padding (0: no field below 10, 1: one written with one
    digit, 2: with a leading zero)."""

    order_class: int
    seconds: dict[str, int]
    sep: int
    time: int
    pad: int


def _day(y: int, mo: int, d: int) -> int | None:
    cell = iso_cell(f"{y:04d}-{mo:02d}-{d:02d}") if 1 <= mo <= 12 and 1 <= d <= 31 else None
    return None if cell is None else cell[0]


DIGITS_FORMAT = "%Y%m%d"
"""Dates written as eight digits, year, month and day (``20190314``): a format no text rule
reads (the cells are numbers), which the learner tells from a number by a count of its own
(:func:`digits_cell`, ``dpquery.domain_learning``'s written forms)."""
DIGITS_YEARS = (1800, 2200)
"""The public years of :func:`digits_cell`: ``[1800, 2200)``, the learner's time axis."""

WINDOW_MARK = "@"
"""What joins a format with a two-digit year (``%y``) to its century window, the first year
of the hundred its years fall in: ``%m/%d/%y@1950`` reads ``7/1/62`` as 1962-07-01 and
``3/9/05`` as 2005-03-09, and writes 1962 back as ``62``. A public input, as the format is
(Python's own ``%y`` reads 00-68 as 2000-2068: a window of 1969, fixed)."""
WINDOW_YEARS = (DIGITS_YEARS[0], DIGITS_YEARS[1] - 100)
"""The first years a century window may start at, both included: its hundred years inside
the learner's time axis :data:`DIGITS_YEARS`."""
_WINDOW = re.compile(r"(.*)" + WINDOW_MARK + r"([^%]*)", re.DOTALL)
_DIGIT_FIELDS = re.compile(r"(?:[^%]|%-?[YmdHMSy])*")  # a format of digits' fields alone


def split_window(fmt: str) -> tuple[str, int | None]:
    """``fmt``'s ``strftime`` format and its century window's first year (None without one:
    no :data:`WINDOW_MARK` after its last directive); a ``ValueError`` naming a window that
    is not a four-digit year in :data:`WINDOW_YEARS`."""
    m = _WINDOW.fullmatch(fmt)
    if m is None or "%" not in m[1]:
        return fmt, None
    lo, hi = WINDOW_YEARS
    if not (re.fullmatch(r"\d{4}", m[2]) and lo <= int(m[2]) <= hi):
        raise ValueError(
            f"the century window of {fmt!r} must be the four-digit first year of its hundred, "
            f"{lo} to {hi}, after {WINDOW_MARK} (e.g. %m/%d/%y{WINDOW_MARK}1950), got "
            f"{m[2]!r}"
        )
    return m[1], int(m[2])


def _windowed(secs: np.ndarray, first: int) -> np.ndarray:
    """Times read with Python's ``%y`` (00-68 as 2000-2068) moved to the century window
    starting at ``first``: the same two digits, month, day and time of day; NaN for a day
    the window's year does not have (29 February 1900)."""
    out = np.full(len(secs), np.nan)
    ok = ~np.isnan(secs)
    s = secs[ok].astype(np.int64)
    days = (s // DAY).astype("datetime64[D]")
    months = days.astype("datetime64[M]")
    year = months.astype(np.int64) // 12 + 1970
    shift = (first + (year - first) % 100 - year) * 12
    moved = months + shift.astype("timedelta64[M]")
    day = moved + (days - months)
    valid = day.astype("datetime64[M]") == moved  # not a 29 February moved to a common year
    out[ok] = np.where(valid, day.astype(np.int64) * DAY + s % DAY, np.nan)
    return out


def _window_bounds(first: int) -> tuple[int, int]:
    """The first and the last second of the century window starting at ``first``."""
    start = _day(first, 1, 1)
    end = _day(first + 100, 1, 1)
    assert start is not None and end is not None
    return start, end - 1


def digits_cell(text: str) -> int | None:
    """The seconds since the epoch of ``text`` written as :data:`DIGITS_FORMAT`: eight digits
    and nothing else, a day that exists, a year in :data:`DIGITS_YEARS`; None for any other
    text (``20191399``, ``+20190314``, ``2019031``). A public rule on one cell."""
    if len(text) != 8 or not text.isdigit() or not text.isascii():
        return None
    y, mo, d = int(text[:4]), int(text[4:6]), int(text[6:])
    if not DIGITS_YEARS[0] <= y < DIGITS_YEARS[1]:
        return None
    return _day(y, mo, d)


NAMED_FORMATS = ("%d %b %Y", "%d %B %Y", "%b %d, %Y", "%B %d, %Y")
"""The public formats of a date written with its month's English name, by class
(:func:`named_cell`): the day first (``01 Nov 2020``, ``1 November 2020``) or the month
first (``Nov 1, 2020``, ``November 1, 2020``), the month abbreviated (``%b``) or in full
(``%B``). Read with or without the day's leading zero; written back with it (``strftime``'s
``%d``), in English month names."""
MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December")  # fmt: skip
NAMED_STYLES = ("abbreviated", "full", "either")
"""The styles of a month's name in :func:`named_cell`'s classes: ``Nov``, ``November``, and
``May``, which is either."""
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTH_WORDS = (
    {m: (i + 1, 1) for i, m in enumerate(MONTH_NAMES)}
    | {m[:3]: (i + 1, 0) for i, m in enumerate(MONTH_NAMES)}
    | {"May": (5, 3), "Sept": (9, 0)}
)  # a month's word (title case): its number and style, abbreviated (0), in full (1), or
# either (3: "May"); "Sept" is September abbreviated
_WEEKDAY_WORDS = {w: (i, 1) for i, w in enumerate(WEEKDAY_NAMES)} | {
    w[:3]: (i, 0) for i, w in enumerate(WEEKDAY_NAMES)
}  # a weekday's word (title case): Monday 0, abbreviated (0) or in full (1)

SPELLING_LAYOUTS = ("%d {m} %Y", "{m} %d, %Y", "%d-{m}-%Y", "%d-{m}-%y")
"""The layouts of a date written with its month's name (:func:`spelled_cell`): the day
first (``3 Jan 2020``), the month first (``Jan 3, 2020``), and hyphens with a four- or
two-digit year (``03-Jan-2020``, ``3-JAN-20``: SAS's and Oracle's ``DD-MON-YY``; a two-digit
year ``00`` to ``68`` is 2000 to 2068, ``69`` to ``99`` 1969 to 1999, as POSIX ``strptime``
reads ``%y``). The first two may follow a weekday (``Mon, 03 Jan 2020``, ``Monday, January
3, 2020``: e-mail's RFC 2822 dates without their time); the hyphens' month is abbreviated."""
SPELLING_CASES = ("", "^", "~")
"""The case of a spelling's names, as a flag of its tokens: title case (``%b``: ``Jan``),
upper case (``%^b``: ``JAN``, glibc's flag) and lower case (``%~b``: ``jan``, a flag of
this module's own writer)."""
SPELLING_WEEKDAYS = ("", "%{c}a, ", "%{c}A, ")
"""A spelling's weekday: none, abbreviated (``Mon, ``) or in full (``Monday, ``), in the
month's case; released as the weekday of the released date."""
SPELLING_MONTHS = ("%{c}b", "%{c}B", "%{c}b.")
"""A spelling's month: abbreviated (``Jan``, ``Sep``), in full (``January``), or as the AP
style writes it, abbreviated with a dot where the name is long (``Jan.``, ``Feb.``, ``Aug.``,
``Sept.``, ``Oct.``, ``Nov.``, ``Dec.``) and in full otherwise (``March`` to ``July``).
``Sept`` reads as September abbreviated (written back ``Sep``); any month abbreviated with a
dot (``Mar.``, ``Sep.``) reads in the dotted class (written back in AP's spelling)."""
AP_MONTHS = ("Jan.", "Feb.", "March", "April", "May", "June", "July", "Aug.", "Sept.", "Oct.",
             "Nov.", "Dec.")  # fmt: skip
"""The month names of the dotted spelling (AP style), January to December."""


def _spellings() -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Each spelling's format and the cells (:func:`spelled_cell`) its count sums."""
    out = []
    for layout, pattern in enumerate(SPELLING_LAYOUTS):
        if layout < 2:
            for w, weekday in enumerate(SPELLING_WEEKDAYS):
                for c, case in enumerate(SPELLING_CASES):
                    for m, month in enumerate(SPELLING_MONTHS):
                        base = 36 * layout + 12 * w + 4 * c
                        fmt = weekday.format(c=case) + pattern.format(m=month.format(c=case))
                        # the dotted month is AP's: March to July in full, read as full
                        cells = (base + m, base + 3) + ((base + 1,) if m == 2 else ())
                        out.append((fmt, cells))
        else:
            for c, case in enumerate(SPELLING_CASES):
                fmt = pattern.format(m=SPELLING_MONTHS[0].format(c=case))
                out.append((fmt, (72 + 3 * (layout - 2) + c,)))
    return tuple(out)


_SPELLINGS = _spellings()
NAMED_SPELLINGS = tuple(f for f, _ in _SPELLINGS)
"""Every public format of a date written with its month's name (60): by layout
(:data:`SPELLING_LAYOUTS`), weekday (:data:`SPELLING_WEEKDAYS`), case
(:data:`SPELLING_CASES`) and month (:data:`SPELLING_MONTHS`), the hyphens' without a weekday
and with the month abbreviated. :data:`NAMED_FORMATS` are four of them (title case, no
weekday, the day or the month first, ``%b`` or ``%B``)."""
SPELLING_CELLS = 78
"""The classes of :func:`spelled_cell`: the day first and the month first (36 each: three
weekdays by three cases by four month styles, abbreviated, in full, with a dot and
``May``, which is each), then the hyphens' (3 each: by case)."""
SPELLING_FORMAT_CELLS = {f: cells for f, cells in _SPELLINGS}
"""Each spelling's cells: its month style's and ``May``'s, the dotted style's the full
names' too (AP writes ``March`` to ``July`` in full); the hyphens' its one."""
NAMED_CLASSES = tuple(36 * layout + style for layout in (0, 1) for style in (0, 1, 3))
"""The cells of :data:`NAMED_FORMATS`' classes (:func:`named_cell`), in its order."""
_SPELLED = re.compile(
    r"(?:([A-Za-z]+), )?(?:(\d{1,2}) ([A-Za-z]+)(\.?) (\d{4})|([A-Za-z]+)(\.?) (\d{1,2}), "
    r"(\d{4})|(\d{1,2})-([A-Za-z]+)-(\d{4}|\d{2}))"
)


def _case(word: str) -> int | None:
    """The index in :data:`SPELLING_CASES` of ``word``'s case, None for mixed case."""
    if word.isupper():
        return 1
    if word.islower():
        return 2
    return 0 if word[:1].isupper() and word[1:].islower() else None


def spelled_cell(text: str) -> tuple[int, int] | None:
    """The seconds since the epoch and the class (of :data:`SPELLING_CELLS`) of ``text``
    written as a date with its month's English name in one of :data:`NAMED_SPELLINGS`, a day
    that exists in :data:`DIGITS_YEARS` (its weekday, when written, that day's and in the
    month's case); None for any other text (``31 Nov 2020``, ``Tue, 01 Nov 2020``,
    ``nOv 1, 2020``, ``01-November-2020``). The class: the day first or the month first,
    ``36 layout + 12 weekday + 4 case + style`` (style 0 abbreviated, 1 in full, 2 with a
    dot, 3 ``May``); the hyphens', ``72 + 3 (0 for a four-digit year, 1 for two) + case``.
    A public rule on one cell."""
    m = _SPELLED.fullmatch(text)
    if m is None:
        return None
    if m[2] is not None:
        layout, d, word, dot, y = 0, m[2], m[3], m[4], m[5]
    elif m[6] is not None:
        layout, d, word, dot, y = 1, m[8], m[6], m[7], m[9]
    else:
        d, word, dot, y = m[10], m[11], "", m[12]
        layout = 2 if len(y) == 4 else 3
    case = _case(word)
    month = _MONTH_WORDS.get(word.title())
    if case is None or month is None:
        return None
    style = month[1]
    if dot:  # an abbreviation's dot: not after a whole name
        if style != 0:
            return None
        style = 2
    year = int(y) if len(y) == 4 else int(y) + (2000 if int(y) < 69 else 1900)
    if not DIGITS_YEARS[0] <= year < DIGITS_YEARS[1]:
        return None
    day = _day(year, month[0], int(d))
    if day is None:
        return None
    if layout >= 2:
        if style == 1 or m[1] is not None:  # the hyphens': abbreviated, no weekday
            return None
        return day, 72 + 3 * (layout - 2) + case
    weekday = 0
    if m[1] is not None:
        named = _WEEKDAY_WORDS.get(m[1].title())
        if named is None or _case(m[1]) != case or named[0] != (day // DAY + 3) % 7:
            return None  # 1970-01-01 was a Thursday (3)
        weekday = 1 + named[1]
    return day, 36 * layout + 12 * weekday + 4 * case + style


def named_cell(text: str) -> tuple[int, int] | None:
    """The seconds since the epoch and the class of ``text`` written as a date with its
    month's English name in title case, without a weekday, in one of :data:`NAMED_FORMATS`'
    layouts (:func:`spelled_cell`'s cells :data:`NAMED_CLASSES`; ``Sept`` abbreviated), a
    day that exists in :data:`DIGITS_YEARS`; None for any other text (``31 Nov 2020``,
    ``Nov 2020``, ``1 nov 2020``, ``1 Jan. 2020``). The class is ``3 layout + style``: the
    layout 0 for the day first, 1 for the month first, the style an index of
    :data:`NAMED_STYLES` (``01 Nov 2020``: 0; ``November 1, 2020``: 4; ``May 1, 2020``: 5).
    The format of ``layout`` and style ``s`` (0 or 1) is ``NAMED_FORMATS[2 layout + s]``. A
    public rule on one cell."""
    cell = spelled_cell(text)
    if cell is None or cell[1] not in NAMED_CLASSES:
        return None
    return cell[0], NAMED_CLASSES.index(cell[1])


def _spelled_seconds(texts: list[str], fmt: str) -> np.ndarray:
    """Each text's seconds when it is a date written in the spelling ``fmt`` (its cells),
    NaN otherwise."""
    cells = set(SPELLING_FORMAT_CELLS[fmt])
    out = np.full(len(texts), np.nan)
    for i, t in enumerate(texts):
        cell = spelled_cell(t)
        if cell is not None and cell[1] in cells:
            out[i] = cell[0]
    return out


def _written_spelled(stamps: np.ndarray, fmt: str) -> np.ndarray:
    """``stamps`` (datetime64[s]) written in the spelling ``fmt`` (this module's writer:
    English names in any locale, the case flags, the dotted month, the weekday of each
    day)."""
    days = stamps.astype("datetime64[D]")
    months = days.astype("datetime64[M]")
    year = days.astype("datetime64[Y]").astype(np.int64) + 1970
    month = months.astype(np.int64) % 12
    day = (days - months).astype(np.int64) + 1
    weekday = (days.astype(np.int64) + 3) % 7
    cased: dict[str, Callable[[str], str]] = {"": str.title, "^": str.upper, "~": str.lower}
    abbreviated = [m[:3] for m in MONTH_NAMES]
    tables = {"b": abbreviated, "B": list(MONTH_NAMES), "a": [w[:3] for w in WEEKDAY_NAMES],
              "A": list(WEEKDAY_NAMES)}  # fmt: skip
    out = np.full(stamps.shape, "", dtype=object)
    for part in re.split(r"(%[\^~]?[bBaA]\.?|%[dYy])", fmt):
        if not part.startswith("%"):
            out = out + part
        elif part[-1] in "dYy":
            values = {"d": day, "Y": year, "y": year % 100}[part[-1]]
            width = 4 if part[-1] == "Y" else 2
            out = out + np.array([str(v).zfill(width) for v in values.tolist()], dtype=object)
        else:
            dot = part.endswith(".")
            letter = part[-2] if dot else part[-1]
            names = list(AP_MONTHS) if dot else tables[letter]
            which = weekday if letter in "aA" else month
            case = cased[part[1] if part[1] in "^~" else ""]
            out = out + np.array([case(names[i]) for i in which.tolist()], dtype=object)
    return out


def digits_format(fmt: str) -> bool:
    """Whether ``fmt`` writes dates as digits alone (:data:`DIGITS_FORMAT`): a column of such
    dates read as integers (pandas' dtype) is read by its text, not as seconds."""
    return fmt == DIGITS_FORMAT


def common_cell(text: str) -> CommonCell | None:
    """The cell ``text`` in a common format (:data:`COMMON_FORMATS`, with any separator,
    padding and time), None for any other text, a date that no order reads or a time that
    does not exist; a time of day alone (:data:`CLOCK_CLASSES`) by :func:`_clock_cell`.
    Public rules on one cell."""
    m = _COMMON.fullmatch(text)
    if m is None:
        return _clock_cell(text)
    a, sep, b, c = m[1], m[2], m[3], m[4]
    seconds: dict[str, int] = {}
    if len(a) == 4 and len(c) <= 2 and sep != "-":
        day = _day(int(a), int(b), int(c))
        if day is not None:
            seconds["ymd"] = day
        fields: tuple[str, ...] = (b, c)
        order_class = 3
    elif len(a) <= 2 and len(c) == 4:
        for order, (mo, d) in (("mdy", (a, b)), ("dmy", (b, a))):
            day = _day(int(c), int(mo), int(d))
            if day is not None:
                seconds[order] = day
        fields = (a, b)
        order_class = 2 if len(seconds) == 2 else (0 if "mdy" in seconds else 1)
    else:
        return None
    if not seconds:
        return None
    time, clock = 0, 0
    if m[5] is not None:
        read = _clock_of(m[5], m[6], m[7])
        if read is None:
            return None
        clock, time = read
        fields = (*fields, m[5])
    short = [f for f in fields if int(f) < 10]
    pad = 0 if not short else (1 if any(len(f) == 1 for f in short) else 2)
    seconds = {k: v + clock for k, v in seconds.items()}
    return CommonCell(order_class, seconds, SEPARATORS.index(sep), time, pad)


def _clock_cell(text: str) -> CommonCell | None:
    """The cell ``text`` as a time of day alone (``H:MM`` or ``H:MM:SS``, 24 hours), None
    for any other text or a time that does not exist (``24:00``, ``7:60``)."""
    m = _CLOCK.fullmatch(text)
    read = None if m is None else _clock_of(m[1], m[2], m[3])
    if m is None or read is None:
        return None
    clock, time = read
    pad = 0 if int(m[1]) >= 10 else (1 if len(m[1]) == 1 else 2)
    return CommonCell(len(ORDER_CLASSES), {"clock": clock}, 0, time, pad)


def _clock_of(hours: str, minutes: str, seconds: str | None) -> tuple[int, int] | None:
    """A written time's seconds since midnight and its class of :data:`TIME_FORMS` (to the
    hour, the minute or the second, with or without seconds written); None for a time that
    does not exist (``24:00``, ``7:60``)."""
    h, mi, s = int(hours), int(minutes), int(seconds or 0)
    if h > 23 or mi > 59 or s > 59:
        return None
    if seconds is None:
        time = 1 if mi == 0 else 2
    else:
        time = 3 if mi == s == 0 else (4 if s == 0 else 5)
    return h * 3600 + mi * 60 + s, time


def common_order(fmt: str) -> str | None:
    """The order of ``fmt`` (``"clock"`` for a time of day) when it is one of
    :data:`COMMON_FORMATS`, :data:`CLOCK_FORMATS` or :data:`COMMON_MIDNIGHT_FORMATS`, else
    None."""
    spec = _COMMON_SPEC.get(fmt)
    known = fmt in COMMON_FORMATS or fmt in CLOCK_FORMATS or fmt in COMMON_MIDNIGHT_FORMATS
    return None if spec is None or not known else spec[0]


def _common_seconds(texts: list[str], order: str) -> np.ndarray:
    """Each text's seconds read in ``order`` (any separator, padding and time), NaN for a
    text that is not such a date."""
    out = np.full(len(texts), np.nan)
    for i, t in enumerate(texts):
        cell = common_cell(t)
        if cell is not None and order in cell.seconds:
            out[i] = cell.seconds[order]
    return out


def _written_common(stamps: np.ndarray, fmt: str) -> np.ndarray:
    """``stamps`` (datetime64[s]) written in the common format ``fmt`` (its own writer: the
    ``%-`` flag is not every platform's ``strftime``), or in a format of digits' fields with
    a two-digit year (``%y``, a century window's)."""
    days = stamps.astype("datetime64[D]")
    months = days.astype("datetime64[M]")
    fields = {
        "Y": days.astype("datetime64[Y]").astype(np.int64) + 1970,
        "m": months.astype(np.int64) % 12 + 1,
        "d": (days - months).astype(np.int64) + 1,
    }
    fields["y"] = fields["Y"] % 100  # a century window's two digits
    clock = (stamps - days).astype(np.int64)
    fields |= {"H": clock // 3600, "M": clock // 60 % 60, "S": clock % 60}
    parts = re.split(r"(%-?[YmdHMSy])", fmt)
    out = np.full(stamps.shape, "", dtype=object)
    for part in parts:
        if not part.startswith("%"):
            out = out + part
            continue
        values = fields[part[-1]]
        width = 4 if part[-1] == "Y" else (1 if part.startswith("%-") else 2)
        out = out + np.array([str(v).zfill(width) for v in values.tolist()], dtype=object)
    return out
