"""Interpolation within ordinal bins (post-processing of the fitted records).

With ordinal bins (:mod:`dpquery.algorithms.marginal.compress`, ``psi_a``) a round measures
an ordered attribute's dependence on the others over ``B`` contiguous bins only: at
``B = 5`` adult-pgm's ``age`` (85 values) in bins of 8-17 years. Within a bin the records'
values are then placed by the 1-way measurement alone, so the given-value distribution of
the other attributes is flat across the bin. The data's is not: on adult-pgm, making each
ordered attribute independent of the rest within its ``B = 5`` bins (and nothing else)
already puts the 5-way marginals at mean total variation 0.058 from the data's, those holding
``age`` at 0.14 (docs/utility.md, Tuning under add/remove).

An ordered attribute's dependence on the others is assumed to change smoothly with its value:
for a measured binned marginal ``(a, rest)``, the distribution of ``rest``'s cells given a
value ``v`` of ``a`` is taken as the linear interpolation, in ``v``, of the given-bin
distributions at the two nearest bin centres (a bin's centre: its values' mean under the
records' 1-way counts; flat before the first centre and after the last):

    r_c(v) = (1 - t) C(b, c) / C(b) + t C(b + 1, c) / C(b + 1),
    t = (v - mu_b) / (mu_{b+1} - mu_b)   (mu_b, mu_{b+1} the centres around v),
    Y(v, c) = N(v) r_c(v),   then rescaled so that sum_{v in bin b} Y(v, c) = C(b, c),

with ``C`` the records' counts on the binned marginal and ``N`` their 1-way counts of ``a``
(all at the noisy ``n``). ``Y`` is a pseudo-measurement of the marginal with ``a`` at full
resolution, consistent with every binned count. After the final fit, each ordered attribute
cut into bins is first permuted among the records that share its bin (so that nothing but
the measurements places a record within its bin: bins and counts kept), the
pseudo-measurements of every measured binned marginal are added to the fit with scale
``WITHIN_BINS_SCALE`` times their measurement's (they only steer what the measurements leave
free), and the records are fitted again (at most ``WITHIN_BINS_SWEEPS`` sweeps).

The inputs are the records (themselves post-processing), the measurements' marginals, maps
and public scales, and the release's generator: post-processing, no charge, the ledger
unchanged. Not in AIM, whose graphical model, fitted to the same binned measurements, keeps
the within-bin distribution at its maximum-entropy value (McKenna, Sheldon, Miklau 2019):
the flat one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from dpquery.algorithms.marginal.projection import Measurement, fit_records

# The pseudo-measurements' scale, times their binned measurement's (docs/utility.md, Tuning
# under add/remove: 1 and 3 level on adult-pgm, 3 ahead on ACS at epsilon 0.5).
WITHIN_BINS_SCALE = 3.0
# The re-fit's sweeps at most (docs/utility.md, Tuning under add/remove: adult-pgm at epsilon 1,
# seeds 0, 1, every score within 0.0001 of 30 sweeps' in a third of the time).
WITHIN_BINS_SWEEPS = 5
# Interpolate only attributes of more than this many ordered values a bin (adult-pgm's age,
# hours-per-week, fnlwgt, capital-gain and -loss at B = 5; not ACS's AGEP, 20 values, or its
# 11-value PINCP and POVPIP, where bins of 2-4 values already order the records and the
# interpolation was level at epsilon 0.5 and behind at 1: docs/utility.md, Tuning under
# add/remove).
MIN_VALUES_PER_BIN = 4


def permute_within_bins(
    X: np.ndarray, bins: Mapping[int, np.ndarray], rng: np.random.Generator
) -> np.ndarray:
    """``X`` (``(m, g)`` codes, changed in place and returned) with each attribute ``a`` of
    ``bins`` permuted uniformly among the records sharing its bin ``bins[a][x_a]``: every
    record keeps its bin (so every count through ``bins[a]``) and the attribute's counts;
    its value within the bin becomes independent of its other attributes. Attributes in
    increasing order, one permutation of the ``m`` records each."""
    m = X.shape[0]
    for a in sorted(bins):
        key = np.asarray(bins[a], dtype=np.int64)[X[:, a]]
        here = np.argsort(key, kind="stable")  # the records, grouped by bin
        shuffled = rng.permutation(m)
        there = shuffled[np.argsort(key[shuffled], kind="stable")]  # the same groups, shuffled
        X[here, a] = X[there, a]
    return X


def interpolated(
    X: np.ndarray, x: Measurement, j: int, ordered: int, sizes: np.ndarray, n: int,
    scale: float = WITHIN_BINS_SCALE,
) -> Measurement:  # fmt: skip
    """The pseudo-measurement ``Y`` of the module docstring: ``x``'s marginal with its
    ``j``-th attribute ``a`` (cut into bins by ``x``'s map; its first ``ordered`` values
    ordered) at full resolution, the other attributes through ``x``'s maps, from the records
    ``X`` alone, at ``scale`` times ``x``'s scale. The values after the ordered ones (a
    "missing" value, a bin of its own) keep their bin's distribution."""
    m = X.shape[0]
    a = int(x.marginal[j])
    maps = x.value_maps(sizes)
    f = maps[j]
    shape = [int(mp.max()) + 1 for mp in maps]
    k = shape[j]
    binned = np.moveaxis(x.counts(X, sizes).reshape(shape) * (n / m), j, -1)
    outer = binned.shape[:-1]
    C = binned.reshape(-1, k)  # (rest cells, bins)
    N = np.bincount(X[:, a], minlength=int(sizes[a])).astype(np.float64) * (n / m)
    values = np.arange(int(sizes[a]), dtype=np.float64)
    mass = np.bincount(f, weights=N, minlength=k)
    centre = np.bincount(f, weights=N * values, minlength=k) / np.maximum(mass, 1e-12)
    given = C / np.maximum(C.sum(0), 1e-12)  # each bin's distribution of the rest's cells
    last = int(f[:ordered].max()) if ordered > 0 else -1
    r = given[:, f].copy()
    for v in range(ordered):
        b = int(f[v])
        lo, hi = (b - 1, b) if v < centre[b] else (b, b + 1)
        if lo < 0 or hi > last or mass[lo] <= 0 or mass[hi] <= 0:
            continue  # before the first centre, after the last: the bin's own
        t = (v - centre[lo]) / (centre[hi] - centre[lo])
        r[:, v] = (1 - t) * given[:, lo] + t * given[:, hi]
    Y = r * N[None, :]
    onehot = np.zeros((f.size, k))
    onehot[np.arange(f.size), f] = 1.0
    S = Y @ onehot  # each bin's sum, to rescale to the binned counts
    Y = Y * np.where(S > 0, C / np.where(S > 0, S, 1.0), 0.0)[:, f]
    Y = np.moveaxis(Y.reshape(*outer, f.size), -1, j)
    fine = list(maps)
    fine[j] = np.arange(int(sizes[a]), dtype=np.int64)
    return Measurement(x.marginal, Y.ravel(), x.sigma * scale, tuple(fine))


def interpolated_measurements(
    X: np.ndarray, measurements: Sequence[Measurement], bins: Mapping[int, np.ndarray],
    ordered: Mapping[int, int], sizes: np.ndarray, n: int, scale: float = WITHIN_BINS_SCALE,
) -> list[Measurement]:  # fmt: skip
    """:func:`interpolated` for every attribute of ``bins`` in every measurement of more
    than one attribute that saw it through its bin map ``bins[a]``."""
    out = []
    for x in measurements:
        if x.maps is None or len(x.marginal) < 2:
            continue
        for j, a in enumerate(x.marginal):
            if a in bins and np.array_equal(x.maps[j], bins[a]):
                out.append(interpolated(X, x, j, ordered[a], sizes, n, scale))
    return out


def wide_bins(f: np.ndarray, ordered: int) -> bool:
    """Whether an attribute's bin map ``f`` (its first ``ordered`` values ordered) cuts them
    into bins of more than :data:`MIN_VALUES_PER_BIN` values on average."""
    if ordered <= 0:
        return False
    return ordered > MIN_VALUES_PER_BIN * (int(np.asarray(f)[:ordered].max()) + 1)


def interpolate_within_bins(
    X: np.ndarray, measurements: Sequence[Measurement], bins: Sequence[np.ndarray],
    ordered: Mapping[int, int], sizes: np.ndarray, *, n: int, sweeps: int,
    rng: np.random.Generator, scale: float = WITHIN_BINS_SCALE,
) -> tuple[np.ndarray, list[int], int]:  # fmt: skip
    """The module's post-processing of the fitted records ``X`` (changed in place): every
    attribute of ``ordered`` whose bin map ``bins[a]`` cuts it into wide bins is permuted within its
    bins (:func:`permute_within_bins`), then the records are fitted to ``measurements`` and
    their pseudo-measurements (:func:`interpolated_measurements`) by up to ``sweeps``
    sweeps. Only attributes whose bins hold more than :data:`MIN_VALUES_PER_BIN` values on
    average (:func:`wide_bins`, public: the maps and the domain) are interpolated. Returns
    ``X``, the attributes interpolated and the number of pseudo-measurements."""
    cut = {a: np.asarray(bins[a]) for a in sorted(ordered) if wide_bins(bins[a], ordered[a])}
    if not cut:
        return X, [], 0
    permute_within_bins(X, cut, rng)
    pseudo = interpolated_measurements(X, measurements, cut, ordered, sizes, n, scale)
    X, _ = fit_records(X, [*measurements, *pseudo], sizes, n=n, sweeps=sweeps, rng=rng)
    return X, sorted(cut), len(pseudo)


__all__ = [
    "MIN_VALUES_PER_BIN",
    "WITHIN_BINS_SCALE",
    "WITHIN_BINS_SWEEPS",
    "interpolate_within_bins",
    "interpolated",
    "interpolated_measurements",
    "permute_within_bins",
    "wide_bins",
]
