"""``dpquery synth`` publishes only the release and its account: evaluation is opt-in (its
own file, labelled NOT PRIVATE on stdout), the report holds no raw noise draw, delta follows
the one default rule and warns at 1/n, and an unseeded run draws from a secure generator."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpquery.algorithms.game.dualquery as dualquery_module
import dpquery.algorithms.game.mwem as mwem_module
import dpquery.algorithms.synthesizer as synthesizer_module
import dpquery.pipeline.fitting as synth_module
import dpquery.pipeline.reports as reports_module
from dpquery.cli import main
from dpquery.data.domain import Binary, Categorical, Domain, Numeric

DOMAIN = Domain(
    (
        Categorical("color", ("red", "green", "blue")),
        Binary("smoker", ("no", "yes")),
        Numeric.equal_width("age", 0, 100, 5),
        Categorical("size", (1, 2, 3, 4)),
    )
)
N = 400


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    table = pd.DataFrame(
        {
            "color": rng.choice(["red", "green", "blue"], N, p=[0.6, 0.3, 0.1]),
            "smoker": rng.choice(["no", "yes"], N),
            "age": np.round(rng.uniform(0, 100, N), 1),
            "size": rng.choice([1, 2, 3, 4], N),
        }
    )
    table.to_csv(tmp_path / "data.csv", index=False)
    DOMAIN.save(tmp_path / "domain.json")
    return tmp_path


def synth(tmp: Path, *extra: str) -> list[str]:
    return [
        "synth", "--data", str(tmp / "data.csv"), "--domain", str(tmp / "domain.json"),
        "--workload", "marginals", "--k", "2", "--queries", "40", "--quiet",
        "--out", str(tmp / "s.csv"), "--report", str(tmp / "r.json"), *extra,
    ]  # fmt: skip


DUALQUERY = ("--algorithm", "dualquery", "--epsilon", "2", "--delta", "1e-6", "--eta", "0.5",
             "--samples", "20")  # fmt: skip
MWEM = ("--algorithm", "mwem", "--epsilon", "1", "--delta", "1e-6", "--T", "8")


def floats(x: object) -> list[float]:
    """Every float in a JSON value."""
    if isinstance(x, float):
        return [x]
    if isinstance(x, dict):
        return [f for v in x.values() for f in floats(v)]
    if isinstance(x, list):
        return [f for v in x for f in floats(v)]
    return []


@pytest.mark.parametrize("algorithm, answered", [(DUALQUERY, [40]), ((), [])],
                         ids=["dualquery", "default"])  # fmt: skip
def test_synth_without_evaluate_computes_and_shows_nothing_beyond_the_release(
    tmp, capsys, monkeypatch, algorithm, answered
) -> None:
    """The true answers are computed once, for the workload, by an algorithm that reads
    them (DualQuery), and never for the default release (it reads counts); the fresh
    workload is generated (public) but never answered."""
    calls = []
    real_answer = synth_module.answer

    def counting_answer(workload, data):
        calls.append(len(workload))
        return real_answer(workload, data)

    def no_evaluation(*args, **kwargs):
        raise AssertionError("the evaluation ran without --evaluate")

    for module in (synth_module, synthesizer_module):
        monkeypatch.setattr(module, "answer", counting_answer)
    monkeypatch.setattr(reports_module, "evaluation_report", no_evaluation)
    budget = () if algorithm else ("--epsilon", "2")
    assert main(synth(tmp, *algorithm, *budget, "--seed", "0")) == 0
    out = capsys.readouterr()
    assert calls == answered
    assert sorted(p.name for p in tmp.iterdir()) == ["data.csv", "domain.json", "r.json", "s.csv"]
    for text in (out.out, out.err):
        assert "error" not in text.lower() and "baseline" not in text.lower()
    report = json.loads((tmp / "r.json").read_text())
    assert set(report) == {"release", "backend"}
    assert "true_answers_s" not in report["release"]["timings"]


def test_evaluate_goes_to_its_own_file_labelled_not_private(tmp, capsys) -> None:
    assert main(synth(tmp, *DUALQUERY, "--seed", "0")) == 0
    plain = ((tmp / "s.csv").read_bytes(), json.loads((tmp / "r.json").read_text()))
    capsys.readouterr()
    args = synth(tmp, *DUALQUERY, "--seed", "0", "--overwrite", "--evaluate")
    args.remove("--quiet")
    assert main(args) == 0
    out = capsys.readouterr().out
    evaluation = json.loads((tmp / "s.evaluation.json").read_text())
    assert evaluation["label"].startswith("NOT PRIVATE")
    assert set(evaluation["errors"]) == {"workload", "fresh_workload"}
    # the numbers and their label share stdout, the label first
    label_at = out.index("NOT PRIVATE")
    assert "max error" in out[label_at:] and "max error" not in out[:label_at]
    # evaluating changes nothing in the release or its report
    assert (tmp / "s.csv").read_bytes() == plain[0]
    report = json.loads((tmp / "r.json").read_text())
    strip = ("timings", "rounds", "oracle_summary")
    assert {k: v for k, v in report["release"].items() if k not in strip} == {
        k: v for k, v in plain[1]["release"].items() if k not in strip
    }


@pytest.mark.parametrize(
    ("extra", "module", "names"),
    [
        (MWEM, mwem_module, ("laplace_mechanism", "gaussian_mechanism")),
        ((*MWEM, "--measurement", "gaussian"), mwem_module, ("gaussian_mechanism",)),
        ((*DUALQUERY, "--free-attributes", "private-density", "--density-epsilon", "0.5"),
         dualquery_module, ("private_density",)),
    ],
    ids=["mwem-laplace", "mwem-gaussian", "dualquery-private-density"],
)  # fmt: skip
def test_report_holds_no_float_from_a_noise_draw(tmp, monkeypatch, extra, module, names) -> None:
    drawn: list[float] = []

    def recording(real):
        def mechanism(*args, **kwargs):
            out = real(*args, **kwargs)
            drawn.extend(np.asarray(out, dtype=float).ravel().tolist())
            return out

        return mechanism

    for name in names:
        monkeypatch.setattr(module, name, recording(getattr(module, name)))
    assert main(synth(tmp, *extra, "--seed", "1")) == 0
    assert drawn, "the mechanism under test drew no noise"
    published = set(floats(json.loads((tmp / "r.json").read_text())))
    leaked = [x for x in drawn if x in published or float(np.clip(x, 0, 1)) in published]
    assert leaked == []


def test_delta_defaults_to_one_over_n_squared(tmp, capsys) -> None:
    """Under replace-one (n public); under add/remove (auto's default) to 1e-9."""
    argv = synth(tmp, "--epsilon", "2", "--seed", "0", "--neighbours", "replace-one")
    assert main(argv) == 0
    budget = json.loads((tmp / "r.json").read_text())["release"]["privacy"]["budget"]
    assert budget["delta"] == 1 / N**2
    assert "warning" not in capsys.readouterr().err
    assert main(synth(tmp, "--epsilon", "2", "--seed", "0", "--overwrite")) == 0
    budget = json.loads((tmp / "r.json").read_text())["release"]["privacy"]["budget"]
    assert budget["delta"] == 1e-9
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize("delta", ["0.0025", "0.01"])  # 1/n and above
def test_delta_of_one_over_n_or_more_is_warned_on_stderr(tmp, capsys, delta) -> None:
    args = synth(tmp, "--epsilon", "2", "--delta", delta)
    assert main([*args, "--seed", "0"]) == 0
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if "warning" in x]
    assert f"delta={float(delta):g}" in line and "1/n" in line


def test_unseeded_release_says_its_noise_is_cryptographic(tmp, capsys) -> None:
    args = synth(tmp, *DUALQUERY)
    args.remove("--quiet")
    assert main(args) == 0
    randomness = json.loads((tmp / "r.json").read_text())["release"]["randomness"]
    assert randomness["cryptographic"] is True
    assert randomness["bit_generator"] == "AESCounter"
    assert "AESCounter" in capsys.readouterr().out


def test_report_states_the_neighbouring_relation(tmp) -> None:
    assert main(synth(tmp, *MWEM, "--seed", "0")) == 0
    privacy = json.loads((tmp / "r.json").read_text())["release"]["privacy"]
    assert privacy["neighbouring"] == "bounded DP (replace one record), n public"
    zcdp = [g for g in privacy["guarantees"] if g["measure"] == "zcdp"]
    assert zcdp and all("conversion" not in g["accountant"] for g in zcdp)
    assert not any(math.isnan(f) for f in floats(privacy))
