"""A public domain from a codebook: ``Domain.from_codebook({...})`` for the common case.

Each key is an attribute name (in column order); each value is one of

* a list of categories: ``"sex": ["F", "M"]`` (categorical, one bit per category);
* ``{"values": [...], "missing": "unknown"}``: categorical; a missing value (NaN) encodes to
  the category ``missing`` (which must be one of ``values``);
* a numeric range: ``"age": {"min": 0, "max": 100, "bins": 20}``: ``bins`` equal-width bins
  over ``[min, max]``; optional ``"integer"`` (default: both ends are integers, so records
  decode to integers), ``"missing": true`` (one more bit for missing values) and
  ``"out_of_range": "clip"`` (values outside the range go to the end bins instead of being
  an error);
* explicit bin edges: ``"income": {"edges": [0, 10000, 50000, 1e6]}`` (same options);
* any attribute of the full JSON format, with its ``"type"``: ``{"type": "binary",
  "values": ["no", "yes"]}`` (one free bit).

Errors name the key and what was expected. A codebook is public knowledge written without
looking at the data: nothing here reads a record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpquery.errors import DomainError

_RANGE_KEYS = {"min", "max", "bins"}
_NUMERIC_OPTIONS = {"integer", "missing", "out_of_range", "dtype"}
_FORMS = (
    "a list of categories, {'values': [...]}, {'min': ..., 'max': ..., 'bins': ...}, "
    "{'edges': [...]} or a full attribute object with 'type'"
)


def _fail(name: str, message: str) -> DomainError:
    return DomainError(f"codebook[{name!r}]: {message}")


def _number(name: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(name, f"{key!r} must be a number, got {value!r}")
    return float(value)


def _check_keys(name: str, spec: Mapping[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(spec) - allowed)
    if extra:
        raise _fail(name, f"unknown key(s) {extra}; expected some of {sorted(allowed)}")


def _numeric(name: str, spec: Mapping[str, Any]) -> Any:
    from dpquery.data.domain import Numeric

    options = {k: spec[k] for k in _NUMERIC_OPTIONS if k in spec}
    for key in ("integer", "missing"):
        if key in options and not isinstance(options[key], bool):
            raise _fail(name, f"{key!r} must be true or false, got {options[key]!r}")
    if "edges" in spec:
        _check_keys(name, spec, {"edges"} | _NUMERIC_OPTIONS)
        edges = spec["edges"]
        if not isinstance(edges, list | tuple) or len(edges) < 2:
            raise _fail(name, f"'edges' must be a list of at least two numbers, got {edges!r}")
        values = [_number(name, "edges", e) for e in edges]
        return Numeric(name, tuple(values), **options)
    _check_keys(name, spec, _RANGE_KEYS | _NUMERIC_OPTIONS)
    absent = sorted(_RANGE_KEYS - set(spec))
    if absent:
        raise _fail(name, f"a numeric range needs 'min', 'max' and 'bins'; missing {absent}")
    lo, hi = _number(name, "min", spec["min"]), _number(name, "max", spec["max"])
    bins = spec["bins"]
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
        raise _fail(name, f"'bins' must be a positive integer, got {bins!r}")
    if not lo < hi:
        raise _fail(
            name, f"'min' must be below 'max', got min={spec['min']!r}, max={spec['max']!r}"
        )
    integer_ends = all(isinstance(spec[k], int) for k in ("min", "max"))
    options.setdefault("integer", integer_ends)
    return Numeric.equal_width(name, lo, hi, bins, **options)


def _categorical(name: str, spec: Mapping[str, Any] | list[Any]) -> Any:
    from dpquery.data.domain import Categorical, _hashable

    if isinstance(spec, list):
        spec = {"values": spec}
    _check_keys(name, spec, {"values", "missing", "dtype"})
    values = spec["values"]
    if not isinstance(values, list | tuple) or not values:
        raise _fail(name, f"'values' must be a non-empty list of categories, got {values!r}")
    if any(isinstance(v, dict) for v in values):
        raise _fail(name, "categories must be strings or numbers, not objects")
    values = tuple(_hashable(v) for v in values)
    return Categorical(name, values, spec.get("missing"), dtype=spec.get("dtype"))


def attribute_from_codebook(name: str, spec: Any) -> Any:
    """One attribute of a codebook (see the module docstring for the accepted forms)."""
    from dpquery.data.domain import _attr_from_dict

    if not isinstance(name, str) or not name:
        raise DomainError(f"codebook keys must be non-empty attribute names, got {name!r}")
    try:
        if isinstance(spec, list):
            return _categorical(name, spec)
        if not isinstance(spec, Mapping):
            raise _fail(name, f"expected {_FORMS}; got {spec!r}")
        if "type" in spec:
            return _attr_from_dict({"name": name, **spec})
        if "values" in spec:
            return _categorical(name, spec)
        if "edges" in spec or set(spec) & _RANGE_KEYS:
            return _numeric(name, spec)
        raise _fail(name, f"expected {_FORMS}; got {dict(spec)!r}")
    except DomainError as exc:
        if str(exc).startswith("codebook["):
            raise
        raise _fail(name, str(exc)) from None


def attributes_from_codebook(codebook: Mapping[str, Any]) -> tuple[Any, ...]:
    """The attributes of a codebook, in its key order."""
    if not isinstance(codebook, Mapping) or not codebook:
        raise DomainError(
            f"a codebook must be a non-empty mapping of attribute name to spec, got {codebook!r}"
        )
    return tuple(attribute_from_codebook(name, spec) for name, spec in codebook.items())
