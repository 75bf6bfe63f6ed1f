"""Network options through the Python binding: offline mode (``offline=True``,
sent as ``TRUE``), and the agency-network options checked by the C library."""

import pytest

import hydroplot
from conftest import mock_options

YAHARA_FLOWLINES = 251  # upstream of comid 13293970, the published nhdplusTools count


def test_offline_refuses_a_download_at_once_and_local_data_still_serves(mock_url, tmp_path, sample_gpkg):
    ctx = hydroplot.Context(offline=True, tile_cache_dir=str(tmp_path / "tiles"), **mock_options(mock_url))
    with pytest.raises(hydroplot.HydroplotError, match="offline mode"):
        hydroplot.plot_hydro([13293970], actually_plot=False, context=ctx, output="geojson")
    data = hydroplot.plot_hydro([13293970], hydro_data=sample_gpkg, actually_plot=False, context=ctx,
                                output="geojson")
    assert len(data["flowline"]["features"]) == YAHARA_FLOWLINES


def test_bad_network_options_are_refused_and_credentials_not_echoed(tmp_path):
    with pytest.raises(hydroplot.HydroplotError, match="ca_bundle"):
        hydroplot.Context(ca_bundle=str(tmp_path / "absent.pem"))
    with pytest.raises(hydroplot.HydroplotError) as err:
        hydroplot.Context(proxy="ftp://agent:s3cret@proxy:21")
    assert "s3cret" not in str(err.value)
    assert hydroplot.Context(proxy="none", offline=False).options["proxy"] == "none"
