"""``dpquery online``: JSON lines in and out, errors, and crash-resume under SIGKILL."""

from __future__ import annotations

import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpquery.cli import main
from dpquery.data.binary import BinaryData, save_binary
from dpquery.data.domain import Domain
from dpquery.privacy import Budget, Ledger, PureDP

D = 5


@pytest.fixture()
def data_file(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    rows = (rng.random((4000, D)) < np.linspace(0.1, 0.6, D)).astype(np.uint8)
    path = tmp_path / "data.npz"
    save_binary(path, BinaryData.from_dense(rows, domain=Domain.binary(D)))
    return path


def query_lines() -> list[str]:
    out = []
    for i, j in itertools.combinations(range(D), 2):
        for vi, vj in itertools.product((0, 1), repeat=2):
            lits = [[f"x{i}", vi, True], [f"x{j}", vj, True]]
            out.append(json.dumps({"kind": "conjunction", "literals": lits}))
    return out


def stored_spent(state: Path) -> tuple[float, int]:
    """What the state file says was spent (replayed into a ledger) and answered."""
    with sqlite3.connect(state) as conn:
        ledger = Ledger(Budget.approx(1.0, 1e-6))
        for mech, eps, br, count in conn.execute(
            "SELECT mechanism, epsilon, bounded_range, count FROM charges ORDER BY idx"
        ):
            ledger.charge(mech, PureDP(eps, bounded_range=bool(br)), count=count)
        answered = conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0]
    return ledger.spent, answered


def start(args: list[str]) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [sys.executable, "-c", "import sys; from dpquery.cli import main; sys.exit(main())",
         "online", *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def test_crash_resume_sigkill(tmp_path: Path, data_file: Path) -> None:
    state = tmp_path / "session.db"
    lines = query_lines()
    new = ["--data", str(data_file), "--epsilon", "1", "--delta", "1e-6", "--alpha", "0.1",
           "--k", "2", "--max-updates", "25", "--state", str(state), "--seed", "5",
           "--accept-unverified"]  # fmt: skip
    proc = start(new)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("\n".join(lines) + "\n")  # the whole stream at once: killed mid-stream
    proc.stdin.flush()
    seen = [json.loads(proc.stdout.readline()) for _ in range(12)]
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    spent, answered = stored_spent(state)
    # every answer written had been committed, with its spend, before it was written
    assert answered >= len(seen) and [a["index"] for a in seen] == list(range(12))
    assert spent >= seen[-1]["spent"] - 1e-12
    # resume without parameters: continues from the stored state, never re-spends less
    proc = start(["--data", str(data_file), "--state", str(state)])
    out, err = proc.communicate("\n".join(lines[:10]) + "\n", timeout=120)
    assert proc.returncode == 0, err
    resumed = [json.loads(line) for line in out.splitlines()]
    assert [a["index"] for a in resumed] == list(range(answered, answered + 10))
    assert resumed[0]["spent"] >= spent - 1e-12
    assert all(b["spent"] >= a["spent"] for a, b in itertools.pairwise(resumed))
    assert all(a["spent"] <= 1.0 for a in resumed)
    assert stored_spent(state) == (resumed[-1]["spent"], answered + 10)


def test_cli_errors_and_offline_summary(
    tmp_path: Path, data_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    import io

    state = tmp_path / "s.db"
    base = ["online", "--data", str(data_file), "--state", str(state)]
    assert main(base) == 2
    assert "needs --epsilon, --alpha, --k" in capsys.readouterr().err
    stream = "\n".join([
        query_lines()[0],
        '{"kind": "conjunction", "literals": [["x0", 1, true], ["x1", 1, true], ["x2", 1, true]]}',
        '{"kind": "conjunction", "literals": [["age", 1, true]]}',
        "{not json",
    ]) + "\n"  # fmt: skip
    monkeypatch.setattr("sys.stdin", io.StringIO(stream))
    full = [*base, "--epsilon", "1", "--delta", "1e-6", "--alpha", "0.2", "--k", "2",
            "--seed", "1", "--max-updates", "10", "--accept-unverified"]  # fmt: skip
    assert main(full) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert "answer" in out[0] and out[0]["index"] == 0
    assert "at most k=2" in out[1]["error"] and out[1]["line"] == 2
    assert "unknown attribute 'age'" in out[2]["error"]
    assert "not valid JSON" in out[3]["error"]
    assert main([*base, "--epsilon", "2"]) == 2
    assert "other parameters: epsilon=2.0 (stored 1.0)" in capsys.readouterr().err
    summary = tmp_path / "sum.json"
    assert main([*base, "--export-summary", str(summary), "--summary-samples", "50000",
                 "--seed", "3"]) == 0  # fmt: skip
    monkeypatch.setattr("sys.stdin", io.StringIO(query_lines()[0] + "\n"))
    capsys.readouterr()
    assert main(["online", "--summary", str(summary)]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["source"] == "summary" and 0 <= line["answer"] <= 1


def run_cli(args: list[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "import sys; from dpquery.cli import main; sys.exit(main())",
         "online", *args],
        input=stdin, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_refused_parameters_leave_no_file(tmp_path: Path, data_file: Path) -> None:
    """Parameters whose plan cannot promise the accuracy: exit 2, one line naming the fix
    (the smallest n, --accept-unverified), and no state file or counter left behind."""
    state = tmp_path / "s.db"
    args = ["--data", str(data_file), "--epsilon", "1", "--delta", "1e-6", "--alpha", "0.1",
            "--k", "2", "--state", str(state)]  # fmt: skip
    proc = run_cli(args, query_lines()[0] + "\n")
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert "smallest n that would work is" in line and "--accept-unverified" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.npz"]
    proc = run_cli([*args, "--max-updates", "20"], query_lines()[0] + "\n")
    assert proc.returncode == 2 and "drop max_updates" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.npz"]


@pytest.mark.parametrize("offset", [0, 100, 8192])
def test_corrupted_state_is_one_line_error(tmp_path: Path, data_file: Path, offset: int) -> None:
    state = tmp_path / "s.db"
    new = ["--data", str(data_file), "--epsilon", "1", "--delta", "1e-6", "--alpha", "0.2",
           "--k", "2", "--state", str(state), "--seed", "1", "--accept-unverified"]  # fmt: skip
    assert run_cli(new, "\n".join(query_lines()[:5]) + "\n").returncode == 0
    raw = bytearray(state.read_bytes())
    assert len(raw) > offset + 2000
    raw[offset : offset + 2000] = np.random.default_rng(offset).bytes(2000)
    state.write_bytes(bytes(raw))
    proc = run_cli(["--data", str(data_file), "--state", str(state)], query_lines()[0] + "\n")
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith("dpquery: error:") and "corrupted" in line, line


def test_deeply_nested_json_line_is_answered_with_an_error(tmp_path: Path, data_file: Path) -> None:
    state = tmp_path / "s.db"
    new = ["--data", str(data_file), "--epsilon", "1", "--delta", "1e-6", "--alpha", "0.2",
           "--k", "2", "--state", str(state), "--seed", "1", "--accept-unverified"]  # fmt: skip
    deep = "[" * 200_000 + "]" * 200_000
    proc = run_cli(new, "\n".join([deep, query_lines()[0], deep, query_lines()[1]]) + "\n")
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert out[0] == {"line": 1, "error": "the JSON is nested too deeply to be a query"}
    assert out[1]["index"] == 0 and out[3]["index"] == 1 and "error" in out[2]
    assert "Traceback" not in proc.stderr


def test_delta_defaults_to_one_over_n_squared_and_answers_carry_their_bound(
    tmp_path: Path, data_file: Path
) -> None:
    """No --delta: 1/n^2 as everywhere; before the first answer the session says n is too
    small for alpha and what n it needs; each answer line carries alpha and its confidence."""
    from dpquery.online.store import SessionStore

    state = tmp_path / "s.db"
    args = ["--data", str(data_file), "--epsilon", "1", "--alpha", "0.1", "--k", "2",
            "--state", str(state), "--seed", "1", "--accept-unverified"]  # fmt: skip
    proc = run_cli(args, "\n".join(query_lines()[:4]) + "\n")
    assert proc.returncode == 0, proc.stderr
    store = SessionStore(state)
    saved = store.load()
    store.close()
    assert saved is not None and saved.params.delta == 1 / 4000**2
    assert "n=4,000 records are too few for alpha=0.1" in proc.stderr
    assert "needs n >= " in proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(out) == 4
    assert all(a["error_bound"] == 0.1 and 0 <= a["confidence"] < 0.95 for a in out)
