"""Messy CSV files given to ``dpquery synth`` and ``dpquery domain learn`` with no domain: each
is read as the user wrote it, or refused with one line naming the value and what was expected,
exit code 2, no output file and the input untouched (``docs/learn.md``, "Messy tables").

Real files in ``tmp_path``, through the command's entry point (:func:`dpquery.cli.main`).
The releases are seeded; their assertions are about what the domain and the console say,
which the noise cannot change at these sizes, except where a test says otherwise."""

from __future__ import annotations

import gzip
import hashlib
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpquery
from dpquery.backends import table_partitions
from dpquery.cli import main
from dpquery.data import Categorical, Domain, Numeric
from dpquery.data.binary import unpack_columns
from dpquery.data.encode import csv_layout, encode, read_table
from dpquery.data.numbers import plain_number
from dpquery.domain_learning import OTHER_LABEL
from dpquery.errors import DPQueryError, LearnedColumnWarning
from dpquery.pipeline.learning import LARGEST_BOUND

N = 1000


def _base(n: int = N, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(18, 90, n),
        "color": rng.choice(["red", "blue", "green"], n, p=[0.5, 0.3, 0.2]),
        "wage": np.round(np.exp(rng.normal(10, 1, n)), 2),
    })  # fmt: skip


def _synth(data: Path, out: Path, *extra: str) -> list[str]:
    return ["synth", "--data", str(data), "--epsilon", "1", "--seed", "0", "--out", str(out),
            *extra]  # fmt: skip


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str], *fragments: str) -> str:
    """``argv`` fails with exit code 2 and one error line holding every fragment."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("dpquery: error: ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- files that cannot be read as a table: refused, nothing written ------------------------
@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("", ["is empty", "header line"]),
        ("\n\n", ["is empty"]),
        ("age,color,wage\n", ["has no records (only a header)"]),
        ("age,age,wage\n1,2,3\n", ["names column 'age' twice", "columns 1 and 2"]),
        ("age, age,wage\n1,2,3\n", ["names column 'age' twice"]),  # as pandas reads it
        ("age,,wage\n1,red,3\n", ["column 2 of the header", "has no name; name every"]),
        # a blank first name is a row index only beside names for all the others
        (",age,\n0,1,2\n1,2,3\n", ["column 1 of the header", "has no name; name every"]),
        (",age,age\n0,1,2\n", ["names column 'age' twice", "columns 2 and 3"]),
        ("age;;wage\n1;red;3\n", ["column 2 of the header (separated by ';')", "has no name"]),
        ("a,b\n1,2,5\n3,4,6\n", ["more fields than the header's 2 column(s)", "','"]),
    ],
)
def test_an_unreadable_table_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, fragments: list[str]
) -> None:
    data = tmp_path / "T.csv"
    data.write_text(text)
    before = _digest(data)
    out = tmp_path / "s.csv"
    _refused(capsys, _synth(data, out), *fragments)
    _refused(capsys, ["domain", "learn", "--data", str(data), "--epsilon", "1", "--out",
                      str(tmp_path / "d.json")], *fragments)  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["T.csv"]  # no output, no temp file
    assert _digest(data) == before


def test_one_record_is_refused_with_what_it_spent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused after the learning's noisy count (the only error after a draw): the line says
    why and the note under it what was spent, so a second try knows the data was used."""
    data = tmp_path / "T.csv"
    data.write_text("age,color,wage\n34,red,1200.5\n")
    assert main(_synth(data, tmp_path / "s.csv")) == 2
    err = capsys.readouterr().err
    assert "too few to learn a domain" in err and "records (a noisy count)" in err
    assert "privacy spent before the failure" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["T.csv"]


def test_a_repeated_name_is_refused_with_a_domain_given_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pandas would read the second ``age`` as ``age.1`` and the domain's ``age`` would take
    the first silently."""
    data = tmp_path / "T.csv"
    data.write_text("age,age\n1,2\n3,4\n")
    domain = tmp_path / "d.json"
    Domain((Numeric.equal_width("age", 0, 10, 2),)).save(domain)
    _refused(capsys, ["synth", "--data", str(data), "--domain", str(domain), "--epsilon", "1",
                      "--out", str(tmp_path / "s.csv")], "names column 'age' twice")  # fmt: skip


def test_the_separator_is_read_off_the_header_alone(tmp_path: Path) -> None:
    for sep, header in ((",", "a,b"), ("\t", "a\tb"), (";", "a;b"), (",", "alone")):
        path = tmp_path / "h.csv"
        path.write_text(f"{header}\n1{sep}2,5\n")  # a decimal comma in a ';' file's record
        assert csv_layout(path)[0] == sep
    (tmp_path / "quoted.csv").write_text('"wage, USD";age\n1;2\n')
    assert csv_layout(tmp_path / "quoted.csv")[0] == ";"
    (tmp_path / "hint.csv").write_text("sep=|\na|b,c\n1|2\n")  # a spreadsheet's hint line
    assert csv_layout(tmp_path / "hint.csv") == ("|", 1)
    gz = tmp_path / "h.csv.gz"
    gz.write_bytes(gzip.compress("\ufeffa;b\r\n1;2\r\n".encode()))
    assert csv_layout(gz)[0] == ";"
    (tmp_path / "h.tsv").write_text("a,b\tc\n1\t2\n")  # a .tsv is tab-separated whatever its header
    assert csv_layout(tmp_path / "h.tsv")[0] == "\t"
    (tmp_path / "bad.csv").write_bytes(b"caf\xe9,b\n1,2\n")
    with pytest.raises(DPQueryError, match="not UTF-8"):
        csv_layout(tmp_path / "bad.csv")


def test_dask_partitions_read_the_separator_alike(tmp_path: Path) -> None:
    """The partitions of ``--backend dask`` read a ';' file as the local reader does, and
    refuse a ``sep=`` line (their records start after the first line)."""
    table = _base(200)[["age", "color"]]
    domain = Domain((Numeric.equal_width("age", 0, 100, 5), Categorical("color", ("red", "blue",
                     "green"))))  # fmt: skip
    data = tmp_path / "T.csv"
    table.to_csv(data, index=False, sep=";")
    parts = table_partitions(data, domain, 3)
    local = encode(read_table(data, domain), domain)
    assert sum(p.rows() for p in parts) == 200
    loaded = [p.load() for p in parts]
    bits = np.concatenate([unpack_columns(b.words, b.n) for b in loaded], axis=0)
    assert np.array_equal(bits, unpack_columns(local.words, local.n))
    data.write_text("sep=;\n" + table.to_csv(index=False, sep=";"))
    with pytest.raises(DPQueryError, match="remove that line to read it on --backend dask"):
        table_partitions(data, domain, 3)


# --- files written differently hold the same table: the same release, byte for byte -------
def test_separators_bom_line_endings_and_gzip_give_the_same_release(tmp_path: Path) -> None:
    table = _base()
    writers = {
        "comma.csv": lambda p: table.to_csv(p, index=False),
        "semicolon.csv": lambda p: table.to_csv(p, index=False, sep=";"),
        "tab.csv": lambda p: table.to_csv(p, index=False, sep="\t"),
        "tab.tsv": lambda p: table.to_csv(p, index=False, sep="\t"),
        "hint.csv": lambda p: p.write_text("sep=;\n" + table.to_csv(index=False, sep=";")),
        "bom.csv": lambda p: table.to_csv(p, index=False, encoding="utf-8-sig"),
        "crlf.csv": lambda p: table.to_csv(p, index=False, lineterminator="\r\n"),
        "gzip.csv.gz": lambda p: table.to_csv(p, index=False, compression="gzip"),
        # a row index, as pandas' to_csv and R's write.csv write one: left out, never read
        "index.csv": lambda p: table.to_csv(p),
        "rindex.csv": lambda p: _r_write_csv(table, p),
    }
    digests = {}
    for name, write in writers.items():
        data = tmp_path / name
        write(data)
        out = tmp_path / f"s-{name.split('.')[0]}-{name.split('.')[1]}.csv"
        assert main([*_synth(data, out), "--quiet"]) == 0
        assert list(pd.read_csv(out).columns) == ["age", "color", "wage"]
        digests[name] = (_digest(out), _digest(out.with_suffix(".domain.json")))
    assert len(set(digests.values())) == 1, digests


def _r_write_csv(table: pd.DataFrame, path: Path) -> None:
    """As R's ``write.csv`` writes a data frame: a quoted blank name over row numbers from 1,
    text quoted."""
    lines = ['"",' + ",".join(f'"{c}"' for c in table.columns)]
    for i, row in enumerate(table.itertuples(index=False), start=1):
        cells = [f'"{v}"' if isinstance(v, str) else repr(v) for v in row]
        lines.append(f'"{i}",' + ",".join(cells))
    path.write_text("\n".join(lines) + "\n")


def test_a_row_index_is_left_out_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A first column with no name is a row index: the header alone says so (public). It is
    never read, the console says it was left out, and a domain given reads the file as it
    reads the file without it (the same release, byte for byte). ``--backend dask`` still
    refuses it (its partitions read the header as it is)."""
    table = _base(300)
    plain, indexed = tmp_path / "plain.csv", tmp_path / "indexed.csv"
    table.to_csv(plain, index=False)
    table.to_csv(indexed)
    assert main([*_synth(indexed, tmp_path / "s.csv"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "indexed.csv: column 1 of the header has no name: read as a row index" in err
    assert list(pd.read_csv(tmp_path / "s.csv").columns) == ["age", "color", "wage"]
    domain = tmp_path / "s.domain.json"
    outs = []
    for data in (plain, indexed):
        out = tmp_path / f"given-{data.stem}.csv"
        argv = ["synth", "--data", str(data), "--domain", str(domain), "--epsilon", "1",
                "--seed", "1", "--neighbours", "replace-one", "--out", str(out),
                "--quiet"]  # fmt: skip
        assert main(argv) == 0
        outs.append(_digest(out))
    err = capsys.readouterr().err
    assert err.count("read as a row index") == 1 and "not in the domain" not in err, err
    assert outs[0] == outs[1]
    with pytest.warns(UserWarning, match="read as a row index"):
        assert list(read_table(indexed).columns) == ["age", "color", "wage"]
    parsed = Domain.load(domain)
    with pytest.raises(DPQueryError, match="a row index"):
        table_partitions(indexed, parsed, 2)


def test_names_are_kept_as_written(tmp_path: Path) -> None:
    table = _base().rename(columns={"age": "Âge du client", "wage": "wage (€)"})
    data, out = tmp_path / "T.csv", tmp_path / "s.csv"
    table.to_csv(data, index=False)
    assert main([*_synth(data, out), "--quiet"]) == 0
    assert list(pd.read_csv(out).columns) == ["Âge du client", "color", "wage (€)"]
    assert Domain.load(out.with_suffix(".domain.json")).names == tuple(table.columns)


# --- values: what is kept, what is said ---------------------------------------------------
@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("$1,200.50", "1200.50"),
        ("-$3", "-3"),
        ("$-3", "-3"),
        ("€ 1,200", "1200"),
        ("12.5%", "12.5"),
        ("12 %", "12"),
        ("1,234,567", "1234567"),
        (".5%", ".5"),
        ("-$-3", None),
        ("1,20", None),
        ("12,5", None),
        ("$", None),
        ("abc", None),
        ("12", None),
        ("1e5", None),
        ("€ 1 200", None),
        ("1,2345", None),
        ("(1,234.50)", "-1234.50"),  # an accountant's negative
        ("($12)", "-12"),
        ("(701)", "-701"),
        ("(.5)", "-.5"),
        ("(-3)", None),
        ("($-3)", None),
        ("-(3)", None),
        ("((1))", None),
        ("(a)", None),
        ("()", None),
    ],
)
def test_a_formatted_number_reads_as_its_plain_text(text: str, plain: str | None) -> None:
    """Plain numbers (``"12"``, ``"1e5"``) are not this function's: ``Decimal`` reads them."""
    assert plain_number(text) == plain


def test_money_and_percentages_are_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = _base()
    rng = np.random.default_rng(1)
    table["price"] = [f"${w:,.2f}" for w in table["wage"]]
    table["share"] = [f"{x:.1f}%" for x in rng.uniform(0, 100, N)]
    data, out = tmp_path / "T.csv", tmp_path / "s.csv"
    table.to_csv(data, index=False)
    assert main(_synth(data, out)) == 0
    domain = Domain.load(out.with_suffix(".domain.json"))
    assert isinstance(domain["price"], Numeric) and isinstance(domain["share"], Numeric)
    assert domain["price"].decimals == 2 and domain["share"].decimals == 1
    released = pd.read_csv(out)
    assert pd.api.types.is_float_dtype(released["price"])  # plain numbers, no '$'
    assert released["share"].between(0, 100).mean() > 0.9
    again = tmp_path / "again.csv"  # the learned domain given back reads them alike
    assert main(_synth(data, again, "--domain", str(out.with_suffix(".domain.json")))) == 0
    assert pd.api.types.is_float_dtype(pd.read_csv(again)["price"])
    frame, _ = dpquery.synthesize(table, epsilon=1, seed=0)  # the API reads them alike
    assert pd.api.types.is_float_dtype(frame["price"]) and frame["price"].notna().mean() > 0.9


def test_accounting_negatives_are_numbers(tmp_path: Path) -> None:
    """A column of amounts whose negatives are written in parentheses (``(1,461)``, as
    spreadsheets' accounting formats write them) is numeric and released with negatives (as
    text, every value would be released as ``<other>``)."""
    table = _base()
    rng = np.random.default_rng(3)
    amounts = rng.integers(1, 5000, N)
    negative = rng.random(N) < 0.3
    table["amount"] = [
        f"({a:,})" if neg else f"{a:,}" for a, neg in zip(amounts, negative, strict=True)
    ]
    data, out = tmp_path / "T.csv", tmp_path / "s.csv"
    table.to_csv(data, index=False)
    assert main(_synth(data, out)) == 0
    domain = Domain.load(out.with_suffix(".domain.json"))
    assert isinstance(domain["amount"], Numeric) and domain["amount"].edges[0] < 0
    released = pd.read_csv(out)["amount"]
    assert pd.api.types.is_numeric_dtype(released)
    # 30% of the values negative: at epsilon 1 on 1,000 records the released share lies well inside
    assert 0.15 < (released < 0).mean() < 0.45


def test_the_api_warns_what_the_console_notes() -> None:
    """``dpquery.synthesize`` has no console: a column released only as ``<other>`` (an
    identifier, a column of durations) is warned, one warning a note, and a column released
    as written is not named."""
    table = _base()
    table["id"] = [f"user-{i}" for i in range(N)]
    table["wait"] = pd.to_timedelta(np.random.default_rng(4).integers(0, 1000, N), unit="s")
    with pytest.warns(LearnedColumnWarning) as caught:
        model = dpquery.DPSynthesizer(epsilon=1, seed=0).fit(table)
    notes = [str(w.message) for w in caught if issubclass(w.category, LearnedColumnWarning)]
    assert any(m.startswith("id: no value is held by enough records") for m in notes)
    assert any(m.startswith("wait: no value is held by enough records") for m in notes)
    assert not any(m.startswith(("age:", "color:", "wage:")) for m in notes)
    assert set(model.sample()["id"]) == {OTHER_LABEL}
    with warnings.catch_warnings():  # the domain given back: public, nothing to note
        warnings.simplefilter("error", LearnedColumnWarning)
        dpquery.synthesize(table, model.domain_, epsilon=1, seed=0)


def test_an_identifier_is_never_echoed_and_the_console_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An identifier, a column with no value and one of huge values: each is released
    without any exact value of the table, and the console says what became of it. Dates are
    a date column: released as dates drawn in its learned bins ("Dates and times")."""
    table = _base()
    rng = np.random.default_rng(2)
    table["id"] = [f"user-{rng.integers(10**9)}-{i}" for i in range(N)]
    days = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 1000, N), unit="D")
    table["joined"] = days.strftime("%Y-%m-%d")
    table["empty"] = ""
    table["huge"] = np.round(rng.lognormal(0, 1, N) * 1e12)
    data, out = tmp_path / "T.csv", tmp_path / "s.csv"
    table.to_csv(data, index=False)
    report = tmp_path / "r.json"
    assert main([*_synth(data, out), "--report", str(report)]) == 0
    console = capsys.readouterr().out
    released = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert set(released["id"]) == {OTHER_LABEL}
    assert not set(released["id"]) & set(table["id"])
    assert "note: id: no value is held by enough records" in console
    assert released["joined"].str.fullmatch(r"20\d\d-\d\d-\d\d").all()
    assert "note: joined: read as dates (the ISO 8601 rule)" in console
    # as text (only its missing values released), too sparse to tell numbers from text, or
    # as a number without bounds: the noise decides which; either way no value is invented
    assert (
        "note: empty: only its missing values are held" in console
        or "note: empty: too few values to tell numbers from text" in console
        or "note: empty: too few numbers for private bounds and no value released" in console
    )
    assert set(released["empty"]) <= {OTHER_LABEL, ""}
    # every value beyond 10^10 (1e11 to 1e13): bounds around them from the far buckets
    # (far_reach), not clipped to 10^10, written as the integers they are
    assert "note: huge: its bounds reached" not in console
    assert released["huge"].str.fullmatch(r"\d+").all()
    huge = pd.to_numeric(released["huge"])
    assert 1e10 <= huge.min() and huge.max() <= 1e14 < LARGEST_BOUND
    notes = json.loads(report.read_text())["release"]["domain"]["notes"]
    # the table is small for its columns at this budget: said first, then the three columns
    assert len(notes) == 4 and notes[0].startswith("about ") and "few for 7 learned" in notes[0]
    assert all(c in " ".join(notes) for c in ("id", "joined", "empty"))
    learned = tmp_path / "d.json"  # the learning alone says it too
    assert main(["domain", "learn", "--data", str(data), "--epsilon", "1", "--seed", "0",
                 "--out", str(learned)]) == 0  # fmt: skip
    assert "note: id: no value is held by enough records" in capsys.readouterr().out


def test_text_in_a_numeric_column_is_missing_and_can_be_said_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Learned, ``unknown`` among numbers is released as missing, and the learned domain given
    back reads it so too (its ``"texts": "missing"``); a domain without that key reads it as
    an error naming it, unless ``--na-values`` says it means missing."""
    table = _base()
    score = np.random.default_rng(4).integers(0, 100, N).astype(object)
    score[: N // 5] = "unknown"
    table["score"] = score
    data, out = tmp_path / "T.csv", tmp_path / "s.csv"
    table.to_csv(data, index=False)
    assert main([*_synth(data, out), "--quiet"]) == 0
    domain = out.with_suffix(".domain.json")
    assert isinstance(Domain.load(domain)["score"], Numeric)
    released = pd.read_csv(out)["score"]
    assert released.isna().mean() > 0.05 and not (released.astype(str) == "unknown").any()
    assert main([*_synth(data, tmp_path / "reused.csv", "--domain", str(domain)), "--quiet"]) == 0
    assert pd.read_csv(tmp_path / "reused.csv")["score"].isna().mean() > 0.05
    strict = tmp_path / "strict.json"  # the same domain without the learned reading of texts
    obj = json.loads(domain.read_text())
    for attr in obj["attributes"]:
        attr.pop("texts", None)
    strict.write_text(json.dumps(obj))
    again = [*_synth(data, tmp_path / "again.csv", "--domain", str(strict))]
    _refused(capsys, again, "column 'score'", "are not numbers: 'unknown' (200x)", "--na-values")
    assert main([*again, "--na-values", "unknown", "--quiet"]) == 0
    _refused(capsys, [*again, "--na-values", "unknown", "--backend", "dask"],
             "--na-values applies to a table read from --data FILE")  # fmt: skip


def test_booleans_and_two_values_stay_as_written(tmp_path: Path) -> None:
    table = _base()
    rng = np.random.default_rng(3)
    table["paid"] = rng.choice(["true", "false"], N)
    table["member"] = rng.choice(["yes", "no"], N)
    table["flag"] = rng.choice([0, 1], N)
    table["const"] = "same"
    data, out = tmp_path / "T.csv", tmp_path / "s.csv"
    table.to_csv(data, index=False)
    assert main([*_synth(data, out), "--quiet"]) == 0
    domain = Domain.load(out.with_suffix(".domain.json"))
    for column, values in (("paid", ["false", "true"]), ("member", ["no", "yes"]),
                           ("flag", [0, 1]), ("const", ["same"])):  # fmt: skip
        attr = domain[column]
        assert isinstance(attr, Categorical)
        assert [v for v in attr.values if v != attr.other] == values


# --- flags and outputs: refused before any data is read ----------------------------------
def test_flags_are_named_as_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, out = tmp_path / "T.csv", tmp_path / "s.csv"
    _base(300).to_csv(data, index=False)
    _refused(capsys, _synth(data, out, "--types", "pay=numeric"),
             "--types names the column 'pay'", "['age', 'color', 'wage']")  # fmt: skip
    _refused(capsys, _synth(data, out, "--types", "age=count"), "--types age: kind must be")
    for share in ("0", "1", "-0.2", "1.5"):
        # checked before the table is read: a missing file is not the error
        _refused(capsys, _synth(tmp_path / "absent.csv", out, "--domain-share", share),
                 "--domain-share must be a number strictly between 0 and 1")  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["T.csv"]


def test_outputs_that_would_overwrite_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "T.csv"
    _base(300).to_csv(data, index=False)
    before = _digest(data)
    for extra in ([], ["--overwrite"]):  # the input is never an output, even with --overwrite
        _refused(capsys, _synth(data, data, *extra), "is one of the inputs")
    _refused(capsys, _synth(data, tmp_path / "nowhere" / "s.csv"), "nowhere")
    kept = tmp_path / "s.domain.json"
    kept.write_text("mine")
    _refused(capsys, _synth(data, tmp_path / "s.csv"), "s.domain.json already exists",
             "--overwrite")  # fmt: skip
    domain_named = tmp_path / "x.domain.json"  # the data is where the domain would go
    domain_named.write_bytes(data.read_bytes())
    _refused(capsys, _synth(domain_named, tmp_path / "x.csv", "--overwrite"),
             "is one of the inputs")  # fmt: skip
    assert kept.read_text() == "mine" and _digest(data) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["T.csv", "s.domain.json",
                                                            "x.domain.json"]  # fmt: skip
