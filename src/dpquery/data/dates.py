"""Dates and times on a public time axis: seconds since 1970-01-01 00:00:00 (no time zone).

A date column is a numeric attribute (:class:`~dpquery.data.domain.Numeric`) whose ``time``
names the format its values are written in (a ``strftime`` format): it is binned, measured
and decoded as a quantity on this axis, and released back as text in that format, at the
format's precision (:func:`format_unit`: a date gives dates, a timestamp to the minute gives
minutes).

Each cell is read alone, never a dtype inferred from the column. Undeclared, a cell is a date
when it is written in the ISO 8601 family :data:`ISO_FORMATS` (``YYYY-MM-DD``, then
optionally ``HH:MM`` or ``HH:MM:SS`` after a space or a ``T``) and names a real day and time
(``2019-02-30`` is not one). Other orders (``MM/DD/YYYY``, ``DD.MM.YYYY``) are ambiguous
(``03/04/2019``) and are never guessed: they are read only under a format the user declares
(``types={"day": "date:%d.%m.%Y"}``), with pandas' exact-format parser.
"""

from __future__ import annotations

import re
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

_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:([ T])(\d{2}):(\d{2})(?::(\d{2}))?)?")
_EPOCH_ORDINAL = 719163  # datetime.date(1970, 1, 1).toordinal()
_DAYS_BEFORE_MONTH = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)

DAY = 86400
"""Seconds in a day: the unit of a date written without a time."""
_ISO_UNITS: dict[int, Literal["s", "m", "D"]] = {1: "s", 60: "m", DAY: "D"}  # numpy's units


def _leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def iso_cell(text: str) -> tuple[int, int] | None:
    """``(seconds since the epoch, class in ISO_FORMATS)`` of one cell written in the ISO
    family, None for any other text or a day or time that does not exist (``2019-02-30``,
    ``25:00``)."""
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
    return seconds + h * 3600 + mi * 60 + s, cls


def format_unit(fmt: str) -> int:
    """The precision of values written in ``fmt``, in seconds: 1 with seconds (``%S``), 60
    with minutes, 3600 with hours, a day otherwise."""
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
    if not isinstance(fmt, str) or "%Y" not in fmt:
        raise ValueError(f"a date format must be a strftime format with %Y, got {fmt!r}")
    probe = pd.Timestamp("2001-02-03 04:05:06")
    try:
        text = probe.strftime(fmt)
        back = pd.to_datetime(pd.Series([text]), format=fmt, errors="raise")
    except (ValueError, TypeError) as exc:
        raise ValueError(f"the date format {fmt!r} cannot be read back: {exc}") from None
    if back.isna().any():
        raise ValueError(f"the date format {fmt!r} cannot be read back")
    return fmt


def times_of(values: pd.Series, fmt: str) -> pd.Series:
    """``values`` on the time axis (seconds since the epoch, float), NaN for a missing value
    or one that is not a date written in ``fmt``: any format of the ISO family when ``fmt``
    is one of :data:`ISO_FORMATS` (a date written to the second in a column of dates reads;
    its day is released), otherwise exactly ``fmt`` (pandas' parser, cell by cell)."""
    out = np.full(len(values), np.nan)
    present = values.notna().to_numpy()
    cells = values.to_numpy(dtype=object)
    if fmt in ISO_FORMATS:
        # each distinct text read once: a column of timestamps repeats few of them
        codes, texts = pd.factorize(pd.Series([str(v).strip() for v in cells[present]]))
        reads = [iso_cell(t) for t in texts]
        secs = np.array([np.nan if r is None else float(r[0]) for r in reads] + [np.nan])
        out[present] = secs[codes]
    elif present.any():
        texts = pd.Series([str(v).strip() for v in cells[present]], dtype=object)
        parsed = pd.to_datetime(texts, format=fmt, errors="coerce")
        ok = parsed.notna().to_numpy()
        secs = np.full(len(texts), np.nan)
        secs[ok] = parsed[ok].to_numpy(dtype="datetime64[s]").astype(np.int64).astype(float)
        out[present] = secs
    return pd.Series(out, index=values.index, name=values.name)


def written(seconds: np.ndarray, missing: np.ndarray, fmt: str) -> pd.Series:
    """Times on the axis written as text in ``fmt`` (truncated to its precision); None
    where ``missing``."""
    secs = np.where(missing, 0, np.floor(np.asarray(seconds, dtype=np.float64))).astype(np.int64)
    stamps = secs.astype("datetime64[s]")
    if fmt in ISO_FORMATS:
        unit = _ISO_UNITS[format_unit(fmt)]
        text = np.datetime_as_string(stamps.astype(f"datetime64[{unit}]"), unit=unit)
        if "T" not in fmt:
            text = np.char.replace(text, "T", " ")
        out = text.astype(object)
    else:
        out = pd.DatetimeIndex(stamps).strftime(fmt).to_numpy(dtype=object)
    out[np.asarray(missing, dtype=bool)] = None
    return pd.Series(out, dtype=object)


def iso_format(precision: int, with_t: bool) -> str:
    """The ISO format of precision 0 (a day), 1 (a minute) or 2 (a second), its time after
    a ``T`` (``with_t``) or a space."""
    return ISO_FORMATS[precision + (2 if with_t and precision else 0)]
