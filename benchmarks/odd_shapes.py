"""The generated tables of odd shapes swept in ``docs/learn.md`` ("Tables of odd shapes"):
``g01`` to ``g22`` (tables for ``dpquery synth --data``) and ``w1`` to ``w3`` (raw user x item
tables for ``--learn-items`` / ``--item-list``, with their item lists). Seeded, as the sweep
made them: ``python benchmarks/odd_shapes.py OUTDIR`` (writes about 32 MB)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def _write(path: Path, header: list[str], rows: object, sep: str = ",", bom: bool = False,
           crlf: bool = False) -> None:  # fmt: skip
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=sep, lineterminator="\r\n" if crlf else "\n")
    w.writerow(header)
    w.writerows(rows)  # type: ignore[arg-type]
    path.write_text(buf.getvalue(), encoding="utf-8-sig" if bom else "utf-8", newline="")


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    w = _write
    rng = np.random.default_rng(7)
    n = 3000
    # G1 one numeric column
    w(out / "g01_onecol.csv", ["x"], [[f"{v:.2f}"] for v in rng.normal(50, 10, n)])
    # G2 one row per category + numeric
    w(
        out / "g02_onepercat.csv",
        ["cat", "v"],
        [[f"k{i}", int(rng.integers(0, 100))] for i in range(2000)],
    )
    # G3 all-missing + constant + numeric
    w(
        out / "g03_missconst.csv",
        ["empty", "const", "num", "const_num"],
        [["", "A", int(rng.integers(0, 50)), "7"] for i in range(n)],
    )
    # G4 200 columns
    w(
        out / "g04_wide200.csv",
        [f"c{j}" for j in range(200)],
        [
            [int(v) for v in rng.integers(0, 5, 200)]
            if i % 2
            else [f"{v:.1f}" for v in rng.normal(0, 1, 200)]
            for i in range(2000)
        ],
    )
    # G6 unicode headers/values, quoted newlines
    cities = ["Zürich", "São Paulo", "東京", "Kraków", "Αθήνα", "Москва"]
    w(
        out / "g06_unicode.csv",
        ["ville é", "温度", "note"],
        [
            [
                cities[int(rng.integers(0, 6))],
                f"{rng.normal(15, 5):.1f}",
                "line one\nline two" if rng.random() < 0.3 else "plain",
            ]
            for i in range(n)
        ],
    )
    # G7 ; separated, BOM, CRLF, decimal comma
    w(
        out / "g07_semicolon_bom_crlf.csv",
        ["grp", "amount", "qty"],
        [
            [
                ["a", "b", "c"][int(rng.integers(0, 3))],
                f"{rng.gamma(2, 50):.2f}".replace(".", ","),
                int(rng.integers(1, 20)),
            ]
            for i in range(n)
        ],
        sep=";",
        bom=True,
        crlf=True,
    )
    # G7b tab separated
    w(
        out / "g07b_tab.tsv",
        ["grp", "amount"],
        [[["x y", "z"][int(rng.integers(0, 2))], f"{rng.gamma(2, 50):.3f}"] for i in range(n)],
        sep="\t",
    )
    # G8 money, thousands, percents, booleans
    w(
        out / "g08_money.csv",
        ["price", "pop", "rate", "flag", "yn", "Colour"],
        [
            [
                f"${rng.gamma(2, 600):,.2f}",
                f"{int(rng.integers(1000, 5000000)):,}",
                f"{rng.uniform(0, 100):.0f}%",
                ["TRUE", "FALSE"][int(rng.integers(0, 2))],
                ["yes", "no"][int(rng.integers(0, 2))],
                ["Red", "red", "RED", "Blue", "blue"][int(rng.integers(0, 5))],
            ]
            for i in range(n)
        ],
    )
    # G9 dates in several formats, times with zones
    base = dt.datetime(2020, 1, 1)
    rows = []
    for _ in range(n):
        t = base + dt.timedelta(minutes=int(rng.integers(0, 525600)))
        rows.append(
            [
                t.strftime("%Y-%m-%d"),
                t.strftime("%d/%m/%Y"),
                t.strftime("%m/%d/%Y"),
                t.strftime("%Y-%m-%dT%H:%M:%S") + "+02:00",
                t.strftime("%Y-%m-%dT%H:%M:%SZ"),
                t.strftime("%H:%M"),
                t.strftime("%Y%m%d"),
                t.strftime("%d %b %Y"),
            ]
        )
    w(out / "g09_dates.csv", ["iso", "dmy", "mdy", "tz", "utc", "hhmm", "compact", "textual"], rows)
    # G10 very long text
    w(
        out / "g10_longtext.csv",
        ["id", "txt", "n"],
        [
            [
                i,
                " ".join(rng.choice(["lorem", "ipsum", "dolor", "sit", "amet"], 2000)),
                int(rng.integers(0, 10)),
            ]
            for i in range(500)
        ],
    )
    # G11 sci notation, -0, inf/NaN
    rows = []
    for _ in range(n):
        v = rng.lognormal(0, 4)
        s = [
            f"{v:.3e}",
            ["-0", "0", "-0.0", "1"][int(rng.integers(0, 4))],
            [
                "inf",
                "-inf",
                "NaN",
                "nan",
                "Infinity",
                f"{rng.normal():.2f}",
                f"{rng.normal():.2f}",
                f"{rng.normal():.2f}",
            ][int(rng.integers(0, 8))],
        ]
        rows.append(s)
    w(out / "g11_sci_inf.csv", ["sci", "negzero", "withinf"], rows)
    # G12 leading zeros
    w(
        out / "g12_zip.csv",
        ["zip", "code", "amount"],
        [
            [
                f"{int(rng.integers(0, 1000)):05d}",
                f"{int(rng.integers(0, 30)):03d}",
                int(rng.integers(0, 100)),
            ]
            for i in range(n)
        ],
    )
    # G13 one row only
    w(out / "g13_onerow.csv", ["a", "b"], [[1, "x"]])
    # G14 integer-looking floats 1.0, mixed int+text ids "007"
    w(
        out / "g14_floatints.csv",
        ["x", "y"],
        [[f"{int(rng.integers(0, 10))}.0", f"{rng.integers(0, 3)}"] for i in range(n)],
    )
    # G15 numbers with + sign and spaces
    w(
        out / "g15_spaces.csv",
        ["x", "y"],
        [
            [f" {int(rng.integers(-50, 50)):+d} ", " a " if rng.random() < 0.5 else "b"]
            for i in range(n)
        ],
    )

    # g05: 1,000,000 x 5
    rng = np.random.default_rng(1)
    n = 1_000_000
    a = rng.normal(100, 15, n).round(1)
    b = rng.integers(0, 1000, n)
    c = rng.choice(["x", "y", "z", "w"], n)
    d = rng.exponential(1000, n).round(2)
    e = rng.choice(["alpha", "beta"], n)
    w(out / "g05_1m.csv", ["a", "b", "c", "d", "e"], zip(a, b, c, d, e, strict=True), crlf=True)
    # g04b: 200 columns x 20,000, a shared factor
    rng = np.random.default_rng(3)
    n = 20000
    base = rng.integers(0, 3, (n, 1))
    w(
        out / "g04b_wide200_20k.csv",
        [f"c{j}" for j in range(200)],
        [
            [
                int(base[i, 0] + rng.integers(0, 2))
                if j % 2
                else f"{rng.normal(base[i, 0], 1):.2f}"
                for j in range(200)
            ]
            for i in range(n)
        ],
        crlf=True,
    )
    # g16: integers far from 0
    rng = np.random.default_rng(2)
    with open(out / "g16_farband.csv", "w") as f:
        f.write("acct,compact\n")
        for _ in range(3000):
            acct = rng.integers(20200101, 20201231)
            day = rng.choice([20200101, 20200315, 20200630, 20201224]) + rng.integers(0, 5)
            f.write(f"{acct},{day}\n")
    # g17-g22
    rng = np.random.default_rng(11)
    n = 3000
    marks = ["NA", "N/A", "null", "NULL", "?", "-", "", "None", "nan", "#N/A"]
    w(
        out / "g17_namarkers.csv",
        ["age", "income", "acct"],
        [
            [
                rng.choice(marks) if rng.random() < 0.3 else int(rng.integers(18, 90)),
                rng.choice(["N/A", "?"]) if rng.random() < 0.2 else f"{rng.gamma(2, 20000):.0f}",
                f"({rng.integers(1, 5000):,})"
                if rng.random() < 0.3
                else f"{rng.integers(1, 5000):,}",
            ]
            for i in range(n)
        ],
        crlf=True,
    )
    w(
        out / "g18_header.csv",
        ["a,b", 'say "hi"', "multi\nline"],
        [
            [int(rng.integers(0, 4)), rng.choice(["p", "q"]), f"{rng.normal():.3f}"]
            for i in range(n)
        ],
        crlf=True,
    )
    with open(out / "g19_trailing.csv", "w") as f:
        f.write("a,b\n")
        for _ in range(n):
            f.write(f"{rng.integers(0, 9)},{rng.choice(['u', 'v'])},\n")
    df = pd.DataFrame(
        {
            "when": pd.Timestamp("2022-01-01", tz="UTC")
            + pd.to_timedelta(rng.integers(0, 10**7, n), unit="s"),
            "flag": rng.random(n) < 0.4,
            "cat": pd.Categorical(rng.choice(["a", "b", "c"], n)),
            "amt": rng.gamma(2, 10, n).round(2),
            "cnt": pd.array(
                np.where(rng.random(n) < 0.1, None, rng.integers(0, 30, n)), dtype="Int64"
            ),
        }
    )
    df.to_parquet(out / "g20_types.parquet")
    with open(out / "g21_blanklines.csv", "w") as f:
        f.write("x,y\n")
        for i in range(n):
            f.write(f"{rng.integers(0, 9)},{rng.choice(['u', 'v'])}\n")
            if i % 10 == 0:
                f.write("\n")
    with open(out / "g22_casecols.csv", "w") as f:
        f.write("A,a\n")
        for _ in range(n):
            f.write(f"{rng.integers(0, 9)},{rng.choice(['u', 'v'])}\n")
    # w1-w3: raw user x item tables
    rng = np.random.default_rng(5)
    items = [f"item{j}" for j in range(5000)]
    p = 1 / np.arange(1, 5001) ** 0.8
    p /= p.sum()
    rows = []
    for u in range(50):
        for j in set(rng.choice(5000, int(rng.integers(500, 3000)), p=p)):
            rows.append([f"u{u}", items[j], int(rng.integers(1, 6))])
    w(out / "w1_fewlong.csv", ["user", "item", "rating"], rows, crlf=True)
    w(out / "w2_oneuser.csv", ["user", "item"], [["alice", f"i{j}"] for j in range(300)], crlf=True)
    names = [
        f"Smith, John {j}" if j % 3 == 0 else (f"the item {j}" if j % 3 == 1 else f'"q{j}"')
        for j in range(200)
    ]
    p = 1 / np.arange(1, 201) ** 1.0
    p /= p.sum()
    rows = []
    for u in range(20000):
        for j in set(rng.choice(200, int(rng.integers(1, 6)), p=p)):
            rows.append([u, names[j]])
    w(out / "w3_quoted.csv", ["user id", "item name"], rows, crlf=True)
    (out / "w3_items.txt").write_text("".join(nm + "\n" for nm in names))
    (out / "w1_items.txt").write_text("".join(nm + "\n" for nm in items))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
