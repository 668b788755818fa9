"""Output rows: n rows sampled from a release, in the input's columns, dtypes and categories;
--rows and --weights on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cli_process import dpquery_cli
from dpquery import datasets
from dpquery.data import Categorical, Domain, Numeric, Records, encode, output_table, resample
from dpquery.data.sample import systematic_counts
from dpquery.errors import DomainError, DPQueryError

needs_adult = pytest.mark.skipif(not datasets.available("adult"), reason="Adult not found")
WITH_MISSING = ("workclass", "occupation", "native-country")


def adult_with_missing() -> tuple[pd.DataFrame, Domain]:
    """Adult's training file with its 2,399 rows with a missing value kept ('?' is missing):
    three categorical columns declare a missing category, and the columns carry a mix of
    dtypes (int64, a pandas Categorical, pandas strings, object)."""
    path = datasets.locate("adult")["adult/adult.data.gz"]
    shipped = datasets.domain("adult")
    table = pd.read_csv(path, header=None, names=list(shipped.names), skipinitialspace=True,
                        na_values="?")  # fmt: skip
    attrs = []
    for a in shipped.attributes:
        if a.name in WITH_MISSING:
            assert isinstance(a, Categorical)
            a = Categorical(a.name, (*a.values, "?"), missing="?")
        attrs.append(a)
    domain = Domain(tuple(attrs))
    edu = domain["education"]
    assert isinstance(edu, Categorical)
    table["education"] = pd.Categorical(table["education"], categories=list(edu.values),
                                        ordered=True)  # fmt: skip
    table["workclass"] = pd.Categorical(table["workclass"], categories=list(
        domain["workclass"].present_values))  # type: ignore[union-attr]  # fmt: skip
    table["sex"] = table["sex"].astype("string")
    table["race"] = table["race"].astype(object)
    return table, domain


# -- the allocation -----------------------------------------------------------------------
def test_systematic_counts_round_every_expected_count_and_sum_to_rows() -> None:
    rng = np.random.default_rng(0)
    for m, rows in ((7, 20), (50, 3), (1000, 30_162), (3, 1)):
        p = rng.random(m) ** 3
        counts = systematic_counts(p, rows, rng)
        expected = rows * p / p.sum()
        assert counts.sum() == rows
        assert ((counts == np.floor(expected)) | (counts == np.ceil(expected))).all()


def test_systematic_counts_are_unbiased() -> None:
    # 4,000 seeded draws of 10 rows from 6 records: each record's mean count lies within 6
    # standard errors of 10 p_i (a count varies by at most 1 around 10 p_i, sd <= 0.5, so the
    # standard error of the mean is <= 0.5 / sqrt(4000) = 0.0079); false failure < 1e-8.
    p = np.array([0.01, 0.04, 0.15, 0.3, 0.2, 0.3])
    rng = np.random.default_rng(1)
    mean = np.mean([systematic_counts(p, 10, rng) for _ in range(4000)], axis=0)
    assert np.abs(mean - 10 * p).max() < 6 * 0.5 / np.sqrt(4000)


@needs_adult
def test_sampling_keeps_the_releases_one_way_marginals() -> None:
    """2,000 Adult records with random weights, sampled to n = 30,162 rows. A cell's count is
    off by the sum of its records' rounding errors (each in (-1, 1)); were they independent
    its sd would be s_c = sqrt(sum f(1 - f)) over the cell's fractional parts f (measured here:
    8.6 rows against s_c = 12.4 for a half of the records, over 300 seeds; i.i.d. draws gave
    83). The test allows 6 s_c + 1 per cell: false failure < 2e-9 per cell under a normal
    approximation. Seeded."""
    table, domain = datasets.load_table("adult")
    rng = np.random.default_rng(3)
    rows = encode(table.sample(2000, random_state=3), domain).to_dense()
    weights = rng.random(2000) ** 3
    records = Records(rows, weights, domain)
    n = len(table)
    sampled = resample(records, n, seed=4)
    assert sampled.m == n
    p = records.probabilities
    counts = sampled.rows.sum(axis=0)
    for j in range(domain.d):
        in_cell = rows[:, j] == 1
        expected = n * p[in_cell].sum()
        f = (n * p[in_cell]) % 1
        assert abs(counts[j] - expected) <= 6 * np.sqrt((f * (1 - f)).sum()) + 1, j


def test_the_leading_attributes_counts_are_off_by_less_than_one_row() -> None:
    # Records ordered by their largest attribute before the comb: each of its values is one
    # stretch of the line, so its count is floor or ceil of rows x its weight.
    domain = Domain([Categorical("big", tuple(range(40))), Categorical("small", ("a", "b", "c"))])
    rng = np.random.default_rng(5)
    m, rows = 3000, 7001
    big, small = rng.integers(0, 40, m), rng.integers(0, 3, m)
    bits = np.zeros((m, domain.d), dtype=np.uint8)
    bits[np.arange(m), big] = 1
    bits[np.arange(m), 40 + small] = 1
    records = Records(bits, rng.random(m) ** 2, domain)
    for seed in range(5):
        sampled = resample(records, rows, seed=seed).rows[:, :40].sum(axis=0)
        expected = np.array([records.probabilities[big == v].sum() for v in range(40)]) * rows
        assert (np.abs(sampled - expected) < 1).all()
    # a random order (no domain) lets the rounding errors of a value's records add up
    bare = Records(bits, records.weights)
    off = np.abs(resample(bare, rows, seed=0).rows[:, :40].sum(axis=0) - expected)
    assert off.max() > 1


# -- the table ----------------------------------------------------------------------------
@needs_adult
def test_real_table_round_trips_columns_dtypes_and_missing_values() -> None:
    table, domain = adult_with_missing()
    data = encode(table, domain)
    typed = domain.with_dtypes(dict(table.dtypes))  # declared: the table's schema is public here
    # a release with every record of the data, sampled to n rows: the same values come back
    out, report = output_table(Records(data.to_dense(), None, domain), typed, rows=data.n,
                               seed=0)  # fmt: skip
    assert list(out.columns) == list(table.columns)
    assert out.dtypes.to_dict() == table.dtypes.to_dict()
    assert len(out) == data.n == report.rows
    edu = out["education"].dtype
    assert isinstance(edu, pd.CategoricalDtype) and edu.ordered
    assert list(edu.categories) == list(domain["education"].values)  # type: ignore[union-attr]
    # declared missing categories decode back to missing, as many as the input has
    for name in WITH_MISSING:
        assert out[name].isna().sum() == table[name].isna().sum() > 0
        assert "?" not in set(out[name].dropna())
    # equal weights, m = n: each record exactly once, so every column's values match
    for name in ("workclass", "education", "sex", "race", "income"):
        assert out[name].value_counts().sort_index().equals(table[name].value_counts().sort_index())


@needs_adult
def test_numeric_values_are_rounded_to_the_edges_precision() -> None:
    table, domain = datasets.load_table("adult")
    data = encode(table.head(500), domain)
    out, _ = output_table(Records(data.to_dense(), None, domain), domain, rows=500, seed=1)
    for name in ("age", "fnlwgt", "hours-per-week"):  # integer edges: integer values
        assert out[name].dtype == np.int64
    # the same bins as the input: decoded values encode to the same bits
    assert np.array_equal(encode(out, domain).to_dense().sum(0), data.to_dense().sum(0))


def test_half_step_edges_decode_to_one_decimal_and_float_dtype() -> None:
    domain = Domain((Numeric("x", (0, 0.5, 1.0, 1.5)),))
    records = Records(np.eye(3, dtype=np.uint8)[[0, 1, 2] * 100], None, domain)
    out, _ = output_table(records, domain, rows=300, seed=0)
    assert out["x"].dtype == np.float64
    assert np.allclose(out["x"], np.round(out["x"], 1))
    assert set(np.round(out["x"] * 10).astype(int)) <= set(range(16))


def test_rows_differ_from_the_released_records() -> None:
    domain = Domain((Categorical("c", ("a", "b")),))
    records = Records([[1, 0], [0, 1]], [0.25, 0.75], domain)
    for rows in (1, 3, 1000):
        out, report = output_table(records, domain, rows=rows, seed=0)
        assert len(out) == rows and report.released_records == 2
        assert "weight" not in out.columns
    out, _ = output_table(records, domain, rows=1000, seed=0)
    assert out["c"].value_counts().to_dict() == {"b": 750, "a": 250}  # exactly: 250.0 copies


def test_weights_keep_the_weighted_support() -> None:
    domain = Domain((Categorical("c", ("a", "b")),))
    for weights in ([1.0, 3.0], None):
        records = Records([[1, 0], [0, 1]], weights, domain)
        out, report = output_table(records, domain, weights=True, seed=0)
        assert len(out) == 2 == report.rows and out["weight"].sum() == pytest.approx(1.0)
    with pytest.raises(DPQueryError, match="exclude each other"):
        output_table(records, domain, rows=5, weights=True)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(DPQueryError, match="rows must be a positive integer"):
            output_table(records, domain, rows=bad)  # type: ignore[arg-type]


def test_the_same_seed_gives_the_same_table() -> None:
    domain = Domain((Categorical("c", ("a", "b", "c")), Numeric("x", (0, 10, 20))))
    rows = np.array([[1, 0, 0, 1, 0], [0, 0, 1, 0, 1]], dtype=np.uint8)
    records = Records(rows, [0.3, 0.7], domain)
    a, _ = output_table(records, domain, rows=50, seed=7)
    b, _ = output_table(records, domain, rows=50, seed=7)
    pd.testing.assert_frame_equal(a, b)


# -- the schema in the domain -------------------------------------------------------------
def test_declared_dtypes_travel_in_the_domain_json(tmp_path: Path) -> None:
    domain = Domain((
        Categorical("c", ("a", "b", "?"), missing="?", dtype="category:ordered"),
        Categorical("k", (1, 2, 3), dtype="int32"),
        Numeric("x", (0, 5, 10), dtype="float32"),
    ))  # fmt: skip
    domain.save(tmp_path / "d.json")
    again = Domain.load(tmp_path / "d.json")
    assert [a.dtype for a in again.attributes] == ["category:ordered", "int32", "float32"]
    assert [a.output_dtype for a in again.attributes] == ["category:ordered", "int32", "float32"]
    # a file written before dtypes existed loads, with the domain's default dtypes
    old = {"attributes": [{"name": "k", "type": "categorical", "values": [1, 2]},
                          {"name": "x", "type": "numeric", "edges": [0, 0.5, 1]}]}  # fmt: skip
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert [a.output_dtype for a in Domain.load(tmp_path / "old.json").attributes] == [
        "int64", "float64",
    ]  # fmt: skip
    # the output dtype is not part of the layout: a workload made without it still matches
    assert again.layout() == Domain.from_dict(json.loads(json.dumps(again.to_dict()))).layout()
    assert again == Domain((Categorical("c", ("a", "b", "?"), missing="?"),
                            Categorical("k", (1, 2, 3)), Numeric("x", (0, 5, 10))))  # fmt: skip


@pytest.mark.parametrize(
    ("attribute", "match"),
    [
        (lambda: Categorical("c", ("a", "b"), dtype="int64"), "cannot be held in dtype 'int64'"),
        (lambda: Numeric("x", (0, 1), dtype="category"), "needs a numeric dtype"),
        (lambda: Numeric("x", (0, 1), dtype="object"), "needs a numeric dtype"),
        (lambda: Categorical("c", ("a",), dtype="nonsense"), "'nonsense' is not a pandas dtype"),
        (lambda: Categorical("c", ("a",), dtype=3), "dtype must be a string"),
        (lambda: Numeric("x", (0, 0.5, 1), dtype="int64"), "would truncate its values"),
        (lambda: Categorical("c", (1.5, 2), dtype="int64"), "cannot be held in dtype"),
        (lambda: Categorical("c", ("False", "True"), dtype="bool"), "cannot be held in dtype"),
    ],
)
def test_bad_dtypes_are_refused(attribute, match) -> None:
    with pytest.raises(DomainError, match=match):
        attribute()


def test_an_integer_dtype_over_decimal_edges_is_refused() -> None:
    domain = Domain((Numeric("x", (0, 0.5, 1)),))
    with pytest.raises(DomainError, match="would truncate"):  # int64 cannot hold 0.7
        domain.with_dtypes({"x": "int64"})
    out, _ = output_table(Records([[0, 1]], None, domain), domain, rows=50, seed=0)
    assert out["x"].dtype == np.float64 and (out["x"] >= 0.5).all()


def test_nullable_dtype_when_a_missing_value_is_declared() -> None:
    domain = Domain((Categorical("k", (1, 2, 0), missing=0), Numeric("x", (0, 5), missing=True,
                                                                     integer=True)))  # fmt: skip
    rows = np.array([[0, 0, 1, 0, 1], [1, 0, 0, 1, 0]], dtype=np.uint8)
    out, _ = output_table(Records(rows, None, domain), domain, rows=2, seed=0)
    assert str(out["k"].dtype) == "Int64" and str(out["x"].dtype) == "Int64"
    assert out["k"].isna().sum() == 1 and out["x"].isna().sum() == 1


# -- the command line ---------------------------------------------------------------------
@pytest.fixture
def small(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    n = 300
    pd.DataFrame({
        "color": rng.choice(["red", "green", "blue"], n),
        "age": rng.integers(0, 100, n),
        "size": rng.choice([1, 2, 3], n),
    }).to_csv(tmp_path / "data.csv", index=False)  # fmt: skip
    Domain.from_codebook({
        "color": ["red", "green", "blue"],
        "age": {"min": 0, "max": 100, "bins": 10},
        "size": [1, 2, 3],
    }).save(tmp_path / "domain.json")  # fmt: skip
    return tmp_path


def synth(tmp: Path, *extra: str, quiet: bool = True) -> tuple[int, str, Path]:
    out = tmp / "s.csv"
    result = dpquery_cli(
        "synth", "--data", str(tmp / "data.csv"), "--domain", str(tmp / "domain.json"),
        "--algorithm", "fem", "--epsilon", "1", "--T", "4", "--samples", "3",
        "--workload", "marginals", "--k", "2", "--queries", "30", "--seed", "0",
        "--out", str(out), "--report", str(tmp / "r.json"), *extra, *(["--quiet"] * quiet),
    )  # fmt: skip
    if not quiet:
        assert "wrote " in result.out, result.out
        return result.code, result.out, out
    return result.code, result.err, out


@pytest.mark.slow
def test_cli_writes_n_rows_by_default_and_rows_when_asked(small: Path) -> None:
    code, err, out = synth(small)
    assert code == 0, err
    table = pd.read_csv(out)
    assert len(table) == 300 and list(table.columns) == ["color", "age", "size"]
    assert table["age"].dtype == np.int64 and table["size"].dtype == np.int64
    release = json.loads((small / "r.json").read_text())["release"]
    assert release["output"]["rows"] == 300
    assert release["output"]["released_records"] == release["records"] == 12  # T s
    code, printed, out = synth(small, "--rows", "17", "--overwrite", quiet=False)
    assert code == 0
    assert "wrote 17 rows to" in printed and "sampled from the 12 synthetic records" in printed
    assert len(pd.read_csv(out)) == 17
    assert json.loads((small / "r.json").read_text())["release"]["output"]["rows"] == 17


def test_cli_weights_writes_the_weighted_records(small: Path) -> None:
    code, err, out = synth(small, "--weights")
    assert code == 0, err
    table = pd.read_csv(out)
    release = json.loads((small / "r.json").read_text())["release"]
    assert len(table) == release["records"] == release["output"]["rows"]
    assert table["weight"].sum() == pytest.approx(1.0)
    assert release["output"]["method"].startswith("the released records with their weights")


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (("--rows", "0"), "--rows must be a positive integer, got 0"),
        (("--rows", "5", "--weights"), "--rows and --weights exclude each other"),
    ],
)
def test_cli_refuses_bad_rows_before_any_work(small: Path, extra, match) -> None:
    code, err, out = synth(small, *extra)
    assert code != 0 and match in err
    assert not out.exists() and not (small / "r.json").exists()


def test_codebook_entries_declare_dtypes() -> None:
    domain = Domain.from_codebook({
        "e": {"values": ["low", "high"], "dtype": "category:ordered"},
        "x": {"min": 0, "max": 1, "bins": 2, "dtype": "float32"},
        "k": {"type": "categorical", "values": [1, 2], "dtype": "int8"},
    })  # fmt: skip
    assert [a.output_dtype for a in domain.attributes] == ["category:ordered", "float32", "int8"]
    out, _ = output_table(Records([[1, 0, 0, 1, 1, 0]], None, domain), domain, rows=3, seed=0)
    assert list(out["e"].cat.categories) == ["low", "high"] and out["e"].cat.ordered
    assert str(out["x"].dtype) == "float32" and str(out["k"].dtype) == "int8"
    with pytest.raises(DomainError, match="'e': dtype 'bogus' is not a pandas dtype"):
        Domain.from_codebook({"e": {"values": ["a"], "dtype": "bogus"}})


def test_cli_parquet_output_has_the_domains_dtypes_not_the_inputs(small: Path) -> None:
    table = pd.read_csv(small / "data.csv")
    table["color"] = pd.Categorical(table["color"], categories=["red", "green", "blue"])
    table["size"] = table["size"].astype("int8")
    table.to_parquet(small / "data.parquet")
    # the domain declares color's dtype; size's int8 in the Parquet schema is not copied
    Domain.load(small / "domain.json").with_dtypes({"color": "category"}).save(small / "typed.json")
    out = small / "s.parquet"
    result = dpquery_cli(
        "synth", "--data", str(small / "data.parquet"), "--domain", str(small / "typed.json"),
        "--algorithm", "adaptive-projection", "--epsilon", "1", "--workload", "all-marginals",
        "--k", "2", "--seed", "0", "--quiet", "--out", str(out), "--neighbours", "replace-one",
    )  # fmt: skip
    assert result.code == 0, result.err
    synthetic = pd.read_parquet(out)
    assert len(synthetic) == 300  # n, public under replace-one
    assert {k: str(v) for k, v in synthetic.dtypes.items()} == {
        "color": "category", "age": "int64", "size": "int64",
    }  # fmt: skip
    assert list(synthetic["color"].cat.categories) == ["red", "green", "blue"]
