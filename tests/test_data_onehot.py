"""The one-hot invariant is checked wherever data enters: multi-hot records are refused with
the group and the first offending record's index, and the private density refuses data whose
groups were not verified."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from dpquery.algorithms.game.free import density_sensitivity, private_density
from dpquery.data.binary import BinaryData, load_binary, onehot_violation, pack_columns
from dpquery.errors import DPQueryError
from dpquery.privacy import Budget, Ledger
from dpquery.rng import make_rng

GROUPS = np.array([[0, 3], [3, 7]])  # a 3-bit group, a 4-bit group, one free bit (7)


def one_hot(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.zeros((n, 8), dtype=np.uint8)
    x[np.arange(n), rng.integers(0, 3, n)] = 1
    x[np.arange(n), 3 + rng.integers(0, 4, n)] = 1
    x[:, 7] = rng.integers(0, 2, n)
    return x


def test_one_hot_data_passes_and_is_verified() -> None:
    data = BinaryData.from_dense(one_hot(200), GROUPS)
    assert data.onehot_verified
    assert onehot_violation(data.words, GROUPS) is None


def test_records_with_no_bit_in_a_group_are_accepted() -> None:
    # at most one bit is what the sensitivities need
    x = one_hot(10)
    x[4, 3:7] = 0
    assert BinaryData.from_dense(x, GROUPS).n == 10


@pytest.mark.parametrize("record", [0, 63, 64, 130, 199])
def test_a_multi_hot_record_is_refused_naming_group_and_index(record) -> None:
    x = one_hot(200)
    x[record, 3:7] = [0, 1, 0, 1]  # two bits of the 4-bit group
    with pytest.raises(DPQueryError, match=rf"group 1 \(bits 3\.\.6\).* record {record} "):
        BinaryData.from_dense(x, GROUPS)
    assert onehot_violation(pack_columns(x), GROUPS) == (1, record)


def test_the_first_offending_record_is_named() -> None:
    x = one_hot(300)
    x[[250, 77], 0:3] = 1
    assert onehot_violation(pack_columns(x), GROUPS) == (0, 77)


def test_multi_hot_data_without_groups_is_plain_binary() -> None:
    x = one_hot(50)
    x[3, 0:3] = 1
    assert BinaryData.from_dense(x).n == 50  # no group declared: nothing to violate


def test_a_loaded_multi_hot_npz_is_refused(tmp_path) -> None:
    x = one_hot(100)
    x[42, 0:2] = 1
    path = tmp_path / "bad.npz"
    np.savez_compressed(
        path, format=np.array("dpquery.BinaryData/1"), words=pack_columns(x),
        n=np.int64(100), onehot_groups=GROUPS, domain=np.array(""),
    )  # fmt: skip
    with pytest.raises(DPQueryError, match="record 42 "):
        load_binary(path)


def test_the_error_quotes_no_values() -> None:
    x = one_hot(100)
    x[42, 0:3] = 1
    with pytest.raises(DPQueryError) as info:
        BinaryData.from_dense(x, GROUPS)
    message = str(info.value)
    assert "record 42" in message and "[1, 1, 1]" not in message and "111" not in message


@dataclass
class Unverified:
    """Stands in for a data object whose groups nobody checked."""

    n: int
    d: int
    onehot_groups: np.ndarray

    def column_counts(self) -> np.ndarray:
        return np.zeros(self.d, dtype=np.int64)


def test_private_density_refuses_unverified_groups() -> None:
    data = Unverified(10, 8, GROUPS)
    ledger = Ledger(Budget.pure(1.0))
    with pytest.raises(DPQueryError, match="not verified"):
        private_density(data, epsilon=0.5, rng=make_rng(0), ledger=ledger)  # type: ignore[arg-type]
    assert ledger.entries == ()  # refused before any charge
    # without groups, nothing needs verifying: every bit is free
    assert density_sensitivity(Unverified(10, 8, np.zeros((0, 2), np.int64))) == 8 / 10  # type: ignore[arg-type]
