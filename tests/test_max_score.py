"""Rounds that select by the largest cell error (``max_share``, ``max_final`` of
adaptive-projection; MWEM's score, weighted as AIM's): the bias term and the round rule by
hand, the score by hand, its sensitivity on random neighbours of several sizes (``n - 1``,
``n + 1`` and replaced: at most ``w_r`` either way), the ledger of a run (every selection
charged ``epsilon_t^2 / 8`` before its draw, the plan unchanged, the total within the
budget), a refused charge drawing nothing, off by default (the default release unchanged
record for record under either relation) and a bad share refused by name.

Randomised checks are seeded, so each run is deterministic (false-failure rate 0).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from tests.test_marginals import assert_refusal_draws_nothing
from tests.test_unlinked import _data

from dpquery.algorithms.marginal import adaptive_projection as am
from dpquery.algorithms.marginal.adaptive_projection import (
    AdaptiveProjection,
    candidates_of,
    max_noise,
    max_round,
    quality_scores,
    select_rho,
)
from dpquery.errors import DPQueryError
from dpquery.privacy.neighbours import ADD_REMOVE, NOISY_N_SHARE, REPLACE_ONE
from dpquery.queries.marginals import marginal_counts

SIZES = np.array([3, 4, 2, 5])
SHAPES = (1, 2, 10, 100, 1000)


def test_the_expected_largest_noise_bound_by_hand() -> None:
    """``sigma sqrt(2 ln(2 K))``: sigma 2, 4 cells: 2 sqrt(2 ln 8) = 2 x 2.03933 = 4.07866;
    one cell, sigma 1: sqrt(2 ln 2) = 1.17741 (above E|Z| = 0.79788, as a bound must be)."""
    assert max_noise(2.0, 4) == pytest.approx(4.07866, abs=1e-5)
    assert max_noise(1.0, 1) == pytest.approx(1.17741, abs=1e-5)
    assert max_noise(1.0, 1) > math.sqrt(2 / math.pi)


def test_the_rounds_that_select_by_the_max_by_hand() -> None:
    """``floor(t s)`` steps up: s = 1/4 at rounds 4, 8, 12; s = 0.4 at 3, 5, 8, 10; 0 never;
    1 always."""
    assert [t for t in range(1, 13) if max_round(t, 0.25)] == [4, 8, 12]
    assert [t for t in range(1, 11) if max_round(t, 0.4)] == [3, 5, 8, 10]
    assert not any(max_round(t, 0.0) for t in range(1, 50))
    assert all(max_round(t, 1.0) for t in range(1, 50))


def test_the_max_score_by_hand() -> None:
    """One attribute of 2 values; data counts (5, 3); records 2 x value 0, 2 x value 1 scaled
    to n = 8: (4, 4); the errors (1, 1): L1 2, max 1. sigma 0.5, w 3: the max score is
    3 (1 - 0.5 sqrt(2 ln 4)) = 3 (1 - 0.832555) = 0.502336; AIM's 3 (2 - sqrt(2/pi) 0.5 x 2)
    = 3 (2 - 0.797885) = 3.606346."""
    X = np.array([[0], [0], [1], [1]])
    counts = [np.array([5.0, 3.0])]
    args = ([(0,)], np.array([3.0]), counts, X, np.array([2]))
    top = quality_scores(*args, n=8, sigma=0.5, score="max")
    l1 = quality_scores(*args, n=8, sigma=0.5)
    assert top[0] == pytest.approx(0.502336, abs=1e-6)
    assert l1[0] == pytest.approx(3.606346, abs=1e-6)


def _table(n: int, rng: np.random.Generator) -> np.ndarray:
    return np.column_stack([rng.integers(0, s, size=n) for s in SIZES]).astype(np.int64)


@pytest.mark.parametrize("n", SHAPES)
def test_the_max_score_moves_by_at_most_w_r_on_random_neighbours(n: int) -> None:
    """A record added or removed moves one count of ``M_r(D)`` by 1 (the estimate is scaled
    to the same noisy ``n`` on both sides), so the largest absolute error moves by at most 1
    and the score by at most ``w_r``; a record replaced moves two counts by 1 each, and the
    largest error still by at most 1. Checked on 20 random tables of each size and their
    three neighbours (``n + 1``, ``n - 1``, replaced); the bound is reached (a change of
    exactly ``w_r``) somewhere, so the test can fail."""
    rng = np.random.default_rng(200 + n)
    table = candidates_of([(0, 1, 2), (1, 3), (0, 2, 3)])
    candidates = list(table)
    weights = np.array([table[r] for r in candidates])
    reached = False
    for _ in range(20):
        D = _table(n, rng)
        X = _table(50, rng)
        n_hat = max(1, n + int(rng.integers(-5, 6)))
        sigma = float(rng.uniform(0.5, 5))

        def scores(data: np.ndarray, X: np.ndarray, n_hat: int, sigma: float) -> np.ndarray:
            counts = [marginal_counts(data, SIZES, r) for r in candidates]
            return quality_scores(candidates, weights, counts, X, SIZES, n=n_hat, sigma=sigma,
                                  score="max")  # fmt: skip

        base = scores(D, X, n_hat, sigma)
        added = np.vstack([D, _table(1, rng)])
        removed = np.delete(D, rng.integers(len(D)), axis=0)
        replaced = D.copy()
        replaced[rng.integers(len(D))] = _table(1, rng)[0]
        for E in (added, removed, replaced):
            change = np.abs(scores(E, X, n_hat, sigma) - base)
            assert np.all(change <= weights + 1e-9)
            reached |= bool(np.any(np.isclose(change, weights)))
    assert reached


def _spied_fit(monkeypatch: pytest.MonkeyPatch, **kw):
    """The fit, the scores each selection used and the ledger."""
    data, w = _data()
    seen: list[str] = []
    real = am.quality_scores

    def spy(*args, score="l1", **more):
        seen.append(score)
        return real(*args, score=score, **more)

    monkeypatch.setattr(am, "quality_scores", spy)
    model = AdaptiveProjection(epsilon=1.0, seed=3, **kw)
    release = model.fit(data, w)
    return release, seen, model.ledger_


def test_a_run_charges_each_max_selection_before_its_draw_at_epsilon_t_squared_over_8(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With every round selecting by the max: each round's selection is charged
    ``epsilon_t^2 / 8`` (the round's epsilon, as recorded), the plan is the L1 run's (the same
    first-round epsilon_0, hand-checked against the plan's formula), and the ledger's total is
    within the plan's rho; with ``max_share = 1/4`` rounds 4, 8, ... and (``max_final``) the
    last round select by the max, the others by AIM's score."""
    release, seen, ledger = _spied_fit(monkeypatch, max_share=1.0)
    p = release.parameters
    rounds = [r for r in release.rounds if isinstance(r.get("round"), int)]
    assert rounds and all(r["score"] == "max" for r in rounds) and set(seen) == {"max"}
    selections = [e for e in ledger.entries if e.charge.mechanism == am.SELECT]
    assert len(selections) == len(rounds)
    for entry, r in zip(selections, rounds, strict=True):
        assert entry.charge.cost.epsilon == r["epsilon"] and entry.charge.cost.bounded_range
        assert select_rho(entry.charge.cost.epsilon) == pytest.approx(r["epsilon"] ** 2 / 8)
    # the plan's epsilon_0 = sqrt(8 (1 - alpha) rho' / T), rho' what the noisy n leaves
    assert (
        rounds[0]["epsilon"]
        == p["epsilon0"]
        == pytest.approx(math.sqrt(8 * (1 - p["alpha"]) * p["rho"] * (1 - NOISY_N_SHARE) / p["T"]))
    )
    plain = AdaptiveProjection(epsilon=1.0, seed=3).fit(*_data())
    assert {k: plain.parameters[k] for k in ("T", "epsilon0", "sigma0", "rho")} == {
        k: p[k] for k in ("T", "epsilon0", "sigma0", "rho")
    }
    assert ledger.accountant.rho(ledger.totals) <= release.parameters["rho"] * (1 + 1e-9)
    some, seen, _ = _spied_fit(monkeypatch, max_share=0.25, max_final=True)
    rounds = [r for r in some.rounds if isinstance(r.get("round"), int)]
    want = ["max" if r["round"] % 4 == 0 or r is rounds[-1] else "l1" for r in rounds]
    assert [r.get("score", "l1") for r in rounds] == want
    assert some.parameters["max_score"] == {"share": 0.25, "final": True}


@pytest.mark.parametrize("fail_at", [1, 4, 7])
def test_a_refused_charge_draws_nothing_with_max_rounds(fail_at) -> None:
    """A ledger refusing its k-th charge leaves the generator where it was when that charge
    was asked for: every max selection is charged before it draws."""
    data, w = _data()
    assert_refusal_draws_nothing(data, w, fail_at, max_share=1.0, max_final=True)


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
def test_off_by_default_and_the_default_release_unchanged(neighbours) -> None:
    data, w = _data()
    kw = {"epsilon": 1.0, "seed": 5, "neighbours": neighbours}
    default = AdaptiveProjection(**kw).fit(data, w)
    off = AdaptiveProjection(max_share=0.0, max_final=False, **kw).fit(data, w)
    assert np.array_equal(default.records.rows, off.records.rows)
    assert "max_score" not in default.parameters
    assert all("score" not in r for r in default.rounds)
    on = AdaptiveProjection(max_share=0.5, **kw).fit(data, w)
    assert any(r.get("score") == "max" for r in on.rounds)


@pytest.mark.parametrize("bad", [-0.1, 1.5, "half"])
def test_a_bad_max_share_is_refused_by_name(bad) -> None:
    data, w = _data()
    with pytest.raises(DPQueryError, match="max_share"):
        AdaptiveProjection(epsilon=1.0, max_share=bad).fit(data, w)


def test_a_coarser_max_round_is_charged_at_its_own_sigma(monkeypatch: pytest.MonkeyPatch) -> None:
    """``max_scale = 2``: a max round (not the last) measures at twice the round's sigma, so
    its measurement costs a quarter, ``1 / (2 (2 sigma)^2)`` under add/remove (sensitivity 1,
    Bun and Steinke 2016, Proposition 1.6); a max round never anneals, so the L1 round after
    it is back at the round's sigma, half the max round's. Every round's measurement is
    charged ``1 / (2 sigma_t^2)`` at the sigma it records."""
    release, _, ledger = _spied_fit(monkeypatch, max_share=0.5, max_scale=2.0)
    rounds = [r for r in release.rounds if isinstance(r.get("round"), int)]
    measures = [e for e in ledger.entries if e.charge.mechanism == am.MEASURE][-len(rounds) :]
    for entry, r in zip(measures, rounds, strict=True):
        assert entry.charge.cost.rho == pytest.approx(1 / (2 * r["sigma"] ** 2))
    pairs = [(a, b) for a, b in itertools.pairwise(rounds) if a.get("score") == "max"]
    assert pairs
    for a, b in pairs:
        assert b.get("score", "l1") == "l1" and "annealed" not in a
        assert b["sigma"] == pytest.approx(a["sigma"] / 2)


def test_a_bad_max_scale_is_refused_by_name() -> None:
    data, w = _data()
    with pytest.raises(DPQueryError, match="max_scale"):
        AdaptiveProjection(epsilon=1.0, max_share=0.5, max_scale=0.0).fit(data, w)
