"""The compact summary of Remark 2: a sparse polynomial sampled from the hypothesis.

``p_bar`` is a probability vector over the ``2N + 1`` indices; draw ``s`` indices from it and
let ``p_hat`` be their empirical distribution. For any query, ``W <p_hat, y_bar>`` is an
average of ``s`` independent terms in ``[-W, W]`` with mean ``W <p_bar, y_bar>``, so by
Hoeffding's inequality and a union bound over the ``|Y| = binom(m, <= k)`` queries,

    P(max_y |W <p_hat - p_bar, y_bar>| > tau) <= 2 |Y| exp(-s tau^2 / (2 W^2)),

i.e. ``s = ceil(2 W^2 ln(2 |Y| / beta) / tau^2)`` samples add at most ``tau`` to every answer
with probability ``1 - beta`` (Remark 2 cites Bruck and Smolensky 1992 for this sampling). The
summary is post-processing of the (already private) hypothesis: answering from it costs no
privacy. Remark 2 builds it after a *maximal* update sequence (every ``k``-way query asked
until no more updates happen); ``converged`` records whether the session reached ``B``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpquery.data.domain import Domain
from dpquery.errors import DPQueryError
from dpquery.io import atomic_write_text
from dpquery.online.learner import PolynomialMW
from dpquery.online.parameters import Representation
from dpquery.online.representation import evaluate_coefficients, n_monomials, words_for
from dpquery.online.transform import OnlineQuery, VariableMap, parse_query
from dpquery.rng import SeedLike, make_rng

FORMAT = "dpquery-online-summary/1"
MAX_SAMPLES = 10**8


def hoeffding_samples(W: float, n_queries: int, tau: float, beta: float) -> int:
    """``s = ceil(2 W^2 ln(2 |Y| / beta) / tau^2)`` (module docstring)."""
    return math.ceil(2 * W * W * math.log(2 * n_queries / beta) / (tau * tau))


@dataclass(frozen=True)
class CompactSummary:
    """A sparse polynomial ``sum_S c_S chi_S`` over the session's variables."""

    d: int
    literals: str
    k: int
    W: float
    samples: int
    tau: float
    beta: float
    converged: bool
    masks: np.ndarray  # (terms, words) uint64
    coefficients: np.ndarray  # float64
    domain: Domain | None = None

    @property
    def variables(self) -> VariableMap:
        return VariableMap(self.d, self.literals)  # type: ignore[arg-type]

    def answer(self, query: OnlineQuery | Mapping[str, Any]) -> float:
        """The summary's answer (clipped to ``[0, 1]``); no data, no privacy cost."""
        q = query if isinstance(query, OnlineQuery) else parse_query(query, self.domain, self.d)
        if len(q.literals) > self.k:
            raise DPQueryError(
                f"the query has {len(q.literals)} literals; the summary is for k <= {self.k}"
            )
        mask, flip = self.variables.mask(q)
        v = float(evaluate_coefficients(self.coefficients, self.masks, mask))
        return min(1.0, max(0.0, 1.0 - v if flip else v))

    def to_dict(self) -> dict[str, Any]:
        m = self.variables.m
        terms = [
            [[v for v in range(m) if (int(row[v // 64]) >> (v % 64)) & 1], float(c)]
            for row, c in zip(self.masks, self.coefficients, strict=True)
        ]
        return {
            "format": FORMAT, "d": self.d, "literals": self.literals, "k": self.k, "W": self.W,
            "samples": self.samples, "tau": self.tau, "beta": self.beta,
            "converged": self.converged,
            "domain": None if self.domain is None else self.domain.to_dict(), "terms": terms,
        }  # fmt: skip

    def save(self, path: str | Path) -> None:
        atomic_write_text(path, json.dumps(self.to_dict()) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> CompactSummary:
        try:
            obj = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise DPQueryError(f"{path}: not a summary file ({exc})") from None
        if not isinstance(obj, dict) or obj.get("format") != FORMAT:
            raise DPQueryError(f"{path}: not a {FORMAT} file")
        vm = VariableMap(int(obj["d"]), obj["literals"])
        masks = np.zeros((len(obj["terms"]), words_for(vm.m)), dtype=np.uint64)
        for i, (mono, _) in enumerate(obj["terms"]):
            for v in mono:
                masks[i, v // 64] |= np.uint64(1) << np.uint64(v % 64)
        coefs = np.array([c for _, c in obj["terms"]], dtype=np.float64)
        domain = None if obj["domain"] is None else Domain.from_dict(obj["domain"])
        return cls(
            vm.d, vm.literals, int(obj["k"]), float(obj["W"]), int(obj["samples"]),
            float(obj["tau"]), float(obj["beta"]), bool(obj["converged"]), masks, coefs, domain,
        )  # fmt: skip


def sample_summary(
    learner: PolynomialMW,
    rep: Representation,
    variables: VariableMap,
    k: int,
    alpha: float,
    converged: bool,
    domain: Domain | None,
    *,
    tau: float | None = None,
    beta: float = 0.05,
    samples: int | None = None,
    seed: SeedLike = None,
) -> CompactSummary:
    """Sample the Remark 2 summary of the hypothesis ``learner`` (over ``variables``, for
    queries of width ``<= k``): ``samples`` draws (default: :func:`hoeffding_samples` for
    ``tau``, default ``alpha/4``). ``seed`` seeds the sampling only, which is post-processing
    of the hypothesis (no privacy cost)."""
    m = variables.m
    n_q = n_monomials(m, k)
    if samples is None:
        tau = alpha / 4 if tau is None else tau
        samples = hoeffding_samples(rep.W, n_q, tau, beta)
        if samples > MAX_SAMPLES:
            raise DPQueryError(
                f"tau={tau:g} needs s={samples:,} samples (W={rep.W:.4g}), more than "
                f"{MAX_SAMPLES:,}; pass samples= (the guarantee then weakens) or a larger tau"
            )
    elif samples < 1:
        raise DPQueryError(f"samples must be >= 1, got {samples}")
    else:
        tau = rep.W * math.sqrt(2 * math.log(2 * n_q / beta) / samples)
    counts = make_rng(seed).multinomial(samples, learner.pbar / learner.pbar.sum())
    n = learner.N
    coef = rep.W * (counts[1 : n + 1] - counts[n + 1 :]) / samples
    keep = np.flatnonzero(coef)
    return CompactSummary(
        variables.d, variables.literals, k, rep.W, int(samples), float(tau), beta, converged,
        learner.masks[keep].copy(), coef[keep], domain,
    )  # fmt: skip
