"""``BinaryData``: n records over d bits, bit-packed column by column.

Layout (the contract every kernel relies on):

* ``words`` is a C-contiguous ``uint64`` array of shape ``(d, n_words)``, ``n_words =
  ceil(n / 64)``. Row ``j`` holds bit ``j`` of every record, so a conjunction is an AND of
  rows and its count a popcount.
* Record ``i`` sits in word ``i // 64`` at bit ``i % 64`` (least significant first), the
  order of ``numpy.packbits(..., bitorder="little")`` read as little-endian ``uint64``.
* Padding bits past record ``n - 1`` are always zero. Kernels that negate a column (AND-NOT)
  must mask the last word with :attr:`BinaryData.tail_mask`.
* ``onehot_groups`` is an ``(g, 2)`` array of ``[start, stop)`` bit ranges in which every
  record has exactly one bit set (categorical and numeric attributes); bits outside every
  group are free binary attributes.

The one-hot invariant (at most one set bit per group and record) is what the sensitivity of
per-bit statistics rests on (a replaced record moves at most two bits of a group): every
``BinaryData`` with groups is checked when it is built, whatever the source (``encode``,
:meth:`BinaryData.from_dense`, a loaded ``.npz``), by one bitwise pass over the group's packed
columns (:func:`onehot_violation`); multi-hot data is refused, naming the group and the first
offending record's index (never its values).
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dpquery.data.domain import Domain
from dpquery.errors import DPQueryError
from dpquery.io import atomic_write, npz_error

WORD_BITS = 64


def n_words_for(n: int) -> int:
    """Number of 64-bit words that hold ``n`` bits."""
    return (n + WORD_BITS - 1) // WORD_BITS


def pack_columns(dense: np.ndarray) -> np.ndarray:
    """Pack an ``(n, d)`` 0/1 matrix into the ``(d, n_words)`` uint64 layout above."""
    dense = np.asarray(dense)
    if dense.ndim != 2:
        raise DPQueryError(f"expected a 2-D (records x bits) array, got shape {dense.shape}")
    n, d = dense.shape
    padded = np.zeros((d, n_words_for(n) * WORD_BITS), dtype=np.uint8)
    padded[:, :n] = dense.T != 0
    packed = np.packbits(padded, axis=1, bitorder="little")
    return np.ascontiguousarray(packed).view("<u8").astype(np.uint64, copy=False)


def pack_rows(rows: np.ndarray, index: np.ndarray | None = None, chunk: int = 1024) -> np.ndarray:
    """:func:`pack_columns` of ``rows[index]`` (repeats allowed; None: every row once),
    ``chunk`` output rows (a multiple of 64) at a time: the selected rows are never all
    densified at once (20,000 rows of 512,000 bits would be 10 GB as bytes, 1.3 GB packed)."""
    rows = np.asarray(rows)
    if rows.ndim != 2:
        raise DPQueryError(f"expected a 2-D (records x bits) array, got shape {rows.shape}")
    index = np.arange(rows.shape[0]) if index is None else np.asarray(index)
    if chunk < 1 or chunk % WORD_BITS:
        raise DPQueryError(f"chunk must be a positive multiple of {WORD_BITS}, got {chunk}")
    words = np.empty((rows.shape[1], n_words_for(index.size)), dtype=np.uint64)
    for start in range(0, index.size, chunk):
        block = pack_columns(rows[index[start : start + chunk]])
        words[:, start // WORD_BITS : start // WORD_BITS + block.shape[1]] = block
    return words


def unpack_columns(words: np.ndarray, n: int) -> np.ndarray:
    """Inverse of :func:`pack_columns`: an ``(n, d)`` uint8 matrix of 0/1."""
    words = np.ascontiguousarray(words, dtype="<u8")
    bits = np.unpackbits(words.view(np.uint8), axis=1, count=n, bitorder="little")
    return np.ascontiguousarray(bits.T)


def onehot_violation(words: np.ndarray, groups: np.ndarray) -> tuple[int, int] | None:
    """``(group, record)``: the first group in which some record has two or more set bits,
    and the first such record; ``None`` when every group is one-hot (at most one bit).

    One pass over the packed columns: ``twice |= seen & column; seen |= column`` per bit,
    64 records per word operation.
    """
    for g, (start, stop) in enumerate(np.asarray(groups).reshape(-1, 2).tolist()):
        seen = np.zeros(words.shape[1], dtype=np.uint64)
        twice = np.zeros_like(seen)
        for j in range(start, stop):
            twice |= seen & words[j]
            seen |= words[j]
        hit = np.flatnonzero(twice)
        if hit.size:
            word = int(twice[hit[0]])
            return g, int(hit[0]) * WORD_BITS + (word & -word).bit_length() - 1
    return None


def _validate_groups(groups: np.ndarray, d: int) -> np.ndarray:
    groups = np.asarray(groups, dtype=np.int64).reshape(-1, 2)
    if len(groups):
        starts, stops = groups[:, 0], groups[:, 1]
        if (starts < 0).any() or (stops > d).any() or (stops <= starts).any():
            raise DPQueryError(f"one-hot groups must be non-empty ranges inside [0, {d}]")
        if (starts[1:] < stops[:-1]).any():
            raise DPQueryError("one-hot groups must be sorted and must not overlap")
    groups.setflags(write=False)
    return groups


@dataclass(frozen=True, eq=False)
class BinaryData:
    """A sensitive dataset as n records over d bits (see the module docstring for layout).

    ``n`` is stored plainly: it is public under replace-one neighbours (the relation's fixed
    size); under add/remove (:mod:`dpquery.privacy.neighbours`) a release reads a noisy ``n``
    in its place and never reports this one.
    """

    words: np.ndarray
    n: int
    onehot_groups: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64))
    domain: Domain | None = None

    def __post_init__(self) -> None:
        words = np.ascontiguousarray(self.words, dtype=np.uint64)
        if words.ndim != 2:
            raise DPQueryError(f"words must be a (d, n_words) array, got shape {words.shape}")
        if self.n < 0 or words.shape[1] != n_words_for(self.n):
            raise DPQueryError(
                f"words has {words.shape[1]} columns but n={self.n} records need "
                f"{n_words_for(self.n)}"
            )
        words.setflags(write=False)
        object.__setattr__(self, "words", words)
        object.__setattr__(self, "onehot_groups", _validate_groups(self.onehot_groups, self.d))
        if self.domain is not None and self.domain.d != self.d:
            raise DPQueryError(f"domain has {self.domain.d} bits but the data has {self.d}")
        found = onehot_violation(words, self.onehot_groups)
        if found is not None:
            g, record = found
            start, stop = (int(b) for b in self.onehot_groups[g])
            raise DPQueryError(
                f"one-hot group {g} (bits {start}..{stop - 1}) has more than one bit set in "
                f"record {record} (the first such record): the data is not one-hot, so the "
                f"sensitivities that assume it would be wrong; encode the table with "
                f"dpquery.data.encode, or declare no group over these bits"
            )

    @property
    def onehot_verified(self) -> bool:
        """Always ``True``: the one-hot invariant was checked when this object was built."""
        return True

    @classmethod
    def from_dense(
        cls,
        dense: np.ndarray,
        onehot_groups: np.ndarray | None = None,
        domain: Domain | None = None,
    ) -> BinaryData:
        """Pack an ``(n, d)`` 0/1 matrix. Mainly for tests and small inputs."""
        dense = np.asarray(dense)
        if dense.size and not np.isin(dense, (0, 1)).all():
            raise DPQueryError("a binary matrix may hold only 0 and 1")
        groups = (
            domain.onehot_groups if domain is not None and onehot_groups is None else onehot_groups
        )
        return cls(
            pack_columns(dense),
            int(dense.shape[0]),
            np.zeros((0, 2), np.int64) if groups is None else groups,
            domain,
        )

    @property
    def d(self) -> int:
        """Number of bits (binary attributes after encoding)."""
        return int(self.words.shape[0])

    @property
    def n_words(self) -> int:
        return int(self.words.shape[1])

    @property
    def tail_mask(self) -> np.uint64:
        """Mask of the valid bits in the last word (all ones when n is a multiple of 64)."""
        r = self.n % WORD_BITS
        return np.uint64((1 << r) - 1) if r else np.uint64(0xFFFFFFFFFFFFFFFF)

    @property
    def nbytes(self) -> int:
        return int(self.words.nbytes)

    def to_dense(self) -> np.ndarray:
        """The ``(n, d)`` uint8 matrix. Dense: only for small data and tests."""
        return unpack_columns(self.words, self.n)

    def column(self, j: int) -> np.ndarray:
        """Bit ``j`` of every record as a bool array of length n."""
        return unpack_columns(self.words[j : j + 1], self.n)[:, 0].astype(bool)

    def column_counts(self) -> np.ndarray:
        """Number of records with each bit set (length d, int64)."""
        return np.bitwise_count(self.words).sum(axis=1, dtype=np.int64)

    def __repr__(self) -> str:
        return (
            f"BinaryData(n={self.n}, d={self.d}, onehot_groups={len(self.onehot_groups)}, "
            f"{self.nbytes / 2**20:.1f} MiB)"
        )


_FORMAT = "dpquery.BinaryData/1"


def write_binary(path: Path, data: BinaryData, weights: np.ndarray | None = None) -> None:
    """Write ``data`` (bits, n, groups, domain) to ``path`` as a compressed ``.npz``, not
    atomically (the caller's temporary: :func:`save_binary`, ``dpquery synth``'s outputs).
    ``weights`` (one per record) marks weighted synthetic records: :func:`load_binary`
    refuses such a file, :func:`load_weighted` reads it."""
    domain_json = "" if data.domain is None else json.dumps(data.domain.to_dict())
    arrays: dict[str, Any] = {
        "format": np.array(_FORMAT), "words": data.words, "n": np.array(data.n, np.int64),
        "onehot_groups": data.onehot_groups, "domain": np.array(domain_json),
    }  # fmt: skip
    if weights is not None:
        arrays[WEIGHTS] = np.asarray(weights, np.float64)
    with path.open("wb") as fh:
        np.savez_compressed(fh, **arrays)


def save_binary(path: str | Path, data: BinaryData) -> None:
    """Write ``data`` (bits, n, groups, domain) to a ``.npz`` file, atomically."""
    atomic_write(path, lambda tmp: write_binary(tmp, data))


WEIGHTS = "weights"
"""The key of the records' weights in a weighted ``.npz`` (``dpquery synth --weights``)."""


def load_weighted(path: str | Path) -> tuple[BinaryData, np.ndarray | None]:
    """Read a file written by :func:`write_binary`: the bits, and the records' weights when
    it holds weighted synthetic records (else None). The arrays' shapes are checked against
    ``n``, ``d`` and the domain; a file that fails is refused by name."""
    try:
        with np.load(path, allow_pickle=False) as z:
            if str(z["format"]) != _FORMAT:
                raise DPQueryError(f"{path}: format {z['format']} is not {_FORMAT}")
            domain_json = str(z["domain"])
            data = BinaryData(
                z["words"], int(z["n"]), z["onehot_groups"],
                Domain.from_dict(json.loads(domain_json)) if domain_json else None,
            )  # fmt: skip
            weights = z[WEIGHTS] if WEIGHTS in z.files else None
            if weights is not None and weights.shape != (data.n,):
                raise DPQueryError(f"{path}: {WEIGHTS} has shape {weights.shape}, expected "
                                   f"({data.n},), one per record")  # fmt: skip
            if weights is not None and not (
                np.isfinite(weights).all() and (weights >= 0).all() and weights.sum() > 0
            ):
                raise DPQueryError(f"{path}: {WEIGHTS} must be finite and non-negative, "
                                   "not all zero")  # fmt: skip
            return data, weights
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        if isinstance(exc, DPQueryError):
            named = str(exc) if str(path) in str(exc) else f"{path}: {exc}"
            raise DPQueryError(named) from None
        raise npz_error(path, "binary data", exc) from None


def load_binary(path: str | Path) -> BinaryData:
    """Read a file written by :func:`save_binary` (a dataset: weighted synthetic records are
    refused, :func:`load_weighted` reads those)."""
    data, weights = load_weighted(path)
    if weights is not None:
        raise DPQueryError(
            f"{path} holds weighted synthetic records (dpquery synth --weights), not a dataset "
            "of equally weighted records; write the release without --weights to read it as data"
        )
    return data
