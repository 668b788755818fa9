"""Layer 5: the query-release game loops, and the baselines every release is compared with."""

from dpquery.algorithms.baselines import (
    BaselineResult,
    GaussianNoise,
    LaplaceNoise,
    UniformDistribution,
    ZerosDataset,
)

__all__ = ["BaselineResult", "GaussianNoise", "LaplaceNoise", "UniformDistribution", "ZerosDataset"]
