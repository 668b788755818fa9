"""pyproject.toml: an SPDX license string (no setuptools deprecation warning at install), a
setuptools floor that understands it, and the shipped data declared as package data."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


@pytest.fixture(scope="module")
def project() -> dict:
    if not PYPROJECT.is_file():
        pytest.skip(f"{PYPROJECT} not found (tests run outside the source tree)")
    return tomllib.loads(PYPROJECT.read_text())


def test_license_is_an_spdx_string(project):
    # A TOML table ({text = ...}) makes setuptools >= 77 warn "project.license as a TOML
    # table is deprecated" at every install.
    assert project["project"]["license"] == "BSD-3-Clause"


def test_setuptools_floor_reads_spdx_licenses(project):
    (req,) = [r for r in project["build-system"]["requires"] if r.startswith("setuptools")]
    floor = re.search(r">=\s*([\d.]+)", req)
    assert floor is not None, req
    assert tuple(int(x) for x in floor.group(1).split(".")[:2]) >= (77, 0)


def test_shipped_datasets_are_package_data(project):
    patterns = project["tool"]["setuptools"]["package-data"]["dpquery"]
    assert "datasets/data/adult/*" in patterns
