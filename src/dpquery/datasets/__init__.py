"""Real datasets of the papers, read from local files.

Files are looked up in ``$DPQUERY_DATA_DIR``, then ``~/.cache/dpquery``, then the files
shipped inside the package (Adult, CC BY 4.0: ``adult`` and ``adult-pgm`` work with no data
folder and no network; see ``datasets/data/adult/README.md``), under the layout of
``shared/data`` (``adult/adult.data.gz``, ``kdd99/kddcup.data_10_percent.gz``, ...); a file
may also be stored uncompressed (without ``.gz``). Nothing is downloaded unless asked:
:func:`fetch` (``dpquery datasets fetch NAME``) downloads from the official source, checks
its sha256, and leaves the destination as it was when anything fails.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import tempfile
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dpquery.data.binary import BinaryData
from dpquery.data.domain import Domain
from dpquery.data.encode import encode, read_table
from dpquery.datasets import domains
from dpquery.errors import DatasetNotFoundError, DPQueryError
from dpquery.io import atomic_path

DATA_DIR_ENV = "DPQUERY_DATA_DIR"
SHIPPED_DIR = Path(__file__).resolve().parent / "data"
"""Package data: the datasets small and open enough to install with dpquery."""


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset: where it lives locally and, when known, where it comes from.

    ``sha256`` is of the content as served at ``url`` (stored gzip-compressed when
    ``path`` ends in ``.gz`` and the source does not).
    """

    path: str
    url: str | None = None
    sha256: str | None = None


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    description: str
    rows: int
    files: tuple[DataFile, ...]
    source: str

    @property
    def downloadable(self) -> bool:
        """Whether every file has an official source and checksum (:func:`fetch` gets it)."""
        return all(f.url is not None and f.sha256 is not None for f in self.files)

    def how_to_get(self, dest: Path | None = None) -> str:
        """How to get the files: the one answer every message about this dataset gives."""
        paths = ", ".join(f.path for f in self.files)
        if self.downloadable:
            return (
                f"run 'dpquery datasets fetch {self.name}' (official source, sha256-checked), "
                f"or set ${DATA_DIR_ENV} to a folder holding {paths}"
            )
        return (
            f"it has no official download: copy {paths} by hand into the folder "
            f"${DATA_DIR_ENV} names, or into {dest or cache_dir()} (source: {self.source})"
        )


DATASETS: dict[str, DatasetInfo] = {
    info.name: info
    for info in (
        DatasetInfo(
            "adult",
            "UCI Adult training file, rows with missing values removed, DualQuery's bucketing",
            30_162,
            (
                DataFile(
                    "adult/adult.data.gz",
                    "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.data",
                    "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
                ),
            ),
            "Becker & Kohavi (1996), UCI ML Repository, CC BY 4.0",
        ),
        DatasetInfo(
            "adult-pgm",
            "Adult as discretised by private-pgm and used by the FEM paper (integer codes)",
            48_842,
            (
                DataFile(
                    "adult/pgm_adult.csv.gz",
                    "https://raw.githubusercontent.com/ryan112358/private-pgm/"
                    "4d2b3c566b148da3ef800ce76e6189c548f2da22/data/adult.csv",
                    "de1b8341b65de6081d50863b9c15b90ed976e7e47322a7efc37968db98705400",
                ),
                DataFile(
                    "adult/pgm_adult-domain.json",
                    "https://raw.githubusercontent.com/ryan112358/private-pgm/"
                    "4d2b3c566b148da3ef800ce76e6189c548f2da22/data/adult-domain.json",
                    "734f07d75cbc2acbe711984e6db520b3e95c9c727cf448c528ce0b38347bb147",
                ),
            ),
            "private-pgm (McKenna), Apache-2.0; UCI Adult",
        ),
        DatasetInfo(
            "kdd99",
            "KDD Cup 99 10% training file, 41 features with DualQuery's bucketing (396 bits)",
            494_021,
            (
                DataFile(
                    "kdd99/kddcup.data_10_percent.gz",
                    "http://kdd.ics.uci.edu/databases/kddcup99/kddcup.data_10_percent.gz",
                    "8045aca0d84e70e622d1148d7df782496f6333bf6eb979a1b0837c42a9fd9561",
                ),
            ),
            "Stolfo et al., UCI KDD archive, CC BY 4.0",
        ),
        DatasetInfo(
            "acs",
            "NIST excerpt of the 2019 ACS PUMS (national), weights excluded",
            27_253,
            (
                DataFile("acs/nist_national2019.csv.gz"),
                DataFile("acs/nist_national2019-schema.json"),
            ),
            "US Census Bureau ACS 2019 via NIST SDNist (copy the files by hand)",
        ),
        DatasetInfo(
            "acs-ma",
            "NIST excerpt of the 2019 ACS PUMS (Massachusetts, 5 PUMAs), the columns of acs",
            7_634,
            (
                DataFile("acs/nist_ma2019.csv.gz"),
                DataFile("acs/nist_ma2019-schema.json"),
            ),
            "US Census Bureau ACS 2019 via NIST SDNist (copy the files by hand)",
        ),
        DatasetInfo(
            "cps",
            "Current Population Survey extract used by the HDMM paper",
            49_427,
            (DataFile("census_cps/hdmm_CPS.csv.gz"),),
            "US Census CPS via dpcomp-org/hdmm (copy the file by hand)",
        ),
        DatasetInfo(
            "adult-mwem",
            "The MWEM paper's 27-bit binarised Adult (distinct records with counts, expanded)",
            30_163,
            (DataFile("adult/mwem_mcsherry-adult.txt.gz"),),
            "McSherry, via ejgallego/dualquery (copy the file by hand)",
        ),
    )
}


def info(name: str) -> DatasetInfo:
    try:
        return DATASETS[name]
    except KeyError:
        raise DPQueryError(
            f"unknown dataset {name!r}; expected one of {sorted(DATASETS)}"
        ) from None


def cache_dir() -> Path:
    """``~/.cache/dpquery``: where :func:`fetch` stores downloads by default."""
    return Path.home() / ".cache" / "dpquery"


def search_dirs() -> list[Path]:
    """Where dataset files are looked for, in order: ``$DPQUERY_DATA_DIR`` (when set), the
    cache, the files shipped with the package."""
    dirs = []
    if os.environ.get(DATA_DIR_ENV):
        dirs.append(Path(os.environ[DATA_DIR_ENV]).expanduser())
    dirs.append(cache_dir())
    dirs.append(SHIPPED_DIR)
    return dirs


def _locate_file(f: DataFile) -> Path | None:
    for base in search_dirs():
        for candidate in (base / f.path, base / f.path.removesuffix(".gz")):
            if candidate.is_file():
                return candidate
    return None


def locate(name: str) -> dict[str, Path]:
    """Local paths of a dataset's files, or an error saying where they were looked for."""
    found: dict[str, Path] = {}
    for f in info(name).files:
        path = _locate_file(f)
        if path is None:
            where = ", ".join(str(d) for d in search_dirs())
            raise DatasetNotFoundError(
                f"dataset {name!r}: file {f.path} not found in {where}; " + info(name).how_to_get()
            )
        found[f.path] = path
    return found


def source_of(name: str) -> str | None:
    """Where a dataset is found: ``"$DPQUERY_DATA_DIR"``, ``"cache"``, ``"shipped"`` (the
    folder of its first file), or None when a file is missing."""
    try:
        first = next(iter(locate(name).values()))
    except DatasetNotFoundError:
        return None
    if first.is_relative_to(SHIPPED_DIR):
        return "shipped"
    if first.is_relative_to(cache_dir()):
        return "cache"
    return f"${DATA_DIR_ENV}"


def available(name: str) -> bool:
    try:
        locate(name)
    except DatasetNotFoundError:
        return False
    return True


# -- readers: each returns the raw table and its public domain ----------------------------
def _read_adult(paths: dict[str, Path]) -> tuple[pd.DataFrame, Domain]:
    table = pd.read_csv(
        paths["adult/adult.data.gz"], header=None, names=list(domains.ADULT_COLUMNS),
        skipinitialspace=True, na_values="?", dtype={c: str for c in domains.ADULT_COLUMNS
        if c not in ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss",
                     "hours-per-week")},
    )  # fmt: skip
    # The papers' protocol: drop the 2,399 training rows with a missing value.
    return table.dropna().reset_index(drop=True), domains.adult_domain()


def _read_adult_pgm(paths: dict[str, Path]) -> tuple[pd.DataFrame, Domain]:
    domain = domains.pgm_domain(paths["adult/pgm_adult-domain.json"])
    return pd.read_csv(paths["adult/pgm_adult.csv.gz"]), domain


def _read_kdd99(paths: dict[str, Path]) -> tuple[pd.DataFrame, Domain]:
    names = [b[0] for b in domains.KDD99_BUCKETS] + ["label"]
    dtype = {n: str for n in domains.KDD99_SYMBOLIC}
    table = pd.read_csv(paths["kdd99/kddcup.data_10_percent.gz"], header=None, names=names,
                        dtype=dtype)  # fmt: skip
    return table, domains.kdd99_domain()


def _read_acs_excerpt(
    paths: dict[str, Path], stem: str, region: str
) -> tuple[pd.DataFrame, Domain]:
    """A NIST ACS excerpt ``acs/nist_<stem>2019.csv.gz`` over the domain its own published
    schema gives (``acs`` and ``acs-ma`` share the columns, not the category lists)."""
    domain = domains.acs_domain(paths[f"acs/nist_{stem}2019-schema.json"], region)
    numeric = ["AGEP", "PINCP", "POVPIP", "DENSITY"]
    table = read_table(paths[f"acs/nist_{stem}2019.csv.gz"], domain)
    table[numeric] = table[numeric].replace("N", np.nan).apply(pd.to_numeric)
    return table, domain


def _read_acs(paths: dict[str, Path]) -> tuple[pd.DataFrame, Domain]:
    return _read_acs_excerpt(paths, "national", "national")


def _read_acs_ma(paths: dict[str, Path]) -> tuple[pd.DataFrame, Domain]:
    return _read_acs_excerpt(paths, "ma", "massachusetts")


def _read_cps(paths: dict[str, Path]) -> tuple[pd.DataFrame, Domain]:
    return pd.read_csv(paths["census_cps/hdmm_CPS.csv.gz"]), domains.cps_domain()


def _read_adult_mwem(paths: dict[str, Path]) -> tuple[pd.DataFrame, Domain]:
    raw = pd.read_csv(paths["adult/mwem_mcsherry-adult.txt.gz"], sep="\t", header=None,
                      names=["bits", "count"], dtype={"bits": str})  # fmt: skip
    bits = np.array([list(s) for s in raw["bits"]], dtype=np.uint8)
    rows = np.repeat(bits, raw["count"].to_numpy(), axis=0)
    domain = domains.mwem_adult_domain()
    return pd.DataFrame(rows, columns=list(domain.names)), domain


_READERS: dict[str, Callable[[dict[str, Path]], tuple[pd.DataFrame, Domain]]] = {
    "adult": _read_adult,
    "adult-pgm": _read_adult_pgm,
    "kdd99": _read_kdd99,
    "acs": _read_acs,
    "acs-ma": _read_acs_ma,
    "cps": _read_cps,
    "adult-mwem": _read_adult_mwem,
}


def load_table(name: str) -> tuple[pd.DataFrame, Domain]:
    """The dataset as a table in its own columns, and its public domain."""
    return _READERS[info(name).name](locate(name))


def load(name: str) -> BinaryData:
    """The dataset encoded to bits over its public domain (attached as ``.domain``)."""
    table, domain = load_table(name)
    return encode(table, domain)


def domain(name: str) -> Domain:
    """The public domain of a dataset, without reading its records."""
    builders: dict[str, Callable[[], Domain]] = {
        "adult": domains.adult_domain,
        "kdd99": domains.kdd99_domain,
        "cps": domains.cps_domain,
        "adult-mwem": domains.mwem_adult_domain,
        "adult-pgm": lambda: domains.pgm_domain(_domain_file(name, "adult/pgm_adult-domain.json")),
        "acs": lambda: domains.acs_domain(_domain_file(name, "acs/nist_national2019-schema.json")),
        "acs-ma": lambda: domains.acs_domain(
            _domain_file(name, "acs/nist_ma2019-schema.json"), "massachusetts"
        ),
    }
    return builders[info(name).name]()


def _domain_file(name: str, path: str) -> Path:
    found = _locate_file(DataFile(path))
    if found is None:
        locate(name)  # raises the full not-found message
    assert found is not None
    return found


def _download(url: str, path: Path) -> None:
    """Copy ``url`` to ``path`` (the one network access in dpquery)."""
    with urllib.request.urlopen(url, timeout=60) as resp, path.open("wb") as fh:
        shutil.copyfileobj(resp, fh)


def _fetch_file(f: DataFile, target: Path, tmp: Path) -> None:
    """Download ``f`` into the scratch folder ``tmp``, check its sha256, then write it to
    ``target`` atomically (gzip-compressed when the source is plain)."""
    assert f.url is not None and f.sha256 is not None
    raw = tmp / "download"
    try:
        _download(f.url, raw)
    except OSError as exc:
        raise DPQueryError(f"cannot download {f.url}: {exc}") from None
    digest = hashlib.sha256(raw.read_bytes()).hexdigest()
    if digest != f.sha256:
        raise DPQueryError(
            f"{f.url}: sha256 {digest} does not match the expected {f.sha256}; "
            "the file was not saved"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as staged:  # a temporary file beside target until complete
        if f.path.endswith(".gz") and not f.url.endswith(".gz"):
            with raw.open("rb") as src, gzip.open(staged, "wb") as dst:
                shutil.copyfileobj(src, dst)
        else:
            shutil.copyfile(raw, staged)


def _missing_dirs(path: Path) -> list[Path]:
    """The folders that creating ``path`` would create, deepest first."""
    return [p for p in (path, *path.parents) if not p.exists()]


def fetch(name: str, *, dest: Path | None = None, force: bool = False) -> dict[str, Path]:
    """Download a dataset's files from their official sources into ``dest`` (default
    ``~/.cache/dpquery``), checking each sha256. The only network access in dpquery.

    All or nothing: when any file fails (network, checksum, no official source), the files
    and folders this call created are removed, so ``dest`` is left as it was.
    """
    dataset = info(name)
    dest = dest or cache_dir()
    todo = [f for f in dataset.files if force or not (dest / f.path).exists()]
    if todo and not dataset.downloadable:
        raise DPQueryError(f"dataset {name!r}: {dataset.how_to_get(dest)}")
    created = {d for f in todo for d in _missing_dirs((dest / f.path).parent)}
    new = [dest / f.path for f in todo if not (dest / f.path).exists()]
    try:
        with tempfile.TemporaryDirectory(prefix="dpquery-fetch-") as tmp:
            for f in todo:
                _fetch_file(f, dest / f.path, Path(tmp))
    except BaseException:
        for path in new:
            path.unlink(missing_ok=True)
        for folder in sorted(created, key=lambda p: len(p.parts), reverse=True):
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        raise
    return {f.path: dest / f.path for f in dataset.files}


__all__ = [
    "DATASETS", "DataFile", "DatasetInfo", "available", "domain", "fetch", "info", "load",
    "load_table", "locate", "search_dirs", "source_of",
]  # fmt: skip
