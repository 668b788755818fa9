"""The one set of range checks (dpquery.validation): values, conversions, error classes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpquery import validation as v
from dpquery.errors import DPQueryError, ParameterError
from dpquery.privacy import Budget
from dpquery.privacy.errors import PrivacyParameterError


@pytest.mark.parametrize(
    ("check", "value", "expected"),
    [
        (v.positive, 2, 2.0),
        (v.nonnegative, 0, 0.0),
        (v.open_unit, 0.25, 0.25),
        (v.delta, 0, 0.0),
        (v.positive_int, np.int64(3), 3),
    ],
)
def test_good_values_come_back_converted(check, value, expected) -> None:
    out = check("x", value)
    assert out == expected and type(out) is type(expected)


@pytest.mark.parametrize(
    ("check", "value", "message"),
    [
        (v.positive, 0, "x must be a positive finite number, got 0"),
        (v.positive, math.inf, "x must be a positive finite number, got inf"),
        (v.positive, True, "x must be a real number, got True"),
        (v.real, math.nan, "x must be a number, got NaN"),
        (v.nonnegative, -1e-9, "x must be a finite number >= 0"),
        (v.open_unit, 1.0, "x must lie strictly between 0 and 1, got 1.0"),
        (v.delta, 1.0, "x must lie in [0, 1), got 1.0"),
        (v.positive_int, 2.0, "x must be a positive integer, got 2.0"),
        (v.positive_int, 0, "x must be a positive integer, got 0"),
    ],
)
def test_bad_values_name_the_value_and_the_range(check, value, message) -> None:
    with pytest.raises(ParameterError) as err:
        check("x", value)
    assert message in str(err.value)
    assert isinstance(err.value, DPQueryError)


def test_integer_minimum_and_the_privacy_layers_error_class() -> None:
    assert v.integer("T", 0, minimum=0) == 0
    with pytest.raises(ParameterError, match="T must be an integer >= 1, got 0"):
        v.integer("T", 0, minimum=1)
    with pytest.raises(PrivacyParameterError, match="epsilon must be a positive finite number"):
        Budget.pure(-1.0)  # the privacy layer's checks are these, with its own error class
