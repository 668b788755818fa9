"""The session's hypothesis behind one interface: Algorithm 1 on the Section 1.2 transformed
queries (:class:`PolynomialLearner`), or the full-domain MW comparator
(:class:`~dpquery.online.fulldomain.FullDomainMW`), which has the same methods.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from dpquery.online.learner import PolynomialMW
from dpquery.online.parameters import Representation
from dpquery.online.transform import OnlineQuery, VariableMap


class Learner(Protocol):
    B: int

    @property
    def updates(self) -> int: ...

    def predict(self, query: OnlineQuery) -> float: ...
    def update(self, query: OnlineQuery, a: float) -> None: ...
    def set_state(self, logw: np.ndarray, updates: int) -> None: ...
    @property
    def state(self) -> np.ndarray: ...
    @property
    def nbytes(self) -> int: ...
    def describe(self) -> str: ...


class PolynomialLearner:
    """Algorithm 1 on the transformed query (Section 1.2): a monotone disjunction ``D`` of the
    variables, with the query's answer ``D`` or ``1 - D``."""

    def __init__(self, variables: VariableMap, rep: Representation) -> None:
        self.variables, self.rep = variables, rep
        self.mw = PolynomialMW(variables.m, rep.t, rep.W, rep.alpha)
        self.B = self.mw.B

    @property
    def updates(self) -> int:
        return self.mw.updates

    def predict(self, query: OnlineQuery) -> float:
        mask, flip = self.variables.mask(query)
        v = self.mw.value(mask)
        return 1.0 - v if flip else v

    def update(self, query: OnlineQuery, a: float) -> None:
        mask, flip = self.variables.mask(query)
        self.mw.update(mask, 1.0 - a if flip else a)

    @property
    def state(self) -> np.ndarray:
        return self.mw.logw

    def set_state(self, logw: np.ndarray, updates: int) -> None:
        self.mw.set_state(logw, updates)

    @property
    def nbytes(self) -> int:
        return self.mw.nbytes

    def describe(self) -> str:
        return (
            f"polynomial MW (Algorithm 1): {self.variables.m} variables "
            f"(literals={self.variables.literals}), t={self.rep.t}, W={self.rep.W:.6g}, "
            f"N={self.rep.N:,}, eta={self.mw.eta:.3g}, B={self.B:,}"
        )
