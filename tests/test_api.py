"""The pandas front door: dpquery.synthesize and DPSynthesizer, and the README's example."""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import dpquery
from dpquery import DPSynthesizer, datasets, synthesize
from dpquery.data import Domain, infer_domain
from dpquery.domain_learning import DEFAULT_DOMAIN_SHARE
from dpquery.errors import DPQueryError, NonPrivateWarning
from dpquery.privacy.delta import WeakBudgetWarning
from dpquery.queries import random_marginal_queries

README = Path(__file__).resolve().parents[1] / "README.md"
CODEBOOK = {
    "color": ["red", "green", "blue"],
    "age": {"min": 0, "max": 100, "bins": 10},
    "size": [1, 2, 3],
}


@pytest.fixture
def df() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 200
    return pd.DataFrame({
        "size": rng.choice([1, 2, 3], n),
        "color": pd.Categorical(rng.choice(["red", "green", "blue"], n),
                                categories=["red", "green", "blue"]),
        "age": rng.integers(0, 100, n),
        "note": ["private free text"] * n,   # not in the domain: not released
    })  # fmt: skip


def test_synthesize_returns_n_rows_in_the_inputs_columns_and_public_dtypes(df) -> None:
    synthetic, release = synthesize(
        df, CODEBOOK, epsilon=1.0, algorithm="uniform", seed=0, dtypes={"color": "category"}
    )
    assert list(synthetic.columns) == ["size", "color", "age"]  # df's order, domain columns
    assert len(synthetic) == len(df)
    # integers from the domain (integer values, integer bins), the category declared
    assert synthetic.dtypes.to_dict() == df[["size", "color", "age"]].dtypes.to_dict()
    assert release.algorithm == "uniform"
    # delta defaults to 1/n^2 with epsilon, and the guarantee is the one asked for
    assert release.ledger.budget.delta == pytest.approx(1 / 200**2)
    assert release.guarantee.measure == "approx"
    rows, _ = synthesize(df, CODEBOOK, epsilon=1.0, algorithm="uniform", seed=0, rows=7)
    assert len(rows) == 7


def test_the_same_seed_gives_the_same_release_and_table(df) -> None:
    a, ra = synthesize(df, CODEBOOK, epsilon=1.0, algorithm="adaptive-projection", seed=3)
    b, rb = synthesize(df, CODEBOOK, epsilon=1.0, algorithm="adaptive-projection", seed=3)
    pd.testing.assert_frame_equal(a, b)
    assert np.array_equal(ra.records.rows, rb.records.rows)


def test_the_default_algorithm_is_auto_on_the_default_workload(df) -> None:
    assert DPSynthesizer().algorithm == "auto"
    model = DPSynthesizer(epsilon=1.0, seed=0).fit(df, CODEBOOK)
    assert model.release_.parameters["auto"]["algorithm"] == model.release_.algorithm
    # all 3-way marginals of the domain: 3 attributes, one marginal of 10 x 3 x 3 cells
    assert len(model.workload_) == 90
    # add/remove (auto's default): n is private, n_ the noisy n the release drew
    assert model.n_ != 200 and model.columns_ == ["size", "color", "age"]
    assert model.release_.neighbours == "add-remove" and len(model.sample()) == model.n_
    model = DPSynthesizer(epsilon=1.0, seed=0, neighbours="replace-one").fit(df, CODEBOOK)
    assert model.n_ == 200 and len(model.sample()) == 200


def test_the_estimator_follows_scikit_learn_conventions(df, tmp_path: Path) -> None:
    model = DPSynthesizer(epsilon=0.5, options={"size": 40}, algorithm="uniform", seed=1)
    assert model.get_params() == {
        "epsilon": 0.5, "delta": None, "rho": None, "algorithm": "uniform", "k": 3,
        "options": {"size": 40}, "seed": 1, "progress": None, "dtypes": None, "binarize": False,
        "domain_share": DEFAULT_DOMAIN_SHARE, "types": None, "neighbours": None,
        "learn_rest": False,
    }  # fmt: skip
    assert not hasattr(model, "release_")
    with pytest.raises(DPQueryError, match="not fitted yet"):
        model.sample()
    Domain.from_codebook(CODEBOOK).save(tmp_path / "domain.json")
    assert model.fit(df, tmp_path / "domain.json") is model  # a domain JSON path
    assert model.release_.records.m == 40
    assert len(model.sample()) == 200 and len(model.sample(5)) == 5
    assert model.get_params()["delta"] is None  # fit never rewrites a hyperparameter
    assert model.set_params(epsilon=2.0) is model and model.epsilon == 2.0
    with pytest.raises(DPQueryError, match="no parameter eps"):
        model.set_params(eps=1)


def test_a_given_workload_is_used(df) -> None:
    domain = Domain.from_codebook(CODEBOOK)
    workload = random_marginal_queries(domain, 2, 25, seed=0)
    model = DPSynthesizer(epsilon=1.0, algorithm="adaptive-projection", seed=0)
    model.fit(df, domain, workload=workload)
    assert model.workload_ is workload and model.release_.parameters["queries"] == 25


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda df: synthesize(df, None, rho=1), "needs an \\(epsilon, delta\\) budget"),
        (lambda df: synthesize(df, epsilon=1, domain_share=1.5), "domain_share must be"),
        (lambda df: synthesize(df, 42, epsilon=1), "domain must be a dpquery.Domain, a codebook"),
        (lambda df: synthesize(df.values, CODEBOOK, epsilon=1), "df must be a pandas DataFrame"),
        (lambda df: synthesize(df.head(0), CODEBOOK, epsilon=1), "df has no rows"),
        (
            lambda df: synthesize(df, CODEBOOK, epsilon=1, algorithm="magic"),
            "algorithm must be one of",
        ),
        (lambda df: synthesize(df, CODEBOOK, epsilon=-1), "epsilon"),
        (lambda df: synthesize(df, CODEBOOK, epsilon=1, rows=0), "rows must be a positive"),
        (lambda df: synthesize(df, CODEBOOK, epsilon=1, eta=2.0), "auto does not take eta"),
        (lambda df: synthesize(df, CODEBOOK, epsilon=1, k=0), "k must be a positive integer"),
        (lambda df: synthesize(df, CODEBOOK, epsilon=1, workload="all"), "workload must be a"),
        (lambda df: synthesize(df.drop(columns="age"), CODEBOOK, epsilon=1), "lacks domain"),
        (lambda df: synthesize(df, {"size": 3}, epsilon=1), "codebook\\['size'\\]"),
        (
            lambda df: DPSynthesizer(options={"epsilon": 1}).fit(df, CODEBOOK),
            "give epsilon as keyword",
        ),
    ],
)
def test_bad_input_is_a_clear_error(df, call, match) -> None:
    with pytest.raises(DPQueryError, match=match):
        call(df)


def test_an_inferred_domain_is_an_explicit_opt_in_that_warns(df) -> None:
    with pytest.warns(NonPrivateWarning):
        domain = infer_domain(df[["size", "color"]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        _, release = synthesize(df, domain, epsilon=1.0, algorithm="uniform", seed=0)
    assert release.non_private_domain and "NOT" in release.privacy()["warning"]


WIDE = {"bound": 6, "pair_bound": 4, "head": 12, "pool": 3000}  # a small, fast release


def _ratings(value: float) -> sp.csr_array:
    """60 records x 30 items of ones, entry (3, 17) set to ``value``."""
    dense = (np.random.default_rng(0).random((60, 30)) < 0.2).astype(float)
    dense[3, 17] = value
    return sp.csr_array(dense)


@pytest.mark.parametrize("value", [-1, 2, 2.5])
def test_a_matrix_of_ratings_is_refused_unless_binarized(df, value) -> None:
    message = (
        rf"entry \(3, 17\) is {value:g}; item data holds 0 and 1 \(pass binarize=True to count "
        r"every non-zero as 1\)"
    )
    with pytest.raises(DPQueryError, match=message):
        synthesize(_ratings(value), epsilon=1.0, seed=0, **WIDE)
    model = DPSynthesizer(epsilon=1.0, seed=0, options=WIDE)
    with pytest.raises(DPQueryError, match=message):
        model.fit(_ratings(value))
    assert not hasattr(model, "ledger_") or not model.ledger_.entries  # nothing spent
    synthetic, _ = synthesize(
        _ratings(value), epsilon=1.0, seed=0, binarize=True, neighbours="replace-one", **WIDE
    )  # n public: n rows
    assert synthetic.shape == (60, 30)
    fitted = DPSynthesizer(epsilon=1.0, seed=0, options=WIDE, binarize=True,
                           neighbours="replace-one").fit(_ratings(value))  # fmt: skip
    assert fitted.n_ == 60
    with pytest.raises(DPQueryError, match="binarize=True is for item data"):
        synthesize(df, CODEBOOK, epsilon=1.0, binarize=True)


def test_an_epsilon_that_protects_nothing_warns_as_the_cli_does(df) -> None:
    said = r"epsilon=1e\+06 is above 10: a guarantee this weak protects nothing"
    with pytest.warns(WeakBudgetWarning, match=said):
        synthesize(df, CODEBOOK, epsilon=1e6, algorithm="uniform", seed=0)
    with pytest.warns(WeakBudgetWarning, match=said):
        DPSynthesizer(epsilon=1e6, seed=0, options=WIDE).fit(_ratings(1))
    with pytest.warns(WeakBudgetWarning, match=r"rho=100 \(epsilon"):
        synthesize(df, CODEBOOK, rho=100, algorithm="adaptive-projection", seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeakBudgetWarning)
        synthesize(df, CODEBOOK, epsilon=10, algorithm="uniform", seed=0)


@pytest.mark.slow
@pytest.mark.skipif(not datasets.available("adult"), reason="Adult not found")
def test_readme_example_runs() -> None:
    """The README's pandas example, executed as written (README and test cannot drift)."""
    text = README.read_text(encoding="utf-8")
    found = re.search(
        r"<!-- example:synthesize -->\n```python\n(.*?)```\n<!-- /example:synthesize -->",
        text, re.S,
    )  # fmt: skip
    assert found is not None, "README lost its example:synthesize block"
    code = found.group(1)
    assert len(code.strip().splitlines()) <= 12
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {"__name__": "readme"})
    printed = out.getvalue()
    # Each "print(...)  # comment" line shows what that print writes ("..." stands for any text).
    prints = [line for line in code.splitlines() if line.startswith("print(")]
    for i, (call, line) in enumerate(zip(prints, printed.splitlines(), strict=False)):
        if "  # " in call and i < len(prints) - 1:  # the last print writes a table
            comment = call.split("  # ", 1)[1]
            pattern = ".*".join(re.escape(part) for part in comment.split("..."))
            assert re.fullmatch(pattern, line), (comment, line)
    assert printed.startswith("epsilon=1, delta=1e-09 for add-remove neighbours")
    # seeded: the guarantee says whom it does not hold against
    assert printed.splitlines()[0].endswith("does not hold against anyone who knows the seed")
    assert "adaptive-projection add-remove True" in printed and "Husband" in printed
    assert dpquery.synthesize is synthesize
