"""Column dtypes of decoded output: part of the public schema, carried by the domain.

Every attribute may declare ``dtype``, the pandas dtype its column has when records are
decoded: a pandas dtype name (``"int64"``, ``"Int64"``, ``"float64"``, ``"object"``,
``"string"``, ``"bool"``, ...), ``"category"`` (a pandas Categorical whose categories are
the domain's values, in the domain's order) or ``"category:ordered"`` (the same, ordered).
Undeclared, the dtype follows from the domain alone: ``int64`` for a numeric attribute
that is ``integer`` or whose edges are all integers (values are rounded to the edges'
precision, :func:`edge_decimals`), ``float64`` for another numeric one, and for categorical
and binary attributes the type of their values (all integers: ``int64``, all strings:
pandas' string dtype ``str``, mixed: ``object``).

An attribute that declares a missing value (a missing category, ``missing=True``) decodes
it to a missing value, so its integer or boolean dtype becomes the nullable one (``Int64``,
``boolean``): the output dtype depends on the domain only, never on which values the
release happens to hold.

:meth:`Domain.with_dtypes` declares dtypes (a dict, from public knowledge). They are never
read from the private table: pandas infers a column's dtype from its values (one age of 37.5
makes an integer column ``float64``), so copying it would tell neighbouring tables apart. A
categorical dtype's categories are the domain's values, in the domain's order.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dpquery.errors import DomainError

CATEGORY = "category"
ORDERED_CATEGORY = "category:ordered"
CATEGORICAL_DTYPES = (CATEGORY, ORDERED_CATEGORY)
_NULLABLE = {"bool": "boolean"}  # and int64 -> Int64, uint8 -> UInt8, ...
MAX_DECIMALS = 6


def dtype_name(dtype: Any) -> str:
    """The name :func:`check_dtype` accepts for a pandas/numpy dtype."""
    if isinstance(dtype, pd.CategoricalDtype):
        return ORDERED_CATEGORY if dtype.ordered else CATEGORY
    return str(dtype)


def check_dtype(
    name: str, dtype: object, values: Sequence[Hashable] | None, *, whole: bool = True
) -> None:
    """Refuse a ``dtype`` that attribute ``name`` cannot decode to. ``values`` are the
    attribute's non-missing values (None: a numeric attribute, which needs a numeric dtype,
    and an integer one only when its decoded values are ``whole``)."""
    if dtype is None:
        return
    if not isinstance(dtype, str):
        raise DomainError(f"attribute {name!r}: dtype must be a string, got {dtype!r}")
    if dtype in CATEGORICAL_DTYPES:
        if values is None:
            raise DomainError(
                f"attribute {name!r}: a numeric attribute needs a numeric dtype, got {dtype!r}"
            )
        return
    try:
        resolved = pd.api.types.pandas_dtype(dtype)
    except TypeError:
        raise DomainError(
            f"attribute {name!r}: dtype {dtype!r} is not a pandas dtype; expected e.g. "
            "'int64', 'Int64', 'float64', 'object', 'string', 'bool', 'category' or "
            f"'{ORDERED_CATEGORY}'"
        ) from None
    if values is None:
        if resolved.kind not in "iuf":
            raise DomainError(
                f"attribute {name!r}: a numeric attribute needs a numeric dtype, got {dtype!r}"
            )
        if resolved.kind in "iu" and not whole:
            raise DomainError(
                f"attribute {name!r}: its bin edges have decimals, so an integer dtype "
                f"({dtype!r}) would truncate its values; use a float dtype or integer=True"
            )
        return
    try:
        held = pd.Series(list(values), dtype=object).astype(resolved).tolist()
    except (ValueError, TypeError):
        held = None
    if held is None or not all(map(_same, values, held)):
        raise DomainError(
            f"attribute {name!r}: its values {list(values)[:5]} cannot be held in dtype {dtype!r}"
        )


def _same(value: object, held: object) -> bool:
    """Whether ``held`` (``value`` converted to a dtype) still says ``value``: equal, the same
    text ("1" and 1) or the same number (1 and 1.0); not 1.5 truncated to 1, nor the text
    "False" made True."""
    if held == value or str(held) == str(value):
        return True
    try:
        return float(held) == float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def edge_decimals(edges: tuple[float, ...]) -> int | None:
    """The fewest decimals (up to :data:`MAX_DECIMALS`) that write every edge exactly: the
    precision decoded values are rounded to (edges 0, 10, 20: 0; 0.5 steps: 1); None when
    no such precision exists (e.g. thirds), and values stay unrounded."""
    e = np.asarray(edges, dtype=np.float64)
    for k in range(MAX_DECIMALS + 1):
        scaled = e * 10.0**k
        # Relative, not absolute: an edge of 1e-309 is not "0 to 6 decimals" (a value
        # rounded to 0 would leave its bin); 0.1 * 10 = 1.0000000000000002 is 1.
        if np.allclose(scaled, np.round(scaled), rtol=1e-9, atol=0):
            return k
    return None


def values_dtype(values: Sequence[Hashable]) -> str:
    """The dtype of a column holding ``values`` (all integers: int64, all strings: object)."""
    inferred = pd.Series(list(values), dtype=object).infer_objects().dtype
    return str(inferred)


def nullable(dtype: str) -> str:
    """The dtype that can also hold a missing value (``int64`` -> ``Int64``)."""
    if dtype in _NULLABLE:
        return _NULLABLE[dtype]
    if dtype.startswith(("int", "uint")):
        return "U" + dtype[1:] if dtype.startswith("uint") else "I" + dtype[1:]
    return dtype


def column(
    values: np.ndarray, missing: np.ndarray, dtype: str, categories: Sequence[Hashable] = ()
) -> pd.Series:
    """A decoded column: ``values`` with ``missing`` rows set missing, as ``dtype``
    (``categories``: the domain's non-missing values, for a categorical dtype)."""
    if dtype in CATEGORICAL_DTYPES:
        kept = values.astype(object)
        kept[missing] = None  # not a category: pandas makes it missing
        return pd.Series(
            pd.Categorical(kept, categories=list(categories), ordered=dtype == ORDERED_CATEGORY)
        )
    series = pd.Series(values)
    if missing.any():
        series = series.astype(object).mask(missing, None)
    return series.astype(pd.api.types.pandas_dtype(dtype))


__all__ = [
    "CATEGORY",
    "ORDERED_CATEGORY",
    "check_dtype",
    "column",
    "dtype_name",
    "edge_decimals",
    "nullable",
    "values_dtype",
]
