"""Layer 5: the estimator protocol (:mod:`.synthesizer`), the registry a front end reads
(:mod:`.registry`) and the baselines every release is compared with, at the top level; the
families of algorithms in subpackages: the query-release game (:mod:`.game`: DualQuery, DQRS,
FEM, sepFEM, MWEM) and adaptive marginal measurement (:mod:`.marginal`)."""

from dpquery.algorithms.baselines import (
    BaselineResult,
    GaussianNoise,
    LaplaceNoise,
    UniformDistribution,
    ZerosDataset,
)
from dpquery.algorithms.game.dqrs import DQRS
from dpquery.algorithms.game.dualquery import DualQuery
from dpquery.algorithms.game.fem import FEM, SepFEM
from dpquery.algorithms.game.mwem import MWEM
from dpquery.algorithms.game.reweight import Reweighted
from dpquery.algorithms.release import Release
from dpquery.algorithms.synthesizer import Synthesizer
from dpquery.algorithms.uniform import UniformRecords

__all__ = [
    "DQRS",
    "FEM",
    "MWEM",
    "BaselineResult",
    "DualQuery",
    "GaussianNoise",
    "LaplaceNoise",
    "Release",
    "Reweighted",
    "SepFEM",
    "Synthesizer",
    "UniformDistribution",
    "UniformRecords",
    "ZerosDataset",
]
