"""dpquery: differentially private query release on high-dimensional data.

``synthesize(df, domain, epsilon=1)`` returns a private synthetic DataFrame and its
:class:`Release`; :class:`DPSynthesizer` is the same as a scikit-learn style estimator;
``synthesize_items(df, item_list=... | learn_items=True, epsilon=1)`` does it for a raw user x
item table. The
estimators (``DualQuery``, ``DQRS``, ``FEM``, ``SepFEM``, ``MWEM``, ``Reweighted``) fit a
:class:`Release` from encoded data and a workload; :class:`Domain`, :func:`encode` and
:func:`decode` move between tables and bits; :func:`load` reads a built-in dataset; every
release's privacy is accounted on a :class:`Ledger`. See ``docs/architecture.md``.
"""

from __future__ import annotations

__version__ = "0.1.0"

from dpquery.algorithms import (
    DQRS,
    FEM,
    MWEM,
    DualQuery,
    Release,
    Reweighted,
    SepFEM,
    Synthesizer,
)
from dpquery.api import DPSynthesizer, synthesize, synthesize_items
from dpquery.data.decode import decode
from dpquery.data.domain import Domain
from dpquery.data.encode import encode
from dpquery.datasets import load
from dpquery.privacy import Budget, Ledger

__all__ = [
    "DQRS",
    "FEM",
    "MWEM",
    "Budget",
    "DPSynthesizer",
    "Domain",
    "DualQuery",
    "Ledger",
    "Release",
    "Reweighted",
    "SepFEM",
    "Synthesizer",
    "__version__",
    "decode",
    "encode",
    "load",
    "synthesize",
    "synthesize_items",
]
