"""``dpquery synth --out S.npz`` on a table: the released bits, packed in the encoded format
``dpquery encode`` writes (one-hot bits for categorical and numeric attributes), read back
bit for bit by the library, ``dpquery evaluate --synthetic`` and ``dpquery synth --data``;
weights with ``--weights``; bad files refused by name; no partial output."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpquery.pipeline.rows as synth_module
import dpquery.pipeline.writes as writes_module
from dpquery.cli import main
from dpquery.data.binary import BinaryData, load_binary, load_weighted, pack_rows, save_binary
from dpquery.data.domain import Binary, Categorical, Domain, Numeric
from dpquery.data.encode import encode, read_table
from dpquery.data.records import Records
from dpquery.data.sample import output_bits
from dpquery.data.synthetic import biased_bits
from dpquery.errors import DPQueryError

N, D = 200, 300  # a few hundred free bits: wide-dense named (auto leaves 300 to others)


def listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


@pytest.fixture
def bits(tmp_path: Path) -> Path:
    data = biased_bits(N, D, seed=0)
    save_binary(tmp_path / "bits.npz", BinaryData(data.words, N, domain=Domain.binary(D)))
    return tmp_path / "bits.npz"


def synth(source: Path, out: Path, *extra: str) -> list[str]:
    return ["synth", "--data", str(source), "--algorithm", "wide-dense", "--size", "150",
            "--epsilon", "1", "--seed", "3", "--quiet", "--out", str(out), *extra]  # fmt: skip


def spy_records(monkeypatch: pytest.MonkeyPatch) -> list[Records]:
    """The records ``synth`` passes to :func:`output_bits` (the release's), unchanged."""
    seen: list[Records] = []

    def spy(records, *args, **kwargs):
        seen.append(records)
        return output_bits(records, *args, **kwargs)

    monkeypatch.setattr(synth_module, "output_bits", spy)
    return seen


def test_the_released_records_round_trip_bit_for_bit(bits, monkeypatch) -> None:
    """``--weights``: the file holds the release's records and their weights exactly."""
    seen = spy_records(monkeypatch)
    out = bits.parent / "s.npz"
    assert main(synth(bits, out, "--weights")) == 0
    (records,) = seen
    back, weights = load_weighted(out)
    assert back.n == records.m == 150 and back.d == D
    assert np.array_equal(back.to_dense(), records.rows)
    assert np.array_equal(weights, records.probabilities)
    assert back.domain is not None and back.domain.to_dict() == Domain.binary(D).to_dict()


def test_sampled_rows_are_the_csv_rows_and_read_back_as_data(bits, capsys) -> None:
    """Without ``--weights`` the file holds the rows the CSV would (same seed, same draws),
    which ``evaluate --synthetic`` scores as it scores the CSV, and ``synth --data`` reads."""
    folder = bits.parent
    assert main(synth(bits, folder / "s.npz", "--rows", "70")) == 0
    assert main(synth(bits, folder / "s.csv", "--rows", "70")) == 0
    rows = load_binary(folder / "s.npz")
    assert rows.n == 70
    assert np.array_equal(rows.to_dense(), pd.read_csv(folder / "s.csv").to_numpy())
    w = folder / "W.npz"
    argv = ["workload", "make", "--data", str(bits), "--kind", "marginals", "--k", "2",
            "--count", "100", "--seed", "0", "-o", str(w)]  # fmt: skip
    assert main(argv) == 0
    reports = {}
    for name in ("s.npz", "s.csv"):
        report = folder / f"{name}.json"
        argv = ["evaluate", "--data", str(bits), "--synthetic", str(folder / name),
                "--workload", str(w), "--report", str(report)]  # fmt: skip
        assert main(argv) == 0
        reports[name] = report.read_text()
    assert reports["s.npz"] == reports["s.csv"]
    assert main(synth(folder / "s.npz", folder / "again.npz")) == 0
    assert load_binary(folder / "again.npz").d == D


def test_one_hot_attributes_are_written_as_their_repaired_bits(tmp_path) -> None:
    """A domain with categorical and numeric attributes: the file holds the one-hot bits of
    the rows the CSV decodes (the same repairs), with the groups, and reads back as data."""
    domain = Domain((
        Categorical("color", ("red", "green", "blue")), Binary("smoker", ("no", "yes")),
        Numeric.equal_width("age", 0, 100, 5), Categorical("size", (1, 2, 3, 4)),
    ))  # fmt: skip
    rng = np.random.default_rng(0)
    table = pd.DataFrame({
        "color": rng.choice(["red", "green", "blue"], 300),
        "smoker": rng.choice(["no", "yes"], 300),
        "age": rng.uniform(0, 100, 300).round(1),
        "size": rng.choice([1, 2, 3, 4], 300),
    })  # fmt: skip
    table.to_csv(tmp_path / "data.csv", index=False)
    domain.save(tmp_path / "domain.json")
    for out in ("s.npz", "s.csv"):
        argv = ["synth", "--data", str(tmp_path / "data.csv"), "--domain",
                str(tmp_path / "domain.json"), "--algorithm", "dualquery", "--workload",
                "marginals", "--k", "2", "--queries", "60", "--eta", "0.5", "--samples", "20",
                "--epsilon", "2", "--delta", "1e-3", "--seed", "0", "--quiet", "--rows", "90",
                "--out", str(tmp_path / out)]  # fmt: skip
        assert main(argv) == 0
    written = load_binary(tmp_path / "s.npz")
    assert np.array_equal(written.onehot_groups, domain.onehot_groups)
    decoded = encode(read_table(tmp_path / "s.csv", domain), domain)
    assert np.array_equal(written.to_dense(), decoded.to_dense())


def test_pack_rows_packs_the_selected_rows_chunk_by_chunk() -> None:
    rng = np.random.default_rng(1)
    rows = (rng.random((37, 130)) < 0.5).astype(np.uint8)
    index = rng.integers(0, 37, size=300)
    words = pack_rows(rows, index, chunk=64)
    assert np.array_equal(BinaryData(words, 300).to_dense(), rows[index])
    with pytest.raises(DPQueryError, match="multiple of 64"):
        pack_rows(rows, index, chunk=100)


# == refusals: a clear error, no file =========================================================


def test_a_weighted_file_is_not_data(bits, capsys) -> None:
    folder = bits.parent
    assert main(synth(bits, folder / "w.npz", "--weights")) == 0
    before = listing(folder)
    assert main(synth(folder / "w.npz", folder / "x.npz")) == 2
    err = capsys.readouterr().err
    assert "w.npz holds weighted synthetic records" in err and "--weights" in err
    assert listing(folder) == before


def test_an_existing_output_is_refused_without_overwrite(bits, capsys) -> None:
    out = bits.parent / "s.npz"
    out.write_bytes(b"keep me")
    assert main(synth(bits, out)) == 2
    assert "already exists; pass --overwrite" in capsys.readouterr().err
    assert out.read_bytes() == b"keep me"
    assert main(synth(bits, out, "--overwrite")) == 0
    assert load_binary(out).d == D


def test_a_failed_write_leaves_no_file(bits, monkeypatch, capsys) -> None:
    def broken(path: Path, *args: object) -> None:
        path.write_bytes(b"half")
        raise DPQueryError("disk full")

    monkeypatch.setattr(writes_module, "write_binary", broken)
    before = listing(bits.parent)
    assert main(synth(bits, bits.parent / "s.npz", "--report", str(bits.parent / "r.json"))) == 2
    assert "disk full" in capsys.readouterr().err
    assert listing(bits.parent) == before  # neither output, nor a temporary


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_the_file_gets_the_mode_of_the_umask(bits, umask) -> None:
    old = os.umask(umask)
    try:
        assert main(synth(bits, bits.parent / "s.npz")) == 0
    finally:
        os.umask(old)
    assert (bits.parent / "s.npz").stat().st_mode & 0o777 == 0o666 & ~umask


def _rewrite(source: Path, target: Path, **changes: np.ndarray) -> None:
    with np.load(source, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays.update(changes)
    with target.open("wb") as fh:
        np.savez(fh, **arrays)


def test_a_corrupt_file_is_refused_by_name(bits, tmp_path) -> None:
    out = tmp_path / "s.npz"
    assert main(synth(bits, out, "--weights")) == 0
    short = tmp_path / "short_weights.npz"
    _rewrite(out, short, weights=np.ones(3))
    with pytest.raises(DPQueryError, match=r"short_weights.npz: weights has shape \(3,\)"):
        load_weighted(short)
    negative = tmp_path / "negative.npz"
    _rewrite(out, negative, weights=-np.ones(150))
    with pytest.raises(DPQueryError, match=r"negative\.npz: weights must be finite"):
        load_weighted(negative)
    wrong_n = tmp_path / "wrong_n.npz"
    _rewrite(out, wrong_n, n=np.int64(10_000))
    with pytest.raises(DPQueryError, match=r"wrong_n\.npz: words has 3 columns but n=10000"):
        load_weighted(wrong_n)
    wrong_d = tmp_path / "wrong_d.npz"
    with np.load(out) as z:
        words = z["words"]
    _rewrite(out, wrong_d, words=words[:-1])
    with pytest.raises(DPQueryError, match=f"wrong_d.npz: domain has {D} bits but the data"):
        load_weighted(wrong_d)
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(out.read_bytes()[:100])
    with pytest.raises(DPQueryError, match=r"truncated\.npz: not a dpquery binary data file"):
        load_weighted(truncated)
    assert zipfile.is_zipfile(out)


def test_broken_groups_are_repaired_as_the_decoder_repairs_them() -> None:
    """Rows with no bit and with two bits set in a group become one-hot, the choice the
    decoder makes from the same generator state (a set bit when there is one)."""
    from dpquery.data.decode import decode_rows, repaired_rows

    domain = Domain((Categorical("c", ("a", "b", "c")), Binary("e")))
    rows = np.array([[0, 0, 0, 1], [1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0]], np.uint8)
    records = Records(rows, None, domain)
    fixed, report = repaired_rows(records, domain, seed=7)
    assert report.repairs == {"c": 3}
    assert (fixed[:, :3].sum(axis=1) == 1).all() and np.array_equal(fixed[:, 3], rows[:, 3])
    assert (fixed[1:, :3] <= rows[1:, :3]).all()  # a set bit kept, never a new one
    table, _ = decode_rows(records, None, domain, seed=7)
    assert list(table["c"]) == [("a", "b", "c")[i] for i in fixed[:, :3].argmax(axis=1)]


def test_a_wide_csv_refusal_points_to_the_npz(tmp_path, capsys) -> None:
    data = biased_bits(50, 1_100, seed=0)
    save_binary(tmp_path / "wide.npz", BinaryData(data.words, 50, domain=Domain.binary(1_100)))
    before = listing(tmp_path)
    assert main(synth(tmp_path / "wide.npz", tmp_path / "s.csv")) == 2
    err = capsys.readouterr().err
    assert "a CSV of 1100 columns; write s.npz (the bits, packed)" in err
    assert listing(tmp_path) == before
