"""Coherence of synthetic records: constraints that hold for every real record, and how often
synthetic records break them.

A synthetic table that matches low-order marginals can still be a bag of independent cells:
a husband who is a "Wife", a 3-year-old with a doctorate. :func:`coherence_report` finds
simple constraints satisfied by EVERY real record and counts the synthetic records that
violate each:

* ``never`` (forbidden pair): values ``A = a`` and ``B = b`` never occur together among the
  real records although both are frequent, so that independence would predict at least
  ``min_expected`` records with both (relationship "Wife" with sex "Male");
* ``at_least`` / ``at_most`` (numeric implication): every real record with ``B = b`` has
  ``X >= m`` (or ``X <= M``), although a fraction ``min_support`` of all real records lies
  beyond that bound (a doctorate implies age >= 24);
* ``range``: every real value of a numeric column lies in ``[min, max]`` (no 3-year-olds when
  the youngest real person is 17).

NOT PRIVATE: the constraints are read off the private table (a forbidden pair reveals that no
one has it); the report is for the data holder's evaluation, never for publication.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpquery.data.domain import MISSING_LABEL, Domain, Numeric
from dpquery.data.encode import attribute_codes
from dpquery.errors import DPQueryError

NOT_PRIVATE_NOTE = (
    "constraints are read off the private data: NOT differentially private; for the data "
    "holder's evaluation only"
)


@dataclass(frozen=True)
class Constraint:
    """A constraint that every real record satisfies.

    ``kind`` is ``never`` (``column = value`` and ``other = other_value`` never together),
    ``at_least``/``at_most`` (``other = other_value`` implies ``column >= bound`` or
    ``<= bound``; without ``other`` the bound holds for every record: ``range``).
    ``evidence`` says why the constraint is not a coincidence: the records independence
    predicts for a forbidden pair, the real records beyond the bound for an implication.
    """

    kind: str
    column: str
    value: Any = None
    other: str | None = None
    other_value: Any = None
    bound: float | None = None
    evidence: float = 0.0

    def describe(self) -> str:
        if self.kind == "never":
            return f"never {self.column} = {self.value!r} with {self.other} = {self.other_value!r}"
        op = ">=" if self.kind == "at_least" else "<="
        premise = "" if self.other is None else f"{self.other} = {self.other_value!r} implies "
        return f"{premise}{self.column} {op} {self.bound:g}"

    def violated(self, table: pd.DataFrame) -> np.ndarray:
        """Which records of ``table`` break the constraint (a missing value breaks none)."""
        if self.kind == "never":
            return np.asarray(
                (table[self.column] == self.value) & (table[self.other] == self.other_value)
            )
        x = pd.to_numeric(table[self.column], errors="coerce")
        beyond = x < self.bound if self.kind == "at_least" else x > self.bound
        if self.other is not None:
            beyond &= table[self.other] == self.other_value
        return np.asarray(beyond.fillna(False), dtype=bool)


@dataclass(frozen=True)
class CoherenceReport:
    """Violations of every constraint by the synthetic records (weighted fractions)."""

    constraints: list[Constraint]
    violations: np.ndarray  # per constraint: fraction of synthetic records breaking it
    incoherent: float  # fraction of synthetic records breaking at least one constraint
    real_rows: int
    synthetic_rows: int
    note: str = field(default=NOT_PRIVATE_NOTE)

    def to_dict(self, limit: int | None = None) -> dict[str, Any]:
        """JSON-ready; constraints most violated first (``limit`` of them)."""
        order = np.argsort(-self.violations, kind="stable")[:limit]
        return {
            "note": self.note,
            "real_rows": self.real_rows,
            "synthetic_rows": self.synthetic_rows,
            "constraints": len(self.constraints),
            "incoherent_fraction": self.incoherent,
            "worst": [
                {"constraint": self.constraints[i].describe(),
                 "kind": self.constraints[i].kind,
                 "evidence": self.constraints[i].evidence,
                 "violated_fraction": float(self.violations[i])}
                for i in order
            ],
        }  # fmt: skip


def _split_columns(real: pd.DataFrame, max_categories: int) -> tuple[list[str], list[str]]:
    """Categorical columns (few distinct values) and numeric ones (many)."""
    categorical, numeric = [], []
    for name in real.columns:
        if name == "weight":
            continue
        col = real[name]
        many = col.nunique(dropna=True) > max_categories
        if many and pd.api.types.is_numeric_dtype(col):
            numeric.append(str(name))
        elif not many:
            categorical.append(str(name))
    return categorical, numeric


def _forbidden_pairs(
    real: pd.DataFrame, columns: list[str], min_support: float, min_expected: float
) -> list[Constraint]:
    n = len(real)
    codes = {c: pd.factorize(real[c], use_na_sentinel=True) for c in columns}
    found = []
    for a, b in itertools.combinations(columns, 2):
        (ca, va), (cb, vb) = codes[a], codes[b]
        ok = (ca >= 0) & (cb >= 0)
        joint = np.bincount(ca[ok] * len(vb) + cb[ok], minlength=len(va) * len(vb))
        pa = np.bincount(ca[ca >= 0], minlength=len(va)) / n
        pb = np.bincount(cb[cb >= 0], minlength=len(vb)) / n
        expected = n * np.outer(pa, pb)
        never = (joint.reshape(len(va), len(vb)) == 0) & (expected >= min_expected)
        never &= (pa[:, None] >= min_support) & (pb[None, :] >= min_support)
        for i, j in zip(*np.nonzero(never), strict=True):
            found.append(Constraint("never", a, _py(va[i]), b, _py(vb[j]),
                                    evidence=float(expected[i, j])))  # fmt: skip
    return found


def _implications(
    real: pd.DataFrame, categorical: list[str], numeric: list[str], min_support: float
) -> list[Constraint]:
    n = len(real)
    found = []
    for x_name in numeric:
        x = pd.to_numeric(real[x_name], errors="coerce")
        lo, hi = float(x.min()), float(x.max())
        found += [Constraint("at_least", x_name, bound=lo), Constraint("at_most", x_name, bound=hi)]
        for b_name in categorical:
            groups = x.groupby(real[b_name], dropna=True, observed=True)
            sizes, mins, maxs = groups.size(), groups.min(), groups.max()
            for value in sizes.index[sizes >= min_support * n]:
                below = float((x < mins[value]).mean())
                above = float((x > maxs[value]).mean())
                if below >= min_support:
                    found.append(Constraint("at_least", x_name, None, b_name, _py(value),
                                            float(mins[value]), below))  # fmt: skip
                if above >= min_support:
                    found.append(Constraint("at_most", x_name, None, b_name, _py(value),
                                            float(maxs[value]), above))  # fmt: skip
    return found


def _py(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def find_constraints(
    real: pd.DataFrame,
    *,
    min_support: float = 0.01,
    min_expected: float = 10.0,
    max_categories: int = 64,
) -> list[Constraint]:
    """Constraints that EVERY record of ``real`` satisfies (see the module docstring).

    A column with at most ``max_categories`` distinct values is categorical; a numeric
    column with more is numeric. NOT PRIVATE.
    """
    if len(real) == 0:
        raise DPQueryError("the real table has no records")
    if not 0 < min_support < 1:
        raise DPQueryError(f"min_support must be in (0, 1), got {min_support}")
    categorical, numeric = _split_columns(real, max_categories)
    return _forbidden_pairs(real, categorical, min_support, min_expected) + _implications(
        real, categorical, numeric, min_support
    )


def coherence_report(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    constraints: list[Constraint] | None = None,
    **options: Any,
) -> CoherenceReport:
    """How often the (decoded) ``synthetic`` records break the constraints of ``real``.

    A ``weight`` column in ``synthetic`` weighs its records (a weighted release); otherwise
    every record counts once. ``options`` go to :func:`find_constraints`. NOT PRIVATE.
    """
    constraints = find_constraints(real, **options) if constraints is None else constraints
    used = {c.column for c in constraints} | {c.other for c in constraints if c.other}
    missing = sorted(used - set(synthetic.columns))
    if missing:
        raise DPQueryError(f"the synthetic table lacks the real table's columns {missing}")
    m = len(synthetic)
    w = synthetic["weight"].to_numpy(float) if "weight" in synthetic else np.ones(m)
    w = w / w.sum() if m else w
    broken = np.zeros(m, dtype=bool)
    rates = np.zeros(len(constraints))
    for k, c in enumerate(constraints):
        v = c.violated(synthetic)
        rates[k] = float(w[v].sum())
        broken |= v
    return CoherenceReport(constraints, rates, float(w[broken].sum()), len(real), m)


CATEGORICAL_NOTE = (
    "rules among categorical and binary attributes only (numeric attributes enter the other "
    "rules by their public bins)"
)


def canonical_table(table: pd.DataFrame, domain: Domain) -> pd.DataFrame:
    """``table``'s domain columns in one representation, so that a real table (raw values,
    text read from a CSV) and a decoded one compare value by value: a categorical or binary
    value becomes the domain's value it encodes to (recodes applied, a missing category
    missing), a numeric value the label of its public bin. Bins, not values: the release
    carries a numeric attribute only to its bin (a decoded value is a draw inside it), so a
    rule the real values keep inside a bin is not one a release can keep. A ``weight``
    column is kept."""
    columns: dict[str, Any] = {}
    for attr in domain.attributes:
        if attr.name not in table.columns:
            continue
        names: tuple[Hashable, ...]
        if isinstance(attr, Numeric):  # its bins' labels, the last one missing if declared
            names, missing = attr.labels, MISSING_LABEL if attr.missing else None
        else:
            names, missing = attr.values, getattr(attr, "missing", None)
        values = np.empty(len(names), dtype=object)
        values[:] = names  # element-wise: a value may itself be a tuple
        decoded = pd.Series(values[attribute_codes(table[attr.name], attr)], index=table.index)
        columns[attr.name] = decoded if missing is None else decoded.mask(decoded == missing)
    if "weight" in table.columns and "weight" not in domain:
        columns["weight"] = table["weight"]
    return pd.DataFrame(columns, index=table.index)


def coherence_section(
    real: pd.DataFrame, synthetic: pd.DataFrame, domain: Domain, *, limit: int = 15
) -> dict[str, Any]:
    """The coherence of ``synthetic`` against ``real`` as a JSON-ready dict (both tables
    through :func:`canonical_table`; the ``limit`` most violated constraints). NOT PRIVATE:
    the dict carries its note."""
    real_c, synthetic_c = canonical_table(real, domain), canonical_table(synthetic, domain)
    constraints = find_constraints(real_c)
    out = coherence_report(real_c, synthetic_c, constraints=constraints).to_dict(limit=limit)
    numeric = {a.name for a in domain.attributes if isinstance(a, Numeric)}
    among = [c for c in constraints if c.column not in numeric and c.other not in numeric]
    part = coherence_report(real_c, synthetic_c, constraints=among)
    out["categorical"] = {
        "constraints": len(among),
        "incoherent_fraction": part.incoherent,
        "note": CATEGORICAL_NOTE,
    }
    return out
