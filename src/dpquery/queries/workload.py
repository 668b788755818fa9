"""``Workload``: a frozen, vectorised list of linear queries over the bits of a domain.

Every query is a list of *literals* ``(bit j, positive)``, read as ``x_j = 1`` when positive
and ``x_j = 0`` otherwise. The literals of all queries sit in two flat arrays, ``bits`` and
``positive``; query ``i`` owns ``offsets[i]:offsets[i+1]`` (CSR layout, so k may vary).
What a query computes from its literals depends on the workload's ``kind``:

* ``"conjunction"``: 1 when every literal holds. A k-way marginal cell over one-hot groups is
  a conjunction of k positive literals (DualQuery, Section 5.2; Oracle-efficient, Def. 2.5).
* ``"disjunction"``: 1 when some literal holds; monotone when all literals are positive
  (Small databases, Section 1.2).
* ``"parity"``: +1 when an even number of the bits in S are set, else -1 (DualQuery journal
  version, Definition 6.1, with 0/1 features; 2022 revision Appendix A). Literals are
  positive.

An answer on a dataset is the average over its records, in ``[0, 1]`` (``[-1, 1]`` for
parities). The workload is closed under negation implicitly, as DualQuery (Algorithm 2,
``Q = ∪ q_j ∪ ¬q_j``) and FEM require: the negation of q is ``1 - q`` (``-q`` for parities,
the "negated parity query" of Definition 6.1). Negations are never stored; index ``i + len(W)``
of the closed workload is the negation of query ``i`` (see :meth:`Workload.closed`).
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from dpquery.data.domain import Domain
from dpquery.errors import DPQueryError
from dpquery.io import atomic_path, npz_error

QueryKind = Literal["conjunction", "disjunction", "parity"]
QUERY_KINDS: tuple[QueryKind, ...] = ("conjunction", "disjunction", "parity")
FORMAT_VERSION = 1
_FORMAT_NAME = "dpquery-workload"


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Workload:
    """``len(offsets) - 1`` queries of one ``kind`` over ``d`` bits (see the module docstring).

    ``marginals`` (optional) marks whole marginals: marginal ``m`` is queries
    ``marginals[m]:marginals[m+1]``, all the cells of one set of attributes, so per-marginal
    total variation can be reported. ``domain`` (optional) names the bits in user terms.
    """

    kind: QueryKind
    d: int
    offsets: np.ndarray
    bits: np.ndarray
    positive: np.ndarray
    marginals: np.ndarray | None = None
    domain: Domain | None = None

    def __post_init__(self) -> None:
        if self.kind not in QUERY_KINDS:
            raise DPQueryError(f"query kind must be one of {QUERY_KINDS}, got {self.kind!r}")
        if self.domain is not None and self.domain.d != self.d:
            raise DPQueryError(f"workload has d={self.d} bits but its domain {self.domain.d}")
        offsets = np.asarray(self.offsets, dtype=np.int64)
        bits = np.asarray(self.bits, dtype=np.int32 if self.d < 2**31 else np.int64)
        positive = np.asarray(self.positive, dtype=bool)
        _check_literals(offsets, bits, positive, self.d)
        if self.kind == "parity" and not positive.all():
            raise DPQueryError("parity queries take a set of bits: every literal must be positive")
        object.__setattr__(self, "offsets", _frozen(offsets))
        object.__setattr__(self, "bits", _frozen(bits))
        object.__setattr__(self, "positive", _frozen(positive))
        if self.marginals is not None:
            marg = np.asarray(self.marginals, dtype=np.int64)
            if marg.ndim != 1 or marg.size < 1 or marg[0] != 0 or marg[-1] != len(self):
                raise DPQueryError(
                    f"marginals must be offsets from 0 to {len(self)} queries, got {marg[:5]}..."
                )
            if (np.diff(marg) <= 0).any():
                raise DPQueryError("every marginal must hold at least one query")
            object.__setattr__(self, "marginals", _frozen(marg))

    # -- shape ------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def sizes(self) -> np.ndarray:
        """Number of literals of each query (its k)."""
        return np.diff(self.offsets)

    @property
    def value_range(self) -> tuple[float, float]:
        """The interval a query's answer lies in: ``[0, 1]``, or ``[-1, 1]`` for parities."""
        return (-1.0, 1.0) if self.kind == "parity" else (0.0, 1.0)

    def literals(self, i: int) -> list[tuple[int, bool]]:
        """The literals ``(bit, positive)`` of query ``i``."""
        if not 0 <= i < len(self):
            raise DPQueryError(f"query index {i} is outside the workload's {len(self)} queries")
        s, e = int(self.offsets[i]), int(self.offsets[i + 1])
        return [(int(b), bool(p)) for b, p in zip(self.bits[s:e], self.positive[s:e], strict=True)]

    # -- negation closure -------------------------------------------------------------
    def negate(self, answers: np.ndarray) -> np.ndarray:
        """Answers of the negated queries: ``1 - a`` (``-a`` for parities)."""
        lo, hi = self.value_range
        return (lo + hi) - np.asarray(answers, dtype=np.float64)

    def closed(self, answers: np.ndarray) -> np.ndarray:
        """Answers of the closed workload ``Q ∪ ¬Q`` (length ``2 len(W)``)."""
        answers = np.asarray(answers, dtype=np.float64)
        return np.concatenate([answers, self.negate(answers)])

    def closed_query(self, i: int) -> tuple[int, bool]:
        """Closed-workload index ``i`` as ``(query, negated)``."""
        q = len(self)
        if not 0 <= i < 2 * q:
            raise DPQueryError(f"closed index {i} is outside [0, {2 * q})")
        return (i - q, True) if i >= q else (i, False)

    # -- selection --------------------------------------------------------------------
    def subset(self, index: np.ndarray) -> Workload:
        """The queries at ``index`` (integer array), in that order; marginal marks dropped."""
        index = np.asarray(index, dtype=np.int64)
        if index.size and (index.min() < 0 or index.max() >= len(self)):
            raise DPQueryError(f"query indices must lie in [0, {len(self)})")
        sizes = self.sizes[index]
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        take = np.repeat(self.offsets[index] - offsets[:-1], sizes) + np.arange(offsets[-1])
        return Workload(
            self.kind, self.d, offsets, self.bits[take], self.positive[take], None, self.domain
        )

    # -- identity, persistence ----------------------------------------------------------
    @cached_property
    def content_hash(self) -> str:
        """Hex digest of the queries (kind, d, literals, marginal marks; not the domain).

        Two workloads with the same hash have the same answers on every dataset, so the hash
        keys a cache of true answers (:func:`dpquery.queries.evaluate.cached_answers`).
        """
        h = hashlib.blake2b(digest_size=16)
        h.update(f"{_FORMAT_NAME}/{FORMAT_VERSION}/{self.kind}/{self.d}".encode())
        for a in (self.offsets, self.bits.astype(np.int64), self.positive):
            h.update(a.tobytes())
        h.update(b"-" if self.marginals is None else self.marginals.tobytes())
        return h.hexdigest()

    def save(self, path: str | Path, *, overwrite: bool = True) -> None:
        """Write an ``.npz`` file (format version, kind, domain JSON, literal arrays); an
        empty workload is refused, as nothing can be released or evaluated on it."""
        if len(self) == 0:
            raise DPQueryError(f"refusing to write {path}: the workload holds no queries")
        meta = {
            "format": _FORMAT_NAME,
            "version": FORMAT_VERSION,
            "kind": self.kind,
            "d": self.d,
            "domain": None if self.domain is None else self.domain.to_dict(),
            "content_hash": self.content_hash,
        }
        arrays = {"offsets": self.offsets, "bits": self.bits, "positive": self.positive}
        if self.marginals is not None:
            arrays["marginals"] = self.marginals
        with atomic_path(path, overwrite=overwrite) as tmp, open(tmp, "wb") as f:
            np.savez(f, meta=np.array(json.dumps(meta)), **arrays)  # type: ignore[arg-type]

    @classmethod
    def load(cls, path: str | Path) -> Workload:
        """Read a file written by :meth:`save`; checks the format version and the hash."""
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as z:
                meta = json.loads(str(z["meta"]))
                arrays = {k: z[k] for k in z.files if k != "meta"}
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise npz_error(path, "workload", exc) from None
        if meta.get("format") != _FORMAT_NAME or meta.get("version") != FORMAT_VERSION:
            raise DPQueryError(
                f"{path}: workload format {meta.get('format')!r} version {meta.get('version')!r}; "
                f"this dpquery reads {_FORMAT_NAME!r} version {FORMAT_VERSION}"
            )
        domain = None if meta["domain"] is None else Domain.from_dict(meta["domain"])
        w = cls(
            cast(QueryKind, meta["kind"]),
            int(meta["d"]),
            arrays["offsets"],
            arrays["bits"],
            arrays["positive"],
            arrays.get("marginals"),
            domain,
        )
        if w.content_hash != meta.get("content_hash"):
            raise DPQueryError(f"{path}: content hash mismatch; the file is corrupt")
        if len(w) == 0:
            raise DPQueryError(f"{path}: the workload holds no queries; expected at least one")
        return w

    @classmethod
    def from_lists(
        cls,
        kind: QueryKind,
        d: int,
        queries: list[list[tuple[int, bool]]],
        domain: Domain | None = None,
    ) -> Workload:
        """Build from Python lists of literals (small workloads, tests)."""
        sizes = [len(q) for q in queries]
        offsets = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
        flat = [lit for q in queries for lit in q]
        bits = np.array([b for b, _ in flat], dtype=np.int64)
        positive = np.array([p for _, p in flat], dtype=bool)
        return cls(kind, d, offsets, bits, positive, None, domain)

    def __repr__(self) -> str:
        k = self.sizes
        span = f"k={k.min()}..{k.max()}" if len(self) else "empty"
        marg = "" if self.marginals is None else f", {self.marginals.size - 1} marginals"
        return f"Workload({self.kind}, {len(self)} queries, {span}, d={self.d}{marg})"


def concat(workloads: list[Workload]) -> Workload:
    """Join workloads of one kind over the same bits (marginal marks kept if all have them)."""
    if not workloads:
        raise DPQueryError("concat needs at least one workload")
    first = workloads[0]
    for w in workloads[1:]:
        if w.kind != first.kind or w.d != first.d:
            raise DPQueryError(
                f"cannot join a {w.kind} workload over {w.d} bits to a {first.kind} one over "
                f"{first.d} bits"
            )
    shifts = np.cumsum([0] + [w.offsets[-1] for w in workloads[:-1]])
    offsets = np.concatenate(
        [[0]] + [w.offsets[1:] + s for w, s in zip(workloads, shifts, strict=True)]
    )
    marginals = None
    if all(w.marginals is not None for w in workloads):
        qshift = np.cumsum([0] + [len(w) for w in workloads[:-1]])
        marginals = np.concatenate(
            [[0]]
            + [
                cast(np.ndarray, w.marginals)[1:] + s
                for w, s in zip(workloads, qshift, strict=True)
            ]
        )
    return Workload(
        first.kind,
        first.d,
        offsets,
        np.concatenate([w.bits for w in workloads]),
        np.concatenate([w.positive for w in workloads]),
        marginals,
        first.domain,
    )


def _check_literals(offsets: np.ndarray, bits: np.ndarray, positive: np.ndarray, d: int) -> None:
    if offsets.ndim != 1 or offsets.size < 1 or offsets[0] != 0:
        raise DPQueryError("offsets must be a 1-D array starting at 0")
    if (np.diff(offsets) < 0).any():
        raise DPQueryError("offsets must not decrease")
    nnz = int(offsets[-1])
    if bits.shape != (nnz,) or positive.shape != (nnz,):
        raise DPQueryError(
            f"offsets end at {nnz} literals but bits has shape {bits.shape} and positive "
            f"{positive.shape}"
        )
    if nnz and (bits.min() < 0 or bits.max() >= d):
        bad = bits[(bits < 0) | (bits >= d)][0]
        raise DPQueryError(f"literal bit {bad} is outside the {d} bits of the domain")
    # a bit may appear once per query: sort (query, bit) keys and look for neighbours
    query_of = np.repeat(np.arange(offsets.size - 1, dtype=np.int64), np.diff(offsets))
    keys = np.sort(query_of * d + bits.astype(np.int64))
    dup = np.flatnonzero(keys[1:] == keys[:-1])
    if dup.size:
        q, b = divmod(int(keys[dup[0]]), d)
        raise DPQueryError(f"query {q} uses bit {b} twice; a bit may appear once per query")


def describe_query(w: Workload, i: int, negated: bool = False) -> dict[str, Any]:
    """Query ``i`` in the user's terms, as in ``dpquery workload show``.

    ``{"kind": ..., "negated": ..., "literals": [[attribute, value, positive], ...]}``: the
    literal holds when the record's attribute equals the value (``positive``) or differs
    from it. Without a domain the attribute is ``"bit"`` and the value the bit index.
    """
    lits = []
    for b, p in w.literals(i):
        if w.domain is None:
            lits.append(["bit", b, p])
        else:
            name, label = w.domain.value_of_bit(b)
            lits.append([name, _jsonable(label), p])
    return {"kind": w.kind, "negated": negated, "literals": lits}


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    return v
