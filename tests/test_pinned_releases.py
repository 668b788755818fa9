"""Seeded releases pinned byte for byte.

Each algorithm runs on a small real instance (six attributes of adult-pgm, 31 bits, every
record) with a fixed seed; the sha256 of its released records (rows, then weights) and the
ledger's charges (mechanism, cost, count, in order) must equal the recorded values. They were
first recorded before the estimators were refactored onto one shared shape (the refactor kept
every one); they were recorded again when the exponential mechanism's sampler became exact and
DQRS's rejection coins exact Bernoulli draws, and the private density discrete Laplace noise
on counts, which changes the records drawn for a seed and not the charges (every ledger digest
stayed the same but the private density's, whose mechanism was renamed); the private density's
records once more when its discrete Laplace noise moved to the one exact sampler of
:mod:`dpquery.privacy.discrete` (same distribution, other draws; charges unchanged). The
command line's tables (not the releases) were recorded again when ``dpquery synth`` began
writing ``n`` rows sampled from the release, in the domain's output dtypes, instead of the
released records, and again when the rows were ordered by the largest attributes before
the systematic comb (:mod:`dpquery.data.sample`; the releases unchanged). The releases
that draw from :func:`~dpquery.privacy.sampling.sample_from_log_weights` have a second set of
records' digests (``AVX512``): its integer proposal weights read the last bits of numpy's
``exp``, whose AVX-512 path rounds some values otherwise than the C library's ``exp`` that
numpy calls on other CPUs, so a seed draws other (equally exact) samples on CPUs with
AVX-512; the charges are the same. The default
release (``adaptive-projection``, and ``dpquery synth`` with no ``--algorithm``) was first
pinned when its measurements moved from float Gaussian noise to the exact discrete Gaussian
of :mod:`dpquery.privacy.integer_mechanisms` (same rho; with the float noise these two cases
gave 5904610145a6... / 75a3e71ca0fd... and 4f754b740f5b...). Both run under replace-one
neighbours (``neighbours="replace-one"``, ``--neighbours replace-one``): the default relation
of adaptive-projection and ``auto`` is add/remove, and replace-one is pinned to the bytes it
had as the only relation. A change
here means a release changed: it must be deliberate and explained, never a side effect of a
refactor.

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

from dpquery.algorithms.game.dqrs import DQRS
from dpquery.algorithms.game.dualquery import DualQuery
from dpquery.algorithms.game.fem import FEM, SepFEM
from dpquery.algorithms.game.mwem import MWEM
from dpquery.algorithms.game.reweight import Reweighted
from dpquery.algorithms.marginal.adaptive_projection import AdaptiveProjection
from dpquery.data.binary import BinaryData
from dpquery.data.domain import Domain
from dpquery.data.encode import encode
from dpquery.queries import Workload, random_marginal_queries

pytestmark = pytest.mark.realdata

ATTRIBUTES = ["workclass", "marital-status", "relationship", "race", "sex", "income>50K"]

# name -> an estimator factory; each is fitted on the instance below with its own seed.
CASES: dict[str, Callable[[], Any]] = {
    "adaptive-projection": lambda: AdaptiveProjection(
        epsilon=1.0, seed=14, progress=False, neighbours="replace-one"
    ),
    "dualquery-explicit": lambda: DualQuery(eta=1.2, T=6, samples=30, seed=1, progress=False),
    "dualquery-budget-density": lambda: DualQuery(
        epsilon=2.0,
        delta=0.0,
        T=5,
        free_attributes="private-density",
        density_epsilon=0.1,
        samples=40,
        seed=11,
        progress=False,
    ),
    "dualquery-uniform-free": lambda: DualQuery(
        epsilon=1.0, delta=0.0, samples=20, free_attributes="uniform", seed=12, progress=False
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
    "mwem": lambda: MWEM(epsilon=1.0, delta=0.0, T=5, seed=5),
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

# Recorded with the exact samplers (see the module docstring).
PINNED: dict[str, tuple[str, str]] = {
    "adaptive-projection": (
        "f1e8b71b451827da22329371fc1f9c4da1150d5c72ab2f27f78029c53a456301",
        "999ef5f2f3acaab3b67a00d9b68da2498f08e268fe370e075b9637bc2a79562c",
    ),
    "dqrs": (
        "5b485e5f2c16f8441a29161cd2d873bc4de93c85b9b9610c1487afc547d300e5",
        "b27885381ed7581848acd23870e44f587cb4be6866393ccea5ee033ea62b767a",
    ),
    "dqrs-budget": (
        "5c2e15b7119c69d02178ff57f7d3fe9186a396dc522cf2e4b5ebe7a9b977650a",
        "246ca2ebbf336d3f38a46d3476ea25f027d9643d4cb2b68bd18f52af4047d3ab",
    ),
    "dualquery-budget-density": (
        "020d7f5a1c23b8ae84d8aecc53a4cfa0fad3e3674215227d05f199d4b5949e8f",
        "3e3fe076e184278db5f80ef469f018589f8ee1e9965e34a79d0c48b3a8f155b7",
    ),
    "dualquery-explicit": (
        "d976b1e04d445ab1596a01165e017c2265974d30bc63e5a0a4b35da28efb9423",
        "a2920a69649554c5b13ace68608c0bae8240c57d9a09f3f2a26919d9d7512c08",
    ),
    "dualquery-uniform-free": (
        "63f2350d37d5dd84f911a9bf9da126dde38158cad6bb2b3371dc13df356048c1",
        "3e3ccfbd71d7422c3ddf5f2b09e7c19a5ad64b4414b1977feec6a8216801a525",
    ),
    "fem": (
        "8b7aa0a749127f6f8b1af79027a2310a868dfd41a9e1f85f157931d2f5b56243",
        "c946ceb2b7f4aff35b7305d12a47874f5e89fe84269a79cc8cc09446858876e3",
    ),
    "fem-size": (
        "dafa53cc6838adbffb3ec9844dd79007877602656801075784883e293ed9583b",
        "7281ff4344aefbe10d1e5b30f408ef2955efa8a18a487c722834ad24dfcb08c4",
    ),
    "mwem": (
        "06c99a6f739585c52af82fb350b6b47af2c5ffab1e60a6eea942553e81b99d5e",
        "1f2e318c04015f2ecabbc260daaff4973fe534124e9d7d31ad8508bdf1bf3976",
    ),
    "mwem-gaussian": (
        "032edfdf6d3270852532d639b550b3808c77ed776e8962344c089aa963111447",
        "3e286827afb8dcbf8ddf92bd476e889c5f53233cd62386481d4d87b83995918d",
    ),
    "reweighted-fem": (
        "dc3da8379251fc641e3f152c6054b8cb3cce154ae486d108b878905d60c05a83",
        "a95c959e162319671e4edae55c2b18647ac1694bebddae5f97ddeca922fdaa4a",
    ),
    "reweighted-fem-scaled": (
        "71937d0ca091fe2b12d5ee28cf97d7e14123792c9d2aa20121c503186d97fca5",
        "dfc3bc9213c00e6152e26f5ba70879bbb5792edeb6dc3157e965bd7ea50bbee2",
    ),
    "reweighted-sepfem-rho": (
        "3888b08215b6f3c9f65a561ba1abf80dab425ec8d83e4e2bf8ff7c4bd3e4f1c4",
        "5c04984e80320bf40cbc4d84bf0c1002e67314e5eb91c41dbe62b157fde20443",
    ),
    "sepfem": (
        "43953bb76bfc97c60233f97f07a1916555ec0cce3d477cbe157c5890146ef6af",
        "c946ceb2b7f4aff35b7305d12a47874f5e89fe84269a79cc8cc09446858876e3",
    ),
}
CLI_PINNED: dict[str, str] = {
    "auto": "9338c6efa2d6a2d6d9842af821c8b2d5895f17311fabed65fc33f79c43c1b8e3",
    "dualquery": "f36ffc135f15d01023af05641adcb2552cdff7db00247440a6a2d7f3d93ef6b8",
    "fem": "654399bbd4ce9da09f864891ea96d358efe71a2cdab2f051989f4a9966881330",
    "fem-reweight": "6a700bc5b7560d19fa8aa6f207cb7c6a0028f9bf3a6141f5abe30bca21087252",
}

# The records' digests on CPUs where numpy's float64 exp takes its AVX-512 path (module
# docstring): the releases that draw through the exact sampler, and the CLI's table of one.
AVX512: dict[str, str] = {
    "dqrs": "5dedc08544dedf7a94fb675ebeedc6ed705a0adcc23a9086f660634c131c20f7",
    "dqrs-budget": "2a4d71d5e9f9bdef203e6e2de425740fcff0cd33b2a0e17e7d9d01a025a9a236",
    "dualquery-budget-density": "15fc8f596babb9e125c5f34ec861fe8ef65648516d549dc0896466761569d0d0",
    "dualquery-explicit": "1aa5d8b668a2e63fb6263da4093ab0c19392f3ac77eb091268c9dd7f1c54a6c1",
    "dualquery-uniform-free": "c72362c729001ac22a8fb79374f5f4ab9421c957d6bf7605570d6e7e8da8c804",
    "reweighted-fem-scaled": "30b79b52e1b4d9e28beb4bf03c3dca37c39a735404aca7f2007c811dda3865cf",
}
CLI_AVX512: dict[str, str] = {
    "dualquery": "81d7a786a5afc8d0c873718c65b7507e58fdc2a4e8e137b167359bfefc4c4507",
}


def avx512() -> bool:
    """Whether numpy's float64 exp runs its AVX-512 path on this CPU."""
    from numpy._core._multiarray_umath import __cpu_features__

    return bool(__cpu_features__.get("AVX512F"))


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
    # the default release (adaptive-projection), under replace-one: n public, n rows
    "auto": ["--epsilon", "1", "--neighbours", "replace-one"],
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
    records, ledger = PINNED[name]
    if avx512() and name in AVX512:
        records = AVX512[name]
    assert release_digests(name, data, workload) == (records, ledger)


@pytest.mark.parametrize("name", sorted(CLI_CASES))
def test_cli_output_is_byte_identical(
    name: str, pinned_instance: tuple, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, _, table, domain = pinned_instance
    expected = CLI_AVX512.get(name, CLI_PINNED[name]) if avx512() else CLI_PINNED[name]
    assert cli_digest(name, tmp_path, table, domain) == expected


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
