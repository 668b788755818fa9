"""The item universe of a raw user x item table learned privately (``--learn-items``,
``dpquery.pipeline.universe``), and the raw table in the Python API
(``dpquery.synthesize_items``)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpquery
from cli_process import dpquery_cli
from dpquery import pipeline
from dpquery.data.raw_items import frame_lines, read_item_list, read_raw_lines
from dpquery.errors import DPQueryError
from dpquery.pipeline.universe import (
    SELECTION,
    UNIVERSE_STAGE,
    bounded_counts,
    learn_universe,
    universe_plan,
    universe_sensitivity,
)
from dpquery.privacy.conversions import zcdp_rho_for
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE
from dpquery.privacy.partition_selection import discrete_gaussian_tail, partition_threshold

HEAD = [f"m{j}" for j in range(6)]  # held by many users
RARE = "only-one-user"  # held by a single user: never released


def _table(n: int, seed: int) -> pd.DataFrame:
    """``n`` users, each holding 1-4 of the head items and, now and then, one of 40 tail
    items; user 0 also holds :data:`RARE`. A rating column besides (not read)."""
    rng = np.random.default_rng(seed)
    rows = [("u0", RARE)]
    for u in range(n):
        k = int(rng.integers(1, 5))
        rows += [(f"u{u}", HEAD[j]) for j in rng.choice(len(HEAD), size=k, replace=False)]
        if rng.random() < 0.2:
            rows.append((f"u{u}", f"t{int(rng.integers(40))}"))
    frame = pd.DataFrame(rows, columns=["userId", "movieId"])
    frame["rating"] = rng.integers(1, 6, len(frame))
    return frame


@pytest.fixture
def raw(tmp_path):
    table = _table(3000, seed=1)
    table.to_csv(tmp_path / "ratings.csv", index=False)
    return tmp_path, table


# -- accounting, by hand ---------------------------------------------------------------------
@pytest.mark.parametrize(("relation", "l2"), [(ADD_REMOVE, math.sqrt(8)), (REPLACE_ONE, 4.0)])
def test_plan_by_hand(relation, l2):
    """epsilon 1, delta 1e-6, share 0.3, s = 8: the ledger holds (1, 5e-7), rho =
    zcdp_rho_for(1, 5e-7); the selection's tail (5e-7) / (1 + e), an eighth of it per id;
    sigma^2 >= s / (2 rho) (add/remove) or 2 s / (2 rho) (replace-one); tau the smallest
    integer whose discrete Gaussian tail is within the per-id share."""
    plan = universe_plan({"epsilon": 1.0, "delta": 1e-6}, 5000, 0.3, 8, relation)
    rho = zcdp_rho_for(1.0, 5e-7)
    assert plan.budget.rho == pytest.approx(rho)
    assert plan.rho == pytest.approx(0.3 * rho)
    assert plan.budget.release_rho == pytest.approx(0.7 * rho, rel=1e-8)
    assert universe_sensitivity(8, relation) == pytest.approx(l2)
    assert plan.sensitivity == pytest.approx(l2)
    assert plan.sigma2 == pytest.approx(l2**2 / (2 * 0.3 * rho), rel=1e-6)
    tail = 5e-7 / (1 + math.e)
    assert plan.delta_tail == pytest.approx(tail, rel=1e-9)
    assert plan.key_tail == pytest.approx(tail / 8, rel=1e-9)
    assert plan.delta_tail <= plan.budget.delta_tail  # never above it, even by a rounding
    # the threshold: within the per-id tail, one less is not
    assert discrete_gaussian_tail(plan.tau, plan.sigma2) <= plan.key_tail
    assert discrete_gaussian_tail(plan.tau - 1, plan.sigma2) > plan.key_tail
    # the whole run: ledger delta plus (1 + e^eps) times the selection's tail, within delta
    assert 5e-7 + (1 + math.e) * plan.delta_tail <= 1e-6 * (1 + 1e-12)
    # at this sigma (about 54 under add/remove) tau is about sigma * sqrt(2 ln(1 / tail))
    gauss = math.sqrt(plan.sigma2) * math.sqrt(2 * math.log(1 / plan.key_tail))
    assert 0.8 * gauss < plan.tau < 1.05 * gauss


# -- the contribution bound ------------------------------------------------------------------
def test_each_user_contributes_at_most_s_distinct_items():
    users = ["a"] * 6 + ["b"] * 3 + ["a"]
    table = pd.DataFrame({"u": users, "i": list("pqrstu") + list("pqp") + ["p"]})
    lines = frame_lines(table)
    full = bounded_counts(lines, 10, np.random.default_rng(0))  # no cut: distinct users
    assert full == {"p": 2, "q": 2, "r": 1, "s": 1, "t": 1, "u": 1}
    for seed in range(20):
        cut = bounded_counts(lines, 2, np.random.default_rng(seed))
        assert sum(cut.values()) == 4  # a: 2 of its 6 distinct items, b: 2 of its 2
        assert all(cut.get(k, 0) <= v for k, v in full.items())


def test_the_cut_is_a_uniform_subset():
    """A user of 4 items cut to 2 keeps each with probability 1/2: over 4,000 seeded draws
    each item's count is within 5 binomial sds of 2,000 (false-failure rate below 1e-5)."""
    lines = frame_lines(pd.DataFrame({"u": ["a"] * 4, "i": list("wxyz")}))
    kept = dict.fromkeys("wxyz", 0)
    rng = np.random.default_rng(7)
    for _ in range(4000):
        for k, v in bounded_counts(lines, 2, rng).items():
            kept[k] += v
    assert all(abs(v - 2000) < 5 * math.sqrt(4000 * 0.25) for v in kept.values())


def test_the_cuts_of_two_users_are_independent():
    """Two users of the same 4 items, each cut to 2 by the keyed hash of the (user, item)
    texts: over 4,000 keys they keep the same pair with probability 1/6 (independent
    uniform 2-subsets of 4), not 1 (a hash of the item alone): the count is within 5
    binomial sds of 4000 / 6 (false-failure rate below 1e-5). And a user's cut does not
    depend on the order of its lines or on the other users' lines."""
    lines = frame_lines(pd.DataFrame({"u": ["a"] * 4 + ["b"] * 4, "i": list("wxyzwxyz")}))
    rng = np.random.default_rng(8)
    same = 0
    for _ in range(4000):
        key = rng.bytes(8).hex()
        kept = {u: frozenset(k for k, v in frame_lines(pd.DataFrame(
            {"u": [u] * 4, "i": list("zyxw")})).cut_counts(2, key).items() if v)
            for u in "ab"}  # fmt: skip
        same += kept["a"] == kept["b"]
        assert lines.cut_counts(2, key) == {
            k: (k in kept["a"]) + (k in kept["b"]) for k in "wxyz" if k in kept["a"] | kept["b"]
        }
    assert abs(same - 4000 / 6) < 5 * math.sqrt(4000 * (1 / 6) * (5 / 6))


def test_neighbouring_tables_move_at_most_s_counts_by_one(raw):
    """n and n + 1 users: with s at least every record's length the counts differ exactly
    by the added user's items (L2 at most sqrt(s)); with a cut, by at most s items' 1 each
    against the same cut of the others (the sensitivity of the plan)."""
    _, table = raw
    new = pd.DataFrame({"userId": ["new"] * 3, "movieId": ["m0", "m1", "x"], "rating": [1, 2, 3]})
    added = pd.concat([table, new])
    small, large = frame_lines(table), frame_lines(added)
    a = bounded_counts(small, 64, np.random.default_rng(0))
    b = bounded_counts(large, 64, np.random.default_rng(0))
    diff = {k: b.get(k, 0) - a.get(k, 0) for k in set(a) | set(b)}
    assert {k: v for k, v in diff.items() if v} == {"m0": 1, "m1": 1, "x": 1}


# -- the selection on neighbouring tables --------------------------------------------------
def test_an_item_of_one_user_is_never_released(raw):
    """On n and n + 1 users (the one added holds an id no one else does), the id held by one
    user passes only when its noise reaches tau - 1: at the plan below that is below 1e-9 per
    run, so 10 seeds release it with probability below 1e-8. The head's ids, held by at least
    1,209 users each (no record is cut at s = 8), stand 33 noise sds (30.4) above tau = 203:
    released on every run (the false-failure rate is far below 1e-12)."""
    _, table = raw
    plan = universe_plan({"epsilon": 1.0}, None, 0.3, 8, ADD_REMOVE)
    assert plan.tau == partition_threshold(plan.sigma2, plan.key_tail)
    assert discrete_gaussian_tail(plan.tau - 1, plan.sigma2) < 1e-9
    added = pd.concat([table, pd.DataFrame({"userId": ["new"], "movieId": ["new-only"]})])
    for seed in range(10):
        for frame in (table, added):
            learned = learn_universe(
                frame_lines(frame), {"epsilon": 1.0}, share=0.3, bound=8, neighbours=ADD_REMOVE,
                rng=np.random.default_rng(seed),
            )  # fmt: skip
            ids = set(learned.labels.items)
            assert RARE not in ids and "new-only" not in ids
            assert set(HEAD) <= ids <= set(HEAD) | {f"t{j}" for j in range(40)}
            assert learned.selection.tau == plan.tau
            assert float(learned.selection.sigma2) == pytest.approx(plan.sigma2)


@pytest.mark.parametrize("relation", [ADD_REMOVE, REPLACE_ONE])
def test_the_ledger_charges_the_selection_first(raw, relation):
    """The run's ledger: the selection's charge (its planned rho) before every charge of the
    release, the release within the rest; the guarantee's delta adds the selection's tail."""
    _, table = raw
    result = pipeline.release(pipeline.ReleaseRequest(
        pipeline.ItemFrame(table, learn=pipeline.ItemLearning(0.3, 8)),
        options={"epsilon": 2.0}, seed=3, neighbours=relation))  # fmt: skip
    n = None if relation == ADD_REMOVE else table["userId"].nunique()
    delta = 1e-9 if relation == ADD_REMOVE else 1 / n**2
    plan = universe_plan({"epsilon": 2.0, "delta": delta}, n, 0.3, 8, relation)
    entries = result.release.ledger.entries
    assert entries[0].charge.mechanism == f"{UNIVERSE_STAGE}: {SELECTION}"
    assert entries[0].charge.cost.rho == pytest.approx(plan.rho)
    assert len(entries) > 1
    assert all(e.charge.mechanism.startswith("release: ") for e in entries[1:])
    privacy = result.report["release"]["privacy"]
    assert privacy["delta_split"]["delta_tail"] == pytest.approx(plan.delta_tail)
    assert result.report["release"]["universe"]["threshold"] == plan.tau
    assert result.report["release"]["universe"]["released"] == len(result.labels.items)


def test_replace_one_reads_n_for_its_delta_only(raw):
    """Under replace-one the default delta is 1/n^2 (n public): the plan's tail follows."""
    _, table = raw
    n = table["userId"].nunique()
    plan = universe_plan({"epsilon": 1.0}, n, 0.3, 8, REPLACE_ONE)
    assert plan.budget.delta == pytest.approx(1 / n**2)


# -- the command ---------------------------------------------------------------------------
def test_synth_learns_writes_the_ids_and_they_release_again(raw):
    tmp, _ = raw
    r = dpquery_cli("synth", "--data", str(tmp / "ratings.csv"), "--learn-items", "--epsilon",
                    "2", "--seed", "4", "--out", str(tmp / "S.transactions.csv"))  # fmt: skip
    assert r.code == 0, r.err
    assert "item universe: learned from the data" in r.out and "S.items.txt" in r.out
    ids = read_item_list(tmp / "S.items.txt")
    assert set(HEAD) <= set(ids) and RARE not in ids
    assert list(ids) == sorted(ids)  # canonical order, never the data's
    out = pd.read_csv(tmp / "S.transactions.csv", skiprows=1, dtype=str)
    assert set(out["movieId"]) <= set(ids)
    first = (tmp / "S.transactions.csv").read_text().splitlines()[0]
    assert first.endswith(f"items {len(ids)}")
    again = dpquery_cli("synth", "--data", str(tmp / "ratings.csv"), "--item-list",
                        str(tmp / "S.items.txt"), "--epsilon", "1", "--seed", "4", "--out",
                        str(tmp / "T.transactions.csv"))  # fmt: skip
    assert again.code == 0, again.err
    plan = dpquery_cli("privacy", "synth", "--n", "3000", "--learn-items", "--epsilon", "2")
    assert plan.code == 0 and "item universe: partition selection" in plan.out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--transactions",), "--item-list FILE"),
        (("--learn-items", "--item-list", "ITEMS"), "not both"),
        (("--learn-items", "--learn-items-share", "1.5"), "--learn-items-share must be"),
        (("--learn-items", "--learn-items-bound", "0"), "--learn-items-bound must be"),
        (("--learn-items-bound", "4"), "give --learn-items"),
        (("--learn-items", "--delta", "0"), "(epsilon, delta) budget"),
        (("--learn-items", "--epsilon", "0.01"), "no item id's noisy count"),
    ],
)
def test_synth_errors_exit_non_zero_and_write_nothing(raw, flags, message):
    tmp, _ = raw
    (tmp / "items.txt").write_text("m0\nm1\n")
    flags = tuple(str(tmp / "items.txt") if f == "ITEMS" else f for f in flags)
    budget = () if "--epsilon" in flags else ("--epsilon", "1")
    r = dpquery_cli("synth", "--data", str(tmp / "ratings.csv"), *budget, *flags, "--out",
                    str(tmp / "S.transactions.csv"))  # fmt: skip
    assert r.code != 0 and message in r.err, r.err
    assert not (tmp / "S.transactions.csv").exists() and not (tmp / "S.items.txt").exists()


def test_a_dense_csv_is_refused_before_the_selection_draws(raw):
    """The number of ids is learned: a dense CSV without --dense is refused before anything
    is spent, and nothing is written."""
    tmp, _ = raw
    r = dpquery_cli("synth", "--data", str(tmp / "ratings.csv"), "--epsilon", "1",
                    "--learn-items", "--out", str(tmp / "S.csv"))  # fmt: skip
    assert r.code != 0 and "a dense CSV could have any width" in r.err, r.err
    assert "charged" not in r.err and "item universe: learned" not in r.err
    assert not (tmp / "S.csv").exists() and not (tmp / "S.items.txt").exists()


# -- the Python API ------------------------------------------------------------------------
def test_synthesize_items_is_the_commands_release(raw):
    tmp, table = raw
    (tmp / "items.txt").write_text("\n".join(HEAD) + "\n")
    r = dpquery_cli("synth", "--data", str(tmp / "ratings.csv"), "--item-list",
                    str(tmp / "items.txt"), "--epsilon", "1", "--seed", "5", "--out",
                    str(tmp / "S.transactions.csv"))  # fmt: skip
    assert r.code == 0, r.err
    cli = pd.read_csv(tmp / "S.transactions.csv", skiprows=1, dtype=str)
    api, _ = dpquery.synthesize_items(table, item_list=HEAD, epsilon=1, seed=5)
    assert list(api.columns) == ["userId", "movieId"]
    assert api.astype(str).reset_index(drop=True).equals(cli.reset_index(drop=True))
    assert api.attrs["item_list"] == HEAD
    learned, _ = dpquery.synthesize_items(table, learn_items=True, epsilon=2, seed=4)
    cli_ids = read_item_list(tmp / "S.items.txt") if (tmp / "S.items.txt").exists() else None
    assert cli_ids is None  # the listed run writes no universe
    assert set(learned["movieId"]) <= set(learned.attrs["item_list"])
    assert RARE not in learned.attrs["item_list"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "item_list"),
        ({"learn_items": True, "item_list": ["m0"]}, "not both"),
        ({"learn_items": True, "learn_items_share": 0}, "learn_items_share must be"),
        ({"learn_items": True, "rho": 0.5, "epsilon": None}, "(epsilon, delta) budget"),
        ({"item_list": ["m0", "m0"]}, "'m0' twice"),
        ({"item_list": ["m0"], "user_column": "nope"}, "no user column 'nope'"),
    ],
)
def test_synthesize_items_errors(raw, kwargs, message):
    _, table = raw
    with pytest.raises(DPQueryError, match=message.replace("(", r"\(").replace(")", r"\)")):
        dpquery.synthesize_items(table, **{"epsilon": 1, **kwargs})


def test_file_and_frame_lines_agree(raw):
    tmp, table = raw
    a, b = read_raw_lines(tmp / "ratings.csv"), frame_lines(table)
    assert a.n == b.n and (a.rows == b.rows).all() and (a.items == b.items).all()
    floats = pd.DataFrame({"u": [1.0, 2.0, None], "i": [7.0, 8.5, 9.0]})
    assert frame_lines(floats).items.tolist() == ["7", "8.5"]  # the user-less line dropped


def test_the_evaluation_counts_every_id_of_the_table(raw):
    """The curator's evaluation (NOT private) of a learned universe's release is over every
    id the table holds, the ids not released as the release's zeros."""
    _, table = raw
    result = pipeline.release(pipeline.ReleaseRequest(
        pipeline.ItemFrame(table, learn=pipeline.ItemLearning()), options={"epsilon": 2.0},
        seed=2, evaluate=True))  # fmt: skip
    assert result.evaluation is not None and result.labels is not None
    assert result.evaluation["data"]["items"] == table["movieId"].nunique() == 47
    assert len(result.labels.items) < 47


@pytest.mark.parametrize(
    ("out", "items"),
    [("S.transactions.csv", "S.items.txt"), ("a/S.transactions.csv.gz", "a/S.items.txt"),
     ("S.npz", "S.items.txt"), ("S.csv", "S.items.txt")],
)  # fmt: skip
def test_the_ids_are_written_beside_the_output(out, items):
    assert pipeline.Files(Path(out)).items == Path(items)


def test_replace_one_warns_before_the_draw_when_no_id_can_pass(raw):
    """Under replace-one n is public: a threshold above it is said before the selection
    draws (then no id passes, and the run ends in the error)."""
    tmp, _ = raw
    r = dpquery_cli("synth", "--data", str(tmp / "ratings.csv"), "--learn-items", "--epsilon",
                    "0.01", "--neighbours", "replace-one", "--out",
                    str(tmp / "S.transactions.csv"))  # fmt: skip
    assert r.code != 0
    warned = r.err.index("is above the table's 3,000 users")
    assert warned < r.err.index("no item id's noisy count")
