"""Seeded releases pinned byte for byte.

Each algorithm runs on a small real instance (six attributes of adult-pgm, 31 bits, every
record) with a fixed seed; the sha256 of its released records (rows, then weights) and the
ledger's charges (mechanism, cost, count, in order) must equal the values recorded from the
code before the estimators were refactored onto one shared shape. A change here means a
release changed: it must be deliberate and explained, never a side effect of a refactor.

Regenerate (only for a deliberate change of outputs):
``DPQUERY_DATA_DIR=... python -m tests.test_pinned_releases``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpquery.algorithms.dqrs import DQRS
from dpquery.algorithms.dualquery import DualQuery
from dpquery.algorithms.fem import FEM, SepFEM
from dpquery.algorithms.mwem import MWEM
from dpquery.algorithms.reweight import Reweighted
from dpquery.data.binary import BinaryData
from dpquery.data.domain import Domain
from dpquery.data.encode import encode
from dpquery.queries import Workload, random_marginal_queries

pytestmark = pytest.mark.realdata

ATTRIBUTES = ["workclass", "marital-status", "relationship", "race", "sex", "income>50K"]

# name -> an estimator factory; each is fitted on the instance below with its own seed.
CASES: dict[str, Callable[[], Any]] = {
    "dualquery-explicit": lambda: DualQuery(eta=1.2, T=6, samples=30, seed=1, progress=False),
    "dualquery-budget-density": lambda: DualQuery(
        epsilon=2.0,
        T=5,
        free_attributes="private-density",
        density_epsilon=0.1,
        samples=40,
        seed=11,
        progress=False,
    ),
    "dualquery-uniform-free": lambda: DualQuery(
        epsilon=1.0, samples=20, free_attributes="uniform", seed=12, progress=False
    ),
    "dqrs": lambda: DQRS(eta=0.1, T=6, samples=40, seed=2),
    "dqrs-budget": lambda: DQRS(epsilon=0.01, delta=1e-6, samples=30, seed=21),
    "fem": lambda: FEM(epsilon=1.0, T=5, samples=4, seed=3, progress=False),
    "fem-size": lambda: FEM(
        epsilon=0.5,
        epsilon0=0.05,
        samples=3,
        size=40,
        free_attributes="uniform",
        seed=31,
        progress=False,
    ),
    "sepfem": lambda: SepFEM(epsilon=1.0, T=5, samples=4, seed=4, progress=False),
    "mwem": lambda: MWEM(epsilon=1.0, T=5, seed=5),
    "mwem-gaussian": lambda: MWEM(epsilon=1.0, delta=1e-6, T=4, measurement="gaussian", seed=51),
    "reweighted-fem": lambda: Reweighted(
        FEM(T=5, samples=4, progress=False), epsilon=1.0, T=4, size=50, seed=6
    ),
    "reweighted-sepfem-rho": lambda: Reweighted(
        SepFEM(T=4, samples=3, progress=False), rho=0.05, T=3, seed=7
    ),
    "reweighted-fem-scaled": lambda: Reweighted(
        FEM(samples=2, progress=False), epsilon=0.05, fraction=0.3, seed=8
    ),
}

# Recorded on the code before the refactor (see the module docstring).
PINNED: dict[str, tuple[str, str]] = {
    "dqrs": (
        "f2dc978d15205f5626834f9935220e93b8a3cd9c20125163c8d5f1874b9e3d2b",
        "b27885381ed7581848acd23870e44f587cb4be6866393ccea5ee033ea62b767a",
    ),
    "dqrs-budget": (
        "ea6186039b3df0e0f5f429ce4c8300c7a49115adf6f5176e5ac32b45b66fd9c3",
        "246ca2ebbf336d3f38a46d3476ea25f027d9643d4cb2b68bd18f52af4047d3ab",
    ),
    "dualquery-budget-density": (
        "c6857f1a3e706626a8ca30bdcae1c3fd895d748664ca198af8bc3354c7916e88",
        "ec0b2a6da303b63c61933ad8adb8a39c4185e05e98a5e8d51b30ddd4e41ac68b",
    ),
    "dualquery-explicit": (
        "e6293a26d3da8bc9e91780f301d0a141cc8d914d3b7aa7e88ad72517d027879d",
        "a2920a69649554c5b13ace68608c0bae8240c57d9a09f3f2a26919d9d7512c08",
    ),
    "dualquery-uniform-free": (
        "75f595aa3e0c2657a17861effd8d012c8475dceacf268bc245a91dfc6e8118bc",
        "3e3ccfbd71d7422c3ddf5f2b09e7c19a5ad64b4414b1977feec6a8216801a525",
    ),
    "fem": (
        "4a8ff220276c952422a8dfeef269c6bb04e6813f0d92aed950b08fdb3fec48b3",
        "c946ceb2b7f4aff35b7305d12a47874f5e89fe84269a79cc8cc09446858876e3",
    ),
    "fem-size": (
        "330b5826e6dcdc4b3a77dd3e00aa702eee29a8681400f4c3b71ec5d50d480322",
        "7281ff4344aefbe10d1e5b30f408ef2955efa8a18a487c722834ad24dfcb08c4",
    ),
    "mwem": (
        "b30572438d5c16475ce4b657546507d1c8b85ad90b573d65e47ac348c507624d",
        "1f2e318c04015f2ecabbc260daaff4973fe534124e9d7d31ad8508bdf1bf3976",
    ),
    "mwem-gaussian": (
        "0619016496805f810e81d1f24d85cfae4d2326878786ecc6e2ff9252a3959dbd",
        "3e286827afb8dcbf8ddf92bd476e889c5f53233cd62386481d4d87b83995918d",
    ),
    "reweighted-fem": (
        "71dc1d0736f6af076a4e8b432019b89678b4fec4c590fedf0db5b907155d466f",
        "a95c959e162319671e4edae55c2b18647ac1694bebddae5f97ddeca922fdaa4a",
    ),
    "reweighted-fem-scaled": (
        "6e6d477cc58f4c609bd80aee4ac0d79402c05d2b5b023692880cea26928f453f",
        "dfc3bc9213c00e6152e26f5ba70879bbb5792edeb6dc3157e965bd7ea50bbee2",
    ),
    "reweighted-sepfem-rho": (
        "dffc18e7aad2f92853d71d781d053abd75ab027753876361219d99c53fc89ddb",
        "5c04984e80320bf40cbc4d84bf0c1002e67314e5eb91c41dbe62b157fde20443",
    ),
    "sepfem": (
        "06e875f5c509fb40d8959bf2102c342300633044627a4bebc352e71cdc876a9e",
        "c946ceb2b7f4aff35b7305d12a47874f5e89fe84269a79cc8cc09446858876e3",
    ),
}
CLI_PINNED: dict[str, str] = {
    "dualquery": "35338e292ef8361baac4390557fa330c4d22e3c7b0189c4dc5dbaf6bcc3abd5d",
    "fem": "b6175c2ad9cfcf383c4241f5d778ddd308065a3d0badd72a2700c0e74d83357e",
    "fem-reweight": "f4d92205cbbceae8c680700db664135c5667685f0e0893661583ff6733111043",
}


def instance() -> tuple[BinaryData, Workload, Any, Domain]:
    from dpquery import datasets

    table, full = datasets.load_table("adult-pgm")
    domain = Domain(tuple(full[a] for a in ATTRIBUTES))
    table = table[ATTRIBUTES]
    data = encode(table, domain)
    workload = random_marginal_queries(domain, 3, 60, seed=9)
    return data, workload, table, domain


def digest_records(records: Any) -> str:
    h = hashlib.sha256(np.ascontiguousarray(records.rows, dtype=np.uint8).tobytes())
    if records.weights is not None:
        h.update(np.ascontiguousarray(records.weights, dtype=np.float64).tobytes())
    return h.hexdigest()


def digest_ledger(ledger: Any) -> str:
    lines = [repr(ledger.budget)]
    lines += [f"{e.charge.mechanism}|{e.charge.cost!r}|{e.charge.count}" for e in ledger.entries]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def release_digests(name: str, data: BinaryData, workload: Workload) -> tuple[str, str]:
    release = CASES[name]().fit(data, workload)
    return digest_records(release.records), digest_ledger(release.ledger)


# The CLI writes the decoded table: its bytes pin the whole path (flags -> estimator -> decode).
CLI_CASES: dict[str, list[str]] = {
    "fem": ["--algorithm", "fem", "--epsilon", "1", "--T", "4", "--samples", "3"],
    "fem-reweight": [
        "--algorithm",
        "fem",
        "--epsilon",
        "1",
        "--T",
        "4",
        "--samples",
        "3",
        "--reweight",
        "0.4",
        "--reweight-rounds",
        "3",
    ],
    "dualquery": ["--algorithm", "dualquery", "--eta", "1.2", "--T", "5", "--samples", "20"],
}


def cli_digest(name: str, folder: Path, table: Any, domain: Domain) -> str:
    from dpquery.cli import main

    csv, dom, out = folder / "data.csv", folder / "domain.json", folder / f"{name}.csv"
    if not csv.exists():
        table.to_csv(csv, index=False)
        domain.save(dom)
    argv = ["synth", "--data", str(csv), "--domain", str(dom), "--workload", "marginals",
            "--queries", "40", "--seed", "13", "--quiet", "--out", str(out)]  # fmt: skip
    argv += CLI_CASES[name]
    assert main(argv) == 0
    return hashlib.sha256(out.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def pinned_instance(require_dataset: Callable[[str], Path]) -> tuple:
    require_dataset("adult-pgm")
    return instance()


@pytest.mark.parametrize("name", sorted(CASES))
def test_release_is_byte_identical(name: str, pinned_instance: tuple) -> None:
    data, workload, _, _ = pinned_instance
    assert release_digests(name, data, workload) == PINNED[name]


@pytest.mark.parametrize("name", sorted(CLI_CASES))
def test_cli_output_is_byte_identical(
    name: str, pinned_instance: tuple, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, _, table, domain = pinned_instance
    assert cli_digest(name, tmp_path, table, domain) == CLI_PINNED[name]


if __name__ == "__main__":  # print the tables above from the current code
    import tempfile

    data, workload, table, domain = instance()
    print("PINNED: dict[str, tuple[str, str]] = {")
    for name in sorted(CASES):
        print(f"    {name!r}: {release_digests(name, data, workload)!r},")
    print("}")
    with tempfile.TemporaryDirectory() as tmp:
        print("CLI_PINNED: dict[str, str] = {")
        for name in sorted(CLI_CASES):
            print(f"    {name!r}: {cli_digest(name, Path(tmp), table, domain)!r},")
        print("}")
