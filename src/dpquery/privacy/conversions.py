"""From ``rho``-zCDP to ``(epsilon, delta)``-DP, and back.

Two conversions, both proved, so the tighter may always be taken:

* standard (Oracle-efficient, Lemma 2; Bun and Steinke 2016, Proposition 1.3):
  ``epsilon = rho + 2 sqrt(rho ln(1/delta))``;
* Canonne, Kamath and Steinke 2020 ("The Discrete Gaussian for Differential Privacy",
  Corollary 13): for every ``alpha > 1``, ``rho``-zCDP implies ``(epsilon, delta)``-DP with

      delta = exp((alpha - 1)(alpha rho - epsilon)) / (alpha - 1) * (1 - 1/alpha)^alpha.

Any ``alpha`` gives a valid pair, so an inexact optimisation over ``alpha`` can only be loose,
never wrong. Minimising ``log delta`` over ``alpha`` (its derivative
``(2 alpha - 1) rho - epsilon + ln(1 - 1/alpha)`` increases in ``alpha``) pairs each
``alpha`` with ``epsilon(alpha) = (2 alpha - 1) rho + ln(1 - 1/alpha)`` and, substituting,
``ln delta(alpha) = -rho (alpha - 1)^2 - ln alpha``. So ``epsilon`` for a given ``delta`` is
``epsilon(alpha*)`` where ``rho (alpha* - 1)^2 + ln alpha* = ln(1/delta)``: a monotone root,
found by bisection on the side where ``delta(alpha) <= delta``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

from dpquery.privacy import _validate
from dpquery.privacy.errors import PrivacyParameterError

Conversion = Literal["cks", "standard"]
CONVERSIONS: tuple[Conversion, ...] = ("cks", "standard")


def _bisect_last_true(pred: Callable[[float], bool], lo: float, hi: float) -> float:
    """Given pred(lo) and not pred(hi) (monotone), return the largest float found with pred."""
    for _ in range(2000):
        mid = lo + (hi - lo) / 2
        if mid <= lo or mid >= hi:
            break
        if pred(mid):
            lo = mid
        else:
            hi = mid
    return lo


def zcdp_epsilon_standard(rho: float, delta: float) -> float:
    """``rho + 2 sqrt(rho ln(1/delta))`` (Oracle-efficient, Lemma 2)."""
    r = _validate.nonnegative("rho", rho)
    d = _validate.open_unit("delta", delta)
    return r + 2 * math.sqrt(r * math.log(1 / d))


def zcdp_delta_standard(rho: float, epsilon: float) -> float:
    """``exp(-(epsilon - rho)^2 / (4 rho))`` for ``epsilon >= rho`` (Bun and Steinke 2016,
    Proposition 1.3; the inverse of :func:`zcdp_epsilon_standard`)."""
    r = _validate.nonnegative("rho", rho)
    e = _validate.nonnegative("epsilon", epsilon)
    if r == 0:
        return 0.0
    if e <= r:
        return 1.0
    return min(1.0, math.exp(-((e - r) ** 2) / (4 * r)))


def _cks_log_delta(alpha: float, rho: float, epsilon: float) -> float:
    # log of Corollary 13's bound at this alpha; valid for any alpha > 1.
    return (
        (alpha - 1) * (alpha * rho - epsilon) + alpha * math.log1p(-1 / alpha) - math.log(alpha - 1)
    )


def zcdp_delta_cks(rho: float, epsilon: float) -> float:
    """Smallest ``delta`` with ``rho``-zCDP => ``(epsilon, delta)``-DP by Canonne, Kamath and
    Steinke 2020, Corollary 13 (never larger than :func:`zcdp_delta_standard`)."""
    r = _validate.nonnegative("rho", rho)
    e = _validate.nonnegative("epsilon", epsilon)
    if r == 0:
        return 0.0

    # Optimal x = alpha - 1 solves (2x + 1) rho - ln(1 + 1/x) = epsilon (increasing in x).
    def below(x: float) -> bool:
        return (2 * x + 1) * r - math.log1p(1 / x) < e

    lo, hi = 1e-300, 1.0
    while below(hi):
        hi *= 2
    x = _bisect_last_true(below, lo, hi)
    best = min(_cks_log_delta(1 + x, r, e), _cks_log_delta(1 + hi, r, e))
    return min(1.0, math.exp(best), zcdp_delta_standard(r, e))


def zcdp_epsilon_cks(rho: float, delta: float) -> float:
    """Smallest ``epsilon`` with ``rho``-zCDP => ``(epsilon, delta)``-DP by Canonne, Kamath and
    Steinke 2020, Corollary 13 (see module docstring; never larger than the standard bound)."""
    r = _validate.nonnegative("rho", rho)
    d = _validate.open_unit("delta", delta)
    if r == 0:
        return 0.0
    log_inv_delta = -math.log(d)

    # x = alpha - 1; h(x) = rho x^2 + ln(1 + x) increases from 0; we need h(x) >= ln(1/delta)
    # so that delta(alpha) <= delta. Keep the bisection's upper end, where this holds.
    def short(x: float) -> bool:
        return r * x * x + math.log1p(x) < log_inv_delta

    hi = min(math.sqrt(log_inv_delta / r), math.expm1(log_inv_delta))
    while short(hi):  # guard against rounding in the bracket
        hi *= 2
    lo = _bisect_last_true(short, 0.0, hi)
    x = hi if lo == 0.0 else math.nextafter(lo, math.inf)
    while short(x):
        x = math.nextafter(x, math.inf)
    eps = (2 * x + 1) * r - math.log1p(1 / x)  # ln(1 - 1/alpha), accurate for large x
    return min(max(eps, 0.0), zcdp_epsilon_standard(r, d))


def zcdp_to_epsilon(rho: float, delta: float, conversion: Conversion = "cks") -> float:
    """``epsilon`` at ``delta`` for ``rho``-zCDP, by the named conversion."""
    if conversion == "cks":
        return zcdp_epsilon_cks(rho, delta)
    if conversion == "standard":
        return zcdp_epsilon_standard(rho, delta)
    raise PrivacyParameterError(f"conversion must be one of {CONVERSIONS}; got {conversion!r}")


def zcdp_rho_for(epsilon: float, delta: float, conversion: Conversion = "cks") -> float:
    """Largest ``rho`` whose conversion to ``(epsilon', delta)`` has ``epsilon' <= epsilon``.

    For the standard conversion this is ``(sqrt(ln(1/delta) + epsilon) - sqrt(ln(1/delta)))^2``
    (then nudged down until it converts within ``epsilon``); for CKS it is found by bisection.
    """
    e = _validate.positive("epsilon", epsilon)
    d = _validate.open_unit("delta", delta)

    def fits(r: float) -> bool:
        return zcdp_to_epsilon(r, d, conversion) <= e

    if conversion == "standard":
        log_inv = math.log(1 / d)
        r = (math.sqrt(log_inv + e) - math.sqrt(log_inv)) ** 2
        while r > 0 and not fits(r):
            r = math.nextafter(r, 0.0)
        return r
    hi = max(e, 1e-300)
    while fits(hi):
        hi *= 2
    return _bisect_last_true(fits, 0.0, hi)


def replace_one_rho(rho: float, selection_share: float = 0.0) -> float:
    """The zCDP ``rho`` under replace-one of a run accounted as ``rho``-zCDP under add/remove.

    For comparing with mechanisms that account under add/remove one record (AIM, McKenna et
    al. 2022, Section 3: marginals measured with L2 sensitivity 1). Replacing one record is
    removing it and adding another:

    * a Gaussian count vector moves in two cells, L2 sensitivity ``sqrt(2)`` instead of 1, so
      its ``Delta^2 / (2 sigma^2)``-zCDP (Bun and Steinke 2016, Proposition 1.6) doubles;
    * an exponential mechanism whose score moves by at most ``Delta`` under add/remove moves
      by at most ``2 Delta``: its ``epsilon`` doubles and its ``epsilon^2 / 8``-zCDP (Cesar
      and Rogers 2021, bounded range) quadruples.

    With ``selection_share`` the fraction of ``rho`` spent on selections (AIM's ``1 - alpha``
    = 0.1 at most), the replace-one ``rho`` is ``2 (1 - s) rho + 4 s rho``: ``2 rho`` when the
    selections are left out (a lower bound on what such a run guarantees under replace-one),
    ``2.2 rho`` for AIM's share. zCDP composes by addition (Bun and Steinke 2016, Lemma 2.3).
    """
    r = _validate.nonnegative("rho", rho)
    if not 0.0 <= selection_share <= 1.0:
        raise PrivacyParameterError(
            f"selection_share must be in [0, 1] (a fraction of rho), got {selection_share!r}"
        )
    return 2.0 * (1.0 - selection_share) * r + 4.0 * selection_share * r
