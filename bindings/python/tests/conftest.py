"""Fixtures: the loopback mock services (target/debug/hydroplot-mock, or
HYDROPLOT_TEST_MOCK_BIN) and a context pointed at them."""

import os
import pathlib
import subprocess

import pytest

import hydroplot

ROOT = pathlib.Path(__file__).resolve().parents[3]


def mock_options(base):
    """The context options that point every service at the mock at ``base``."""
    return {
        "index_url": f"{base}/nldi",
        "fabric_url": f"{base}/fabric/pygeoapi",
        "tile_url": f"{base}/tiles/{{z}}/{{x}}/{{y}}.png",
    }


@pytest.fixture(scope="session")
def mock_url():
    binary = os.environ.get("HYDROPLOT_TEST_MOCK_BIN", str(ROOT / "target/debug/hydroplot-mock"))
    proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.startswith("listening "), f"the mock {binary} printed {line!r}"
    yield line.split(" ", 1)[1].strip().rstrip("/")
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0


@pytest.fixture()
def ctx(mock_url, tmp_path):
    return hydroplot.Context(tile_cache_dir=str(tmp_path / "tiles"), **mock_options(mock_url))


@pytest.fixture(scope="session")
def sample_gpkg():
    return str(pathlib.Path(os.environ.get("HYDROPLOT_TEST_DATA", ROOT / "tests/data")) / "yahara_sample.gpkg")
