"""Built-in datasets: lookup, errors, fetch (no network), and the real files' shapes.

Real data comes only from ``$DPQUERY_DATA_DIR`` (tests marked ``realdata`` skip without it).
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib

import numpy as np
import pandas as pd
import pytest

from dpquery import datasets
from dpquery.data import BinaryData, Categorical, Numeric
from dpquery.datasets import DataFile, domains
from dpquery.errors import DatasetNotFoundError, DPQueryError

NAMES = ["adult", "adult-pgm", "kdd99", "acs", "acs-ma", "cps", "adult-mwem"]


@pytest.fixture
def no_data(tmp_path, monkeypatch):
    """An empty $DPQUERY_DATA_DIR, an empty home (so ~/.cache/dpquery is empty too) and no
    shipped files."""
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("DPQUERY_DATA_DIR", str(empty))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(datasets, "SHIPPED_DIR", tmp_path / "shipped")
    return empty


def test_registry_lists_the_issue_datasets():
    assert sorted(datasets.DATASETS) == sorted(NAMES)
    assert datasets.info("kdd99").rows == 494_021
    assert datasets.info("adult").rows == 30_162


@pytest.mark.parametrize("call", [datasets.info, datasets.locate, datasets.load, datasets.domain])
def test_unknown_dataset(call):
    with pytest.raises(DPQueryError, match=r"unknown dataset 'netflix'; expected one of \["):
        call("netflix")


def test_unknown_dataset_fetch_and_available(tmp_path):
    with pytest.raises(DPQueryError, match="unknown dataset 'netflix'"):
        datasets.fetch("netflix", dest=tmp_path)
    with pytest.raises(DPQueryError, match="unknown dataset"):
        datasets.available("netflix")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", NAMES)
def test_missing_data_dir(no_data, name):
    assert not datasets.available(name)
    with pytest.raises(DatasetNotFoundError) as err:
        datasets.load(name)
    msg = str(err.value)
    assert "DPQUERY_DATA_DIR" in msg and str(no_data) in msg and name in msg
    assert datasets.info(name).how_to_get() in msg
    # "fetch" only for a dataset that fetch can get; the others say to copy by hand
    assert (f"dpquery datasets fetch {name}" in msg) == datasets.info(name).downloadable
    assert ("copy" in msg) != datasets.info(name).downloadable
    assert isinstance(err.value, FileNotFoundError)  # also an OS-style not-found


@pytest.mark.parametrize("name", NAMES)
def test_load_and_fetch_give_one_answer(no_data, name, monkeypatch):
    """Loading a missing dataset and fetching it say the same thing: fetch it, or copy it
    by hand (no fetch is attempted here: the download is stubbed to fail loudly)."""

    def offline(url, path):
        raise OSError("offline")

    monkeypatch.setattr(datasets, "_download", offline)
    with pytest.raises(DatasetNotFoundError) as missing:
        datasets.load(name)
    how = datasets.info(name).how_to_get()
    assert how in str(missing.value)
    if datasets.info(name).downloadable:
        with pytest.raises(DPQueryError, match="offline"):
            datasets.fetch(name)
    else:
        with pytest.raises(DPQueryError) as fetched:
            datasets.fetch(name)
        assert how in str(fetched.value)


def test_unset_data_dir_searches_the_cache_then_the_package(monkeypatch, tmp_path):
    monkeypatch.delenv("DPQUERY_DATA_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert datasets.search_dirs() == [tmp_path / ".cache" / "dpquery", datasets.SHIPPED_DIR]
    with pytest.raises(DatasetNotFoundError, match="DPQUERY_DATA_DIR"):
        datasets.locate("cps")


def test_search_order_and_uncompressed_files(tmp_path, monkeypatch):
    env_dir, home = tmp_path / "env", tmp_path / "home"
    cache = home / ".cache" / "dpquery"
    monkeypatch.setenv("DPQUERY_DATA_DIR", str(env_dir))
    monkeypatch.setenv("HOME", str(home))
    assert datasets.search_dirs() == [env_dir, cache, datasets.SHIPPED_DIR]
    table = "income,age,marital,race,sex\n1000,20,1,1,2\n250000,91,7,4,1\n"
    (cache / "census_cps").mkdir(parents=True)
    (cache / "census_cps" / "hdmm_CPS.csv.gz").write_bytes(gzip.compress(table.encode()))
    assert datasets.locate("cps")["census_cps/hdmm_CPS.csv.gz"].is_relative_to(cache)
    (env_dir / "census_cps").mkdir(parents=True)
    plain = env_dir / "census_cps" / "hdmm_CPS.csv"  # stored uncompressed
    plain.write_text(table)
    assert datasets.locate("cps") == {"census_cps/hdmm_CPS.csv.gz": plain}
    data = datasets.load("cps")
    assert (data.n, data.d) == (2, 42)
    assert data.to_dense()[:, datasets.domain("cps").bits_of("sex")].tolist() == [[0, 1], [1, 0]]


def test_domains_without_data(no_data):
    assert datasets.domain("adult").d == 181
    assert datasets.domain("kdd99").d == 396
    assert datasets.domain("cps").d == 42
    assert datasets.domain("adult-mwem").d == 27
    for name in ("adult-pgm", "acs"):  # built from files that ship with the data
        with pytest.raises(DatasetNotFoundError, match="DPQUERY_DATA_DIR"):
            datasets.domain(name)


def test_public_domains_are_public():
    for build in (domains.adult_domain, domains.kdd99_domain, domains.cps_domain):
        assert not build().non_private


def test_kdd99_domain_is_dualquerys_table_1_encoding():
    dom = domains.kdd99_domain()
    assert len(dom) == 41 and dom.d == 396  # DualQuery, Table 1: KDD99, 41 attributes, 396
    assert len(dom.onehot_groups) == 41
    assert dom.sizes == tuple(k for _, _, _, k in domains.KDD99_BUCKETS)
    service = dom["service"]
    assert isinstance(service, Categorical) and service.size == 65
    assert service.values[-1] == "vmnet|whois"  # codes 64, 65 share DualQuery's last bucket


def test_adult_domain_layout():
    dom = domains.adult_domain()
    assert dom.names == domains.ADULT_COLUMNS
    assert dom.d == 181 and len(dom.onehot_groups) == 15
    age = dom["age"]
    assert isinstance(age, Numeric) and age.n_bins == 20 and age.edges[:3] == (0.0, 5.0, 10.0)


# -- fetch (file:// URLs: real urllib, no network) ----------------------------------------
def _fake_source(tmp_path, content: bytes, name: str = "source.csv"):
    src = tmp_path / "server" / name
    src.parent.mkdir(exist_ok=True)
    src.write_bytes(content)
    return src.as_uri(), hashlib.sha256(content).hexdigest()


def _register(monkeypatch, name: str, *files: DataFile) -> None:
    info = dataclasses.replace(datasets.info(name), files=files)
    monkeypatch.setitem(datasets.DATASETS, name, info)


def _all_files(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_fetch_sha256_mismatch_leaves_nothing(tmp_path, monkeypatch):
    url, _ = _fake_source(tmp_path, b"a,b\n1,2\n")
    _register(monkeypatch, "cps", DataFile("census_cps/hdmm_CPS.csv.gz", url, "0" * 64))
    dest = tmp_path / "dest"
    with pytest.raises(DPQueryError, match=r"sha256 \w+ does not match the expected 0000"):
        datasets.fetch("cps", dest=dest)
    assert _all_files(dest) == []


def test_fetch_compresses_when_the_source_is_plain(tmp_path, monkeypatch):
    content = b"income,age,marital,race,sex\n1000,20,1,1,2\n"
    url, sha = _fake_source(tmp_path, content)
    _register(monkeypatch, "cps", DataFile("census_cps/hdmm_CPS.csv.gz", url, sha))
    dest = tmp_path / "dest"
    out = datasets.fetch("cps", dest=dest)
    target = dest / "census_cps" / "hdmm_CPS.csv.gz"
    assert out == {"census_cps/hdmm_CPS.csv.gz": target}
    assert _all_files(dest) == ["census_cps/hdmm_CPS.csv.gz"]  # no temporary files left
    assert target.read_bytes()[:2] == b"\x1f\x8b"
    assert gzip.decompress(target.read_bytes()) == content
    # the fetched file is then found and loaded through $DPQUERY_DATA_DIR
    monkeypatch.setenv("DPQUERY_DATA_DIR", str(dest))
    assert datasets.load("cps").n == 1


def test_fetch_keeps_gzip_sources_as_they_are(tmp_path, monkeypatch):
    content = gzip.compress(b"raw bytes")
    url, sha = _fake_source(tmp_path, content, "x.gz")
    _register(monkeypatch, "kdd99", DataFile("kdd99/kddcup.data_10_percent.gz", url, sha))
    dest = tmp_path / "dest"
    datasets.fetch("kdd99", dest=dest)
    assert (dest / "kdd99" / "kddcup.data_10_percent.gz").read_bytes() == content


def test_fetch_skips_present_files_unless_forced(tmp_path, monkeypatch):
    url, sha = _fake_source(tmp_path, b"new")
    _register(monkeypatch, "adult-mwem", DataFile("adult/m.txt", url, sha))
    dest = tmp_path / "dest"
    (dest / "adult").mkdir(parents=True)
    (dest / "adult" / "m.txt").write_bytes(b"old")
    datasets.fetch("adult-mwem", dest=dest)
    assert (dest / "adult" / "m.txt").read_bytes() == b"old"
    datasets.fetch("adult-mwem", dest=dest, force=True)
    assert (dest / "adult" / "m.txt").read_bytes() == b"new"


def test_fetch_default_destination_is_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    url, sha = _fake_source(tmp_path, b"x")
    _register(monkeypatch, "adult-mwem", DataFile("adult/m.txt", url, sha))
    out = datasets.fetch("adult-mwem")
    assert out["adult/m.txt"] == tmp_path / "home" / ".cache" / "dpquery" / "adult" / "m.txt"


def test_fetch_errors(tmp_path, monkeypatch):
    dest = tmp_path / "dest"
    with pytest.raises(DPQueryError, match=r"has no official download: copy .* by hand"):
        datasets.fetch("acs", dest=dest)
    missing = (tmp_path / "server" / "absent.csv").as_uri()
    _register(monkeypatch, "cps", DataFile("census_cps/hdmm_CPS.csv.gz", missing, "0" * 64))
    with pytest.raises(DPQueryError, match="cannot download"):
        datasets.fetch("cps", dest=dest)
    assert _all_files(dest) == []


def test_registered_downloads_are_pinned():
    for info in datasets.DATASETS.values():
        for f in info.files:
            assert (f.url is None) == (f.sha256 is None)
            if f.sha256 is not None:
                assert len(f.sha256) == 64 and int(f.sha256, 16) >= 0
    kdd = datasets.info("kdd99").files[0]
    # scikit-learn pins this checksum for the UCI 10% archive (shared/data/README.md)
    assert kdd.sha256 == "8045aca0d84e70e622d1148d7df782496f6333bf6eb979a1b0837c42a9fd9561"


# -- real data ----------------------------------------------------------------------------
def assert_one_bit_per_group(data: BinaryData) -> None:
    """Every record has exactly one bit set in every one-hot group, checked on the packed
    words: the group's columns OR to all ones and hold n bits in total."""
    full = np.full(data.n_words, np.uint64(2**64 - 1))
    if data.n % 64:
        full[-1] = np.uint64((1 << (data.n % 64)) - 1)
    counts = data.column_counts()
    for start, stop in data.onehot_groups:
        union = np.bitwise_or.reduce(data.words[start:stop], axis=0)
        assert np.array_equal(union, full), (start, stop)
        assert counts[start:stop].sum() == data.n, (start, stop)


@pytest.fixture(scope="module")
def kdd99(require_dataset):
    require_dataset("kdd99")
    table, dom = datasets.load_table("kdd99")
    from dpquery.data import encode

    return table, encode(table, dom)


def _group_codes(data: BinaryData, name: str) -> np.ndarray:
    """The index of the set bit within attribute ``name``'s group, per record."""
    bits = data.domain.bits_of(name)
    codes = np.zeros(data.n, np.int64)
    for k, j in enumerate(bits):
        codes[data.column(j)] = k
    return codes


def _dualquery_bucket(v: np.ndarray, lo: float, hi: float, k: int) -> np.ndarray:
    """DualQuery's normalisation (attribute.ml): floor(v / ((max - min) / k)), v == max -> the
    last bucket (for the [0, 1] rates: int(range / step) - 1, which is k - 1)."""
    step = (hi - lo) / k
    last = int((hi - lo) / step) - 1 if isinstance(hi, float) else k - 1
    return np.where(v == hi, last, np.floor(v / step)).astype(np.int64)


@pytest.mark.realdata
def test_kdd99_shape(kdd99):
    table, data = kdd99
    assert (data.n, data.d) == (494_021, 396)
    assert len(data.onehot_groups) == 41
    assert len(table) == 494_021
    assert_one_bit_per_group(data)
    assert datasets.info("kdd99").rows == data.n


@pytest.mark.realdata
@pytest.mark.parametrize(
    "name",
    ["duration", "src_bytes", "dst_bytes", "hot", "num_compromised", "count",
     "dst_host_count", "serror_rate", "dst_host_same_src_port_rate"],
)  # fmt: skip
def test_kdd99_bucketing_is_dualquerys_formula(kdd99, name):
    table, data = kdd99
    (lo, hi, k) = next((lo, hi, k) for n, lo, hi, k in domains.KDD99_BUCKETS if n == name)
    hi = float(hi) if name.endswith("rate") else hi
    v = table[name].to_numpy(dtype=np.float64)
    assert v.min() >= lo and v.max() <= hi
    expected = _dualquery_bucket(v, lo, hi, k)
    assert np.array_equal(_group_codes(data, name), expected)


@pytest.mark.realdata
def test_kdd99_matches_dualquerys_own_encoded_file(kdd99, real_data_dir):
    """The DualQuery release's kdd99.clean (symbols as integer codes) bucketed by the same
    formula gives our bits, symbols included (first 50,000 rows: same row order)."""
    path = real_data_dir / "kdd99" / "dualquery_kdd99.clean.gz"
    if not path.is_file():
        pytest.skip(f"real data: {path} is absent")
    rows = 50_000
    clean = pd.read_csv(path, header=None, skipinitialspace=True, usecols=range(41), nrows=rows)
    _, data = kdd99
    for i, (name, lo, hi, k) in enumerate(domains.KDD99_BUCKETS):
        hi = float(hi) if name.endswith("rate") else hi
        expected = _dualquery_bucket(clean[i].to_numpy(dtype=np.float64), lo, hi, k)
        got = _group_codes(data, name)[:rows]
        assert np.array_equal(got, expected), name


@pytest.mark.realdata
def test_adult(require_dataset, real_data_dir):
    require_dataset("adult")
    table, dom = datasets.load_table("adult")
    data = datasets.load("adult")
    assert (data.n, data.d, len(data.onehot_groups)) == (30_162, 181, 15)
    assert len(table) == 30_162 and not table.isna().any().any()
    assert data.domain == dom == datasets.domain("adult")
    assert_one_bit_per_group(data)
    # Cross-check with the DualQuery release's adult.clean (categories as integer codes in
    # adult.names order, same rows): our categorical codes equal theirs, and our numeric bins
    # equal DualQuery's bucketing of the raw values.
    path = real_data_dir / "adult" / "dualquery_adult.clean.gz"
    if not path.is_file():
        return
    clean = pd.read_csv(path, header=None, names=list(domains.ADULT_COLUMNS))
    assert len(clean) == data.n
    for name in domains.ADULT_COLUMNS:
        attr = dom[name]
        v = clean[name].to_numpy()
        if isinstance(attr, Numeric):
            lo, hi, k = attr.edges[0], attr.edges[-1], attr.n_bins
            expected = _dualquery_bucket(v.astype(np.float64), int(lo), int(hi), k)
        else:
            expected = v
        assert np.array_equal(_group_codes(data, name), expected), name


@pytest.mark.realdata
def test_adult_pgm(require_dataset):
    require_dataset("adult-pgm")
    table, dom = datasets.load_table("adult-pgm")
    data = datasets.load("adult-pgm")
    assert (data.n, data.d, len(data.onehot_groups)) == (48_842, 588, 14)
    assert len(dom) == 14 and dom.sizes[0] == 85  # age codes 0..84
    assert_one_bit_per_group(data)
    counts = data.column_counts()
    for name in ("age", "income>50K", "native-country"):
        bits = dom.bits_of(name)
        expected = np.bincount(table[name].to_numpy(), minlength=len(bits))
        assert counts[bits.start : bits.stop].tolist() == expected.tolist()


@pytest.mark.realdata
def test_acs(require_dataset):
    require_dataset("acs")
    data = datasets.load("acs")
    assert data.n == 27_253
    assert "PWGTP" not in data.domain and "WGTP" not in data.domain  # weights excluded
    assert len(data.domain) == 22
    assert_one_bit_per_group(data)


@pytest.mark.realdata
def test_acs_ma(require_dataset):
    """The Massachusetts excerpt: the national excerpt's columns over its own schema's
    categories (5 PUMAs), and every record's category read from the file, not dropped."""
    require_dataset("acs-ma")
    table, _ = datasets.load_table("acs-ma")
    data = datasets.load("acs-ma")
    assert data.n == datasets.info("acs-ma").rows == 7_634
    assert "PWGTP" not in data.domain and "WGTP" not in data.domain  # weights excluded
    assert data.domain == datasets.domain("acs-ma")  # the domain without the records
    assert len(data.domain) == 22
    assert "massachusetts" in data.domain.note
    assert_one_bit_per_group(data)
    puma = data.domain["PUMA"]
    assert isinstance(puma, Categorical) and len(puma.values) == 5
    bits = data.domain.bits_of("PUMA")
    expected = [int((table["PUMA"] == v).sum()) for v in puma.values]
    assert sum(expected) == data.n
    assert data.column_counts()[bits.start : bits.stop].tolist() == expected


@pytest.mark.realdata
def test_acs_ma_has_the_columns_of_acs(require_dataset):
    require_dataset("acs")
    require_dataset("acs-ma")
    national, ma = datasets.domain("acs"), datasets.domain("acs-ma")
    assert national.names == ma.names
    for name in ("AGEP", "PINCP", "POVPIP", "DENSITY"):  # the same public bins
        assert ma[name] == national[name]


@pytest.mark.realdata
def test_cps(require_dataset):
    require_dataset("cps")
    table, _ = datasets.load_table("cps")
    data = datasets.load("cps")
    assert (data.n, data.d) == (49_427, 42)
    assert_one_bit_per_group(data)
    sex = data.domain.bits_of("sex")
    assert data.column_counts()[sex.start : sex.stop].tolist() == [
        int((table["sex"] == 1).sum()),
        int((table["sex"] == 2).sum()),
    ]


@pytest.mark.realdata
def test_adult_mwem_column_sums_match_counts(require_dataset, real_data_dir):
    require_dataset("adult-mwem")
    data = datasets.load("adult-mwem")
    assert (data.n, data.d, len(data.onehot_groups)) == (30_163, 27, 0)
    # independent reading of the distinct-records-with-counts file
    raw = (real_data_dir / "adult" / "mwem_mcsherry-adult.txt.gz").read_bytes()
    sums = np.zeros(27, np.int64)
    total = 0
    lines = gzip.decompress(raw).decode().splitlines()
    for line in lines:
        bits, count = line.split("\t")
        assert len(bits) == 27
        sums += int(count) * np.array([c == "1" for c in bits])
        total += int(count)
    assert len(lines) == 7_722 and total == 30_163
    assert data.column_counts().tolist() == sums.tolist()


@pytest.mark.realdata
@pytest.mark.parametrize("name", NAMES)
def test_domain_without_records_equals_the_loaded_one(require_dataset, name):
    require_dataset(name)
    dom = datasets.domain(name)
    _, loaded = datasets.load_table(name)
    assert dom == loaded
    assert not dom.non_private
