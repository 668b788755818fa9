"""``dpquery privacy synth``: the plan of a ``dpquery synth`` run, from public sizes alone,
is what the run then charges."""

from __future__ import annotations

import json

from tests.cli_process import dpquery_cli

# Three attributes of adult's fifteen: the other twelve are measured as 1-way marginals first.
RUN = "--dataset adult --algorithm dualquery --epsilon 1 --T 3 --workload all-marginals".split()
RUN += "--attributes age sex education --k 2".split()


def test_the_plan_is_what_synth_then_charges(tmp_path):
    plan = dpquery_cli("privacy", "synth", *RUN, "--json")
    assert plan.code == 0, plan.err
    planned = json.loads(plan.out)
    assert planned["untouched"]["share"] == 0.01
    assert len(planned["untouched"]["attributes"]) == 12
    assert "age" not in planned["untouched"]["attributes"]
    out, report = tmp_path / "s.csv", tmp_path / "r.json"
    run = dpquery_cli("synth", *RUN, "--out", str(out), "--report", str(report), "--seed", "1")
    assert run.code == 0, run.err
    spent = json.loads(report.read_text())["release"]["privacy"]
    assert planned["charges"] == spent["per_mechanism"]
    assert planned["charges"][0]["mechanism"] == "untouched attributes: 1-way marginals"
    assert planned["budget"] == spent["budget"]


def test_the_text_plan_leads_with_the_budget_and_says_where_the_rest_goes():
    text = dpquery_cli(
        "privacy", "synth", "--dataset", "adult-pgm", "--algorithm", "adaptive-projection",
        "--epsilon", "1", "--workload", "all-marginals", "--k", "3", "--neighbours",
        "replace-one",
    )  # fmt: skip
    assert text.code == 0, text.err
    lines = text.out.splitlines()
    assert "no data read" in lines[0]
    assert lines[1].strip() == "neighbours: replace one record (n public)"
    assert lines[2].strip().startswith("budget: (epsilon=1, delta=4.19e-10)-DP")
    assert "untouched attributes: none" in text.out
    assert "spent by adaptive rounds, each charged before it draws" in text.out


def test_the_shape_must_be_given_publicly(tmp_path):
    neither = dpquery_cli("privacy", "synth", "--algorithm", "fem", "--epsilon", "1")
    assert neither.code != 0 and "give --dataset NAME, or --domain DOMAIN.json" in neither.err
    domain = tmp_path / "d.json"
    domain.write_text(json.dumps({"a": 2, "b": 3}))
    no_n = dpquery_cli("privacy", "synth", "--domain", str(domain), "--epsilon", "1")
    assert no_n.code != 0 and "--domain needs --n" in no_n.err
    zero = dpquery_cli("privacy", "synth", "--domain", str(domain), "--n", "0", "--epsilon", "1")
    assert zero.code != 0 and "n must be a positive number of records, got 0" in zero.err
    assert "Traceback" not in neither.err + no_n.err + zero.err


def test_data_is_refused_by_name_not_read_as_a_dataset(tmp_path):
    # argparse read --data as an abbreviation of --dataset: "unknown dataset 'T.csv'"
    table = tmp_path / "T.csv"
    table.write_text("a,b\n1,x\n2,y\n")
    plan = dpquery_cli("privacy", "synth", "--data", str(table), "--epsilon", "1")
    assert plan.code == 2
    assert "reads no data, so it takes no --data" in plan.err and "--n N" in plan.err
    assert "unknown dataset" not in plan.err and "Traceback" not in plan.err
    assert plan.out == ""


def test_the_default_plan_names_auto_s_choice_and_why():
    text = dpquery_cli("privacy", "synth", "--dataset", "adult", "--epsilon", "1", "--json")
    assert text.code == 0, text.err
    planned = json.loads(text.out)
    assert planned["algorithm"] == "auto"
    assert planned["workload"]["kind"] == "default"
    assert planned["auto"]["algorithm"] == "adaptive-projection"
    assert "fit adaptive-projection" in planned["auto"]["reason"]
    assert planned["remaining"]["use"] == "adaptive"
