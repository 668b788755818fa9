"""Numbers written as people write them: a currency sign, thousands separators, a percent
sign (``"$1,200.50"``, ``"12.5%"``), an accountant's negative in parentheses
(``"(1,234)"``). Each cell is read alone, never the column's dtype; the
learner (:mod:`dpquery.domain_learning`) and the encoder (:mod:`dpquery.data.encode`) read
them alike, so a learned domain given back encodes the table it was learned from."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from dpquery.data.dates import digits_format, times_of
from dpquery.errors import DPQueryError

_FORMATTED = re.compile(
    r"(?P<sign>[-+]?)(?:(?P<currency>[$€£¥]) ?)?(?P<sign2>[-+]?)"
    r"(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?: ?(?P<percent>%))?"
)
_ACCOUNTING = re.compile(r"\((?P<inner>[^-+()][^()]*)\)")
"""An unsigned number in parentheses: an accountant's negative, as spreadsheets' accounting
formats write it (``"(1,234.50)"``, ``"($12)"``, ``"(701)"``)."""


def plain_number(text: str) -> str | None:
    """A number written with a currency sign, thousands separators or a percent sign, as
    plain text (``"$1,200.50"`` -> ``"1200.50"``, ``"-€3"`` -> ``"-3"``, ``"12.5%"`` ->
    ``"12.5"``: a percentage stays in percent), or an unsigned one of these or a plain number
    in parentheses, an accountant's negative (``"(1,234.50)"`` -> ``"-1234.50"``,
    ``"(701)"`` -> ``"-701"``); None for any other text. Each cell is read alone (no other
    value of the column is looked at); a column decided numeric is released as plain
    numbers, one decided categorical keeps the texts as written."""
    if (paren := _ACCOUNTING.fullmatch(text)) is not None:
        inner = paren["inner"]
        if _FORMATTED.fullmatch(inner) is None:
            return None
        plain = plain_number(inner) or inner  # formatted, or a plain number
        return None if plain[:1] in "+-" else "-" + plain  # a sign inside too: "($-3)"
    m = _FORMATTED.fullmatch(text)
    if m is None or (m["sign"] and m["sign2"]):
        return None
    if not (m["currency"] or m["percent"] or "," in m["number"]):
        return None  # a plain number: Decimal reads it
    return (m["sign"] or m["sign2"]) + m["number"].replace(",", "")


def numbers_of(values: pd.Series) -> pd.Series:
    """``values`` as numbers (``pandas.to_numeric``), the texts :func:`plain_number` reads
    too; anything else NaN."""
    numbers = pd.to_numeric(values, errors="coerce")
    unread = (numbers.isna() & values.notna()).to_numpy()
    if not unread.any():
        return numbers
    out = numbers.to_numpy(dtype=np.float64, copy=True)
    out[unread] = [_plain_float(v) for v in values.to_numpy(dtype=object)[unread]]
    return pd.Series(out, index=values.index, name=values.name)


DECIMAL_COMMA_SEPARATORS = (";",)
"""The separators of the files whose numbers are read with a decimal comma
(:func:`decimal_commas`): a spreadsheet in a locale that writes ``12,5`` saves its CSV with
``;`` because the comma is taken."""

_DECIMAL_COMMA = re.compile(r"([-+]?)(\d{1,3}(?:\.\d{3})+|\d+),(\d+)")
_DOT_GROUPS = re.compile(r"[-+]?\d{1,3}(?:\.\d{3})+")


def decimal_comma(text: str) -> str | None:
    """A number written with a decimal comma, and dots between groups of thousands if any,
    as plain text (``"12,5"`` -> ``"12.5"``, ``"-1.234,50"`` -> ``"-1234.50"``); None for
    any other text."""
    m = _DECIMAL_COMMA.fullmatch(text)
    if m is None:
        return None
    return f"{m[1]}{m[2].replace('.', '')}.{m[3]}"


def decimal_commas(table: pd.DataFrame, source: str) -> pd.DataFrame:
    """``table`` (a ``;``-separated file's cells) with every text cell written with a decimal
    comma (:func:`decimal_comma`) as the same number written with a dot: the table a file
    written with dots reads as, so both are learned, encoded and released alike. Each cell
    is read alone; a column holding both decimal commas and a number whose dots group
    thousands (``1.234``: a thousand and 234 there, or 1.234?) is ambiguous and refused,
    naming the column and values (an error shown to the data holder, not released)."""
    out = table.copy()
    for name in table.columns:
        column = table[name]
        if pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(
            column.dtype
        ):  # read as numbers already: no text to read again
            continue
        texts = column.map(lambda v: v.strip() if isinstance(v, str) else None)
        plain = texts.map(lambda t: decimal_comma(t) if t else None)
        found = plain.notna()
        if not found.any():
            continue
        grouped = texts.map(lambda t: bool(t) and _DOT_GROUPS.fullmatch(t) is not None)
        if grouped.any():
            raise DPQueryError(
                f"{source}: column {name!r} holds numbers written with a decimal comma "
                f"({texts[found].iloc[0]!r}) and numbers whose dot may group thousands "
                f"({texts[grouped].iloc[0]!r}: a thousand and more, or a decimal?); write "
                "every number of the column one way"
            )
        out[name] = column.astype(object).where(~found, plain).astype(column.dtype)
    return out


def axis_values(values: pd.Series, attr: Any) -> pd.Series:
    """A numeric attribute's column as numbers on its axis: :func:`numbers_of`, or for a
    time column (``attr.time``) seconds since the epoch (:func:`dpquery.data.dates.times_of`);
    NaN for what is neither; a column of numbers is taken as on the axis
    already."""
    if getattr(attr, "time", None) is not None:
        if pd.api.types.is_integer_dtype(values.dtype) and digits_format(attr.time):
            # dates written as digits (20190314) that pandas read as integers: their text
            return times_of(values.astype(object).map(str), attr.time)
        if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(
            values.dtype
        ):  # already on the axis (a learned table's column, encodable)
            return values.astype(np.float64)
        return times_of(values, attr.time)
    return numbers_of(values)


def _plain_float(value: object) -> float:
    plain = plain_number(value.strip()) if isinstance(value, str) else None
    return float("nan") if plain is None else float(plain)
