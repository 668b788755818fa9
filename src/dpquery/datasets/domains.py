"""Public domains of the built-in datasets, written from codebooks and the papers, never
read from the data.

Adult and KDD99 use the equal-width bucketing of the DualQuery authors' loaders
(``name [min, max] buckets``, as listed in ``shared/data/README.md``); categories come from
``adult.names`` / ``kddcup.names`` in the order the authors coded them.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from pathlib import Path

import numpy as np

from dpquery.data.domain import Attribute, Categorical, Domain, Numeric

ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
)  # fmt: skip

_ADULT_CATEGORIES = {
    "workclass": "Private, Self-emp-not-inc, Self-emp-inc, Federal-gov, Local-gov, State-gov, "
    "Without-pay, Never-worked",
    "education": "Bachelors, Some-college, 11th, HS-grad, Prof-school, Assoc-acdm, Assoc-voc, "
    "9th, 7th-8th, 12th, Masters, 1st-4th, 10th, Doctorate, 5th-6th, Preschool",
    "marital-status": "Married-civ-spouse, Divorced, Never-married, Separated, Widowed, "
    "Married-spouse-absent, Married-AF-spouse",
    "occupation": "Tech-support, Craft-repair, Other-service, Sales, Exec-managerial, "
    "Prof-specialty, Handlers-cleaners, Machine-op-inspct, Adm-clerical, Farming-fishing, "
    "Transport-moving, Priv-house-serv, Protective-serv, Armed-Forces",
    "relationship": "Wife, Own-child, Husband, Not-in-family, Other-relative, Unmarried",
    "race": "White, Asian-Pac-Islander, Amer-Indian-Eskimo, Other, Black",
    "sex": "Female, Male",
    "native-country": "United-States, Cambodia, England, Puerto-Rico, Canada, Germany, "
    "Outlying-US(Guam-USVI-etc), India, Japan, Greece, South, China, Cuba, Iran, Honduras, "
    "Philippines, Italy, Poland, Jamaica, Vietnam, Mexico, Portugal, Ireland, France, "
    "Dominican-Republic, Laos, Ecuador, Taiwan, Haiti, Columbia, Hungary, Guatemala, "
    "Nicaragua, Scotland, Thailand, Yugoslavia, El-Salvador, Trinadad&Tobago, Peru, Hong, "
    "Holand-Netherlands",
    "income": ">50K, <=50K",
}
# DualQuery's adult loader: name -> (min, max, buckets) for the continuous attributes.
_ADULT_BUCKETS = {
    "age": (0, 100, 20),
    "fnlwgt": (0, 1_600_000, 20),
    "education-num": (0, 100, 10),
    "capital-gain": (0, 100_000, 10),
    "capital-loss": (0, 5000, 10),
    "hours-per-week": (0, 100, 10),
}


def adult_domain() -> Domain:
    """UCI Adult with DualQuery's bucketing: 14 attributes + income, 181 bits.

    DualQuery's loader gives ``relationship`` 60 buckets for its 6 codes (54 bits that are
    never set; the paper's 235 bits count them); here it has its 6 categories.
    """
    attrs: list[Attribute] = []
    for name in ADULT_COLUMNS:
        if name in _ADULT_BUCKETS:
            lo, hi, k = _ADULT_BUCKETS[name]
            attrs.append(Numeric.equal_width(name, lo, hi, k, integer=True))
        else:
            attrs.append(Categorical(name, tuple(_ADULT_CATEGORIES[name].split(", "))))
    return Domain(tuple(attrs), note="UCI Adult (adult.names) with DualQuery's bucketing")


KDD99_SYMBOLIC = {
    "protocol_type": "icmp,tcp,udp",
    "service": "IRC,X11,Z39_50,auth,bgp,courier,csnet_ns,ctf,daytime,discard,domain,domain_u,"
    "echo,eco_i,ecr_i,efs,exec,finger,ftp,ftp_data,gopher,hostnames,http,http_443,imap4,"
    "iso_tsap,klogin,kshell,ldap,link,login,mtp,name,netbios_dgm,netbios_ns,netbios_ssn,"
    "netstat,nnsp,nntp,ntp_u,other,pm_dump,pop_2,pop_3,printer,private,red_i,remote_job,rje,"
    "shell,smtp,sql_net,ssh,sunrpc,supdup,systat,telnet,tftp_u,tim_i,time,urh_i,urp_i,uucp,"
    "uucp_path,vmnet,whois",
    "flag": "OTH,REJ,RSTO,RSTOS0,RSTR,S0,S1,S2,S3,SF,SH",
}
# DualQuery's network loader, in file order: (name, min, max, buckets). The symbolic
# attributes are integer codes there, bucketed like the rest: 66 services in 65 buckets
# merges the last two codes (vmnet, whois), reproduced here by a recode.
KDD99_BUCKETS = (
    ("duration", 0, 60000, 20), ("protocol_type", 0, 2, 3), ("service", 0, 65, 65),
    ("flag", 0, 10, 11), ("src_bytes", 0, 700_000_000, 20), ("dst_bytes", 0, 6_000_000, 20),
    ("land", 0, 1, 2), ("wrong_fragment", 0, 3, 4), ("urgent", 0, 3, 4), ("hot", 0, 30, 10),
    ("num_failed_logins", 0, 5, 6), ("logged_in", 0, 1, 2), ("num_compromised", 0, 900, 10),
    ("root_shell", 0, 1, 2), ("su_attempted", 0, 2, 3), ("num_root", 0, 1000, 5),
    ("num_file_creations", 0, 30, 5), ("num_shells", 0, 2, 3), ("num_access_files", 0, 10, 5),
    ("num_outbound_cmds", 0, 1, 2), ("is_host_login", 0, 1, 2), ("is_guest_login", 0, 1, 2),
    ("count", 0, 600, 10), ("srv_count", 0, 600, 10), ("serror_rate", 0, 1, 10),
    ("srv_serror_rate", 0, 1, 10), ("rerror_rate", 0, 1, 10), ("srv_rerror_rate", 0, 1, 10),
    ("same_srv_rate", 0, 1, 10), ("diff_srv_rate", 0, 1, 10), ("srv_diff_host_rate", 0, 1, 10),
    ("dst_host_count", 0, 255, 10), ("dst_host_srv_count", 0, 255, 10),
    ("dst_host_same_srv_rate", 0, 1, 10), ("dst_host_diff_srv_rate", 0, 1, 10),
    ("dst_host_same_src_port_rate", 0, 1, 10), ("dst_host_srv_diff_host_rate", 0, 1, 10),
    ("dst_host_serror_rate", 0, 1, 10), ("dst_host_srv_serror_rate", 0, 1, 10),
    ("dst_host_rerror_rate", 0, 1, 10), ("dst_host_srv_rerror_rate", 0, 1, 10),
)  # fmt: skip
_KDD99_FLOAT = {n for n, _, hi, k in KDD99_BUCKETS if hi == 1 and k == 10}


def _dualquery_edges(lo: float, hi: float, k: int) -> tuple[float, ...]:
    """DualQuery's buckets as edges. Its loader (attribute.ml) buckets ``floor(v / step)``
    with the float ``step = (max - min) / k``, so over [0, 1] in 10 buckets the rate 0.3 falls
    in bucket 2 (0.3 / 0.1 = 2.9999999999999996). The float steps ``i * step`` reproduce that
    (0.30000000000000004, ...), where :meth:`Numeric.equal_width`'s exact decimal edges would
    not; ``tests/test_datasets.py`` checks them against DualQuery's own encoded file."""
    return tuple(float(e) for e in np.linspace(lo, hi, k + 1))


def kdd99_domain() -> Domain:
    """KDD Cup 99 (41 features, label excluded) with DualQuery's bucketing: 396 bits, as in
    DualQuery's Table 1."""
    attrs: list[Attribute] = []
    for name, lo, hi, k in KDD99_BUCKETS:
        if name in KDD99_SYMBOLIC:
            values = KDD99_SYMBOLIC[name].split(",")
            if len(values) > k:  # codes past k-1 share the last bucket
                merged = "|".join(values[k - 1 :])
                recode: dict[Hashable, Hashable] = {v: merged for v in values[k - 1 :]}
                values = [*values[: k - 1], merged]
                attrs.append(Categorical(name, tuple(values), recode=recode))
            else:
                attrs.append(Categorical(name, tuple(values)))
        else:
            edges = _dualquery_edges(lo, hi, k)
            attrs.append(Numeric(name, edges, integer=name not in _KDD99_FLOAT))
    return Domain(tuple(attrs), note="KDD Cup 99 10% with DualQuery's bucketing")


def mwem_adult_domain() -> Domain:
    """The MWEM paper's binarised Adult: 27 unnamed binary attributes."""
    return Domain.binary(27, prefix="b")


ADULT_CONTINUOUS = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss",
                    "hours-per-week")  # fmt: skip
"""Adult's continuous columns (UCI's ``adult.names``): private-pgm codes each in the order of
its values, so they are declared ordered (public knowledge)."""


def pgm_domain(path: Path) -> Domain:
    """The private-pgm / FEM Adult domain file (``{"attr": size}``), its continuous columns
    (:data:`ADULT_CONTINUOUS`, those it holds) declared ordered."""
    sizes = json.loads(path.read_text())
    return Domain.from_sizes(sizes, ordered=[a for a in ADULT_CONTINUOUS if a in sizes])


# Public bin edges for the ACS excerpt's numeric columns (round numbers, not data-derived).
_ACS_NUMERIC = {
    "AGEP": (tuple(range(0, 101, 5)), "clip", False, True),
    "PINCP": (
        (-10_000, 0, 10_000, 20_000, 30_000, 40_000, 50_000, 75_000, 100_000, 150_000,
         250_000, 2_000_000),
        "clip", True, True,
    ),
    "POVPIP": ((*range(0, 501, 50), 501), "clip", True, True),
    "DENSITY": ((0, 100, 500, 1000, 2500, 5000, 10_000, 25_000, 60_000), "clip", False, False),
}  # fmt: skip
ACS_EXCLUDED = ("PWGTP", "WGTP")  # survey weights, not attributes to release


def acs_domain(schema_path: Path, region: str = "national") -> Domain:
    """A NIST ACS 2019 excerpt (``region``: ``national`` or ``massachusetts``, the same 24
    columns): categories from NIST's published schema of that excerpt (the literal ``N`` is a
    category of its own), public bins for the numeric columns, weights excluded."""
    schema = json.loads(schema_path.read_text())["schema"]
    attrs: list[Attribute] = []
    for name, spec in schema.items():
        if name in ACS_EXCLUDED:
            continue
        if name in _ACS_NUMERIC:
            edges, oor, missing, integer = _ACS_NUMERIC[name]
            attrs.append(Numeric(name, edges, oor, missing, integer))  # type: ignore[arg-type]
        else:
            attrs.append(Categorical(name, tuple(str(v) for v in spec["values"])))
    return Domain(tuple(attrs), note=f"NIST ACS 2019 {region} excerpt (SDNist schema)")


def cps_domain() -> Domain:
    """The HDMM paper's CPS extract: income in public brackets, age in 5-year bands."""
    income = (0, 5000, 10_000, 15_000, 20_000, 25_000, 30_000, 40_000, 50_000, 60_000,
              75_000, 100_000, 150_000, 200_000, 500_000)  # fmt: skip
    return Domain(
        (
            Numeric("income", income, "clip", integer=True),
            Numeric("age", tuple(np.arange(15, 95, 5)), "clip", integer=True),
            Categorical("marital", tuple(range(1, 8))),
            Categorical("race", tuple(range(1, 5))),
            Categorical("sex", (1, 2)),
        ),
        note="Current Population Survey extract (HDMM)",
    )


__all__ = [
    "acs_domain", "adult_domain", "cps_domain", "kdd99_domain", "mwem_adult_domain",
    "pgm_domain",
]  # fmt: skip
