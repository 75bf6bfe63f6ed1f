"""plot_hydro through the C library against the mock services and the Yahara sample."""

import re

import pytest

import hydroplot

# Upstream of comid 13293970 (the Yahara at Madison), the published nhdplusTools
# figures for tests/data/yahara_sample.gpkg: 251 flowlines, 250 catchments (one
# basin, one outlet), and 117 waterbodies in all, network and off-network together
# (the split between the two is not published).
YAHARA = {"outlets": 1, "flowline": 251, "basin": 1, "catchment": 250}
YAHARA_WATERBODIES = 117
# The basin's bbox, rounded to 3 decimals: the extent of the 250 upstream
# catchments, computed by hand from the GeoPackage's CatchmentSP geometries.
YAHARA_BBOX = (-89.605, 42.95, -89.204, 43.366)
# The published bbox case: stream order >= 2 in this NAD83 box gives 76
# flowlines, 10 network and 43 off-network waterbodies (nhdplusTools).
PUBLISHED_BBOX = {"xmin": -89.56684, "ymin": 42.99816, "xmax": -89.24681, "ymax": 43.17192, "crs": "EPSG:4269"}


def counts(data):
    return {layer: len(fc["features"]) for layer, fc in data.items()}


def assert_is_yahara(data):
    """The published counts upstream of 13293970."""
    n = counts(data)
    assert {layer: n[layer] for layer in YAHARA} == YAHARA, n
    assert n["network_wtbd"] + n["off_network_wtbd"] == YAHARA_WATERBODIES, n


def test_upstream_of_a_comid_from_the_services_is_drawn_to_a_file(ctx, tmp_path):
    png = tmp_path / "yahara.png"
    data = hydroplot.plot_hydro([13293970], context=ctx, file=str(png), output="geojson")
    assert_is_yahara(data)
    assert data.png.startswith(b"\x89PNG\r\n\x1a\n")
    assert png.read_bytes() == data.png
    xmin, ymin, xmax, ymax = data.bbox
    assert (round(xmin, 3), round(ymin, 3), round(xmax, 3), round(ymax, 3)) == YAHARA_BBOX
    assert data["outlets"]["features"][0]["properties"]["comid"] == 13293970
    assert data.warnings == []


def test_the_library_warnings_are_python_warnings_and_stay_on_the_result(sample_gpkg, tmp_path):
    # Offline, with an empty tile cache, no basemap tile can be used: the map
    # is drawn on a blank background and the library says why.
    offline = hydroplot.Context(offline=True, tile_cache_dir=str(tmp_path / "tiles"))
    with pytest.warns(hydroplot.HydroplotWarning, match="basemap tiles could not be used") as caught:
        data = hydroplot.plot_hydro([13293970], hydro_data=sample_gpkg, context=offline, output="geojson")
    assert_is_yahara(data)
    assert [str(w.message) for w in caught] == data.warnings
    assert len(data.warnings) == 1 and "offline mode is on" in data.warnings[0]


def test_the_local_sample_gives_the_same_layers_without_drawing(ctx, sample_gpkg):
    data = hydroplot.plot_hydro([13293970], hydro_data=sample_gpkg, actually_plot=False, context=ctx, output="geojson")
    assert_is_yahara(data)
    assert data.png is None and data.map is None


def test_the_published_bbox_case_with_stream_order_2(ctx, sample_gpkg):
    data = hydroplot.plot_hydro(bbox=PUBLISHED_BBOX, streamorder=2, hydro_data=sample_gpkg, actually_plot=False,
                                context=ctx, output="geojson")
    n = counts(data)
    assert (n["flowline"], n["network_wtbd"], n["off_network_wtbd"]) == (76, 10, 43), n


def test_outlet_forms_agree(ctx):
    by_feature = hydroplot.plot_hydro([("comid", "13293970")], actually_plot=False, context=ctx, output="geojson")
    assert_is_yahara(by_feature)
    exact = hydroplot.plot_hydro({13293970, 13294312, 13293454}, actually_plot=False, context=ctx, output="geojson")
    assert sorted(f["properties"]["comid"] for f in exact["flowline"]["features"]) == [13293454, 13293970, 13294312]
    site = hydroplot.plot_hydro("05429500", actually_plot=False, context=ctx, output="geojson")
    outlet = site["outlets"]["features"][0]["properties"]
    assert outlet["id"] == "USGS-05429500"
    by_comid = hydroplot.plot_hydro([outlet["comid"]], actually_plot=False, context=ctx, output="geojson")
    assert counts(site)["flowline"] == counts(by_comid)["flowline"]
    point = {"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {},
                                                        "geometry": {"type": "Point", "coordinates": [-89.36, 43.09]}}]}
    from_dict = hydroplot.plot_hydro(point, actually_plot=False, context=ctx, output="geojson")
    from_pair = hydroplot.plot_hydro([(-89.36, 43.09)], actually_plot=False, context=ctx, output="geojson")
    assert counts(from_dict) == counts(from_pair) and counts(from_pair)["flowline"] > 0


def test_add_draws_onto_the_last_map(ctx):
    first = hydroplot.plot_hydro([13293970], context=ctx, basemap="none", output="geojson")
    second = hydroplot.plot_hydro([13294312], add=True, plot_config={"flowline": {"col": "red", "lwd": 3}},
                                  context=ctx, output="geojson")
    assert second.map is first.map
    assert second.png != first.png


def test_plot_config_and_arguments_are_checked(ctx):
    with pytest.raises(hydroplot.HydroplotError) as err:
        hydroplot.plot_hydro([13293970], plot_config={"river": {"col": "red"}}, context=ctx)
    assert err.value.name == "HYDROPLOT_ERR_INVALID_ARGUMENT" and "river" in err.value.message
    with pytest.raises(hydroplot.HydroplotError) as err:
        hydroplot.plot_hydro([13293970], bbox=(-89.5, 43.0, -89.4, 43.1), context=ctx)
    assert err.value.name == "HYDROPLOT_ERR_INVALID_ARGUMENT"
    with pytest.raises(hydroplot.HydroplotError) as err:
        hydroplot.plot_hydro([1], actually_plot=False, context=ctx)
    assert err.value.name == "HYDROPLOT_ERR_NOT_FOUND" and err.value.http_status == 404
    with pytest.raises(TypeError):
        hydroplot.plot_hydro([1.5], context=ctx)
    with pytest.raises(hydroplot.HydroplotError) as err:
        hydroplot.plot_hydro([13293970], file="map.jpg", context=ctx)
    assert err.value.name == "HYDROPLOT_ERR_INVALID_ARGUMENT" and "map.jpg" in err.value.message


@pytest.mark.parametrize(
    "arguments, error, words",
    [
        # Each would reach C as another value: True, 3, 0 (2**40's low 32 bits),
        # 100 x 200, a file named "5" or "['a.png']", comid 13293970 (the low
        # 64 bits of 2**64 + 13293970) or -2**63, comid 13293970 read from a
        # string, comid 1 from True.
        ({"overwrite": "False"}, TypeError, "overwrite must be True or False"),
        ({"lod": "no"}, TypeError, "lod must be True or False"),
        ({"flowline_only": 1}, TypeError, "flowline_only must be True or False"),
        ({"actually_plot": None}, TypeError, "actually_plot must be True or False"),
        ({"zoom": 3.7}, TypeError, "zoom must be a whole number"),
        ({"zoom": 2**40}, ValueError, "zoom = 1099511627776 does not fit"),
        ({"streamorder": "2"}, TypeError, 'streamorder must be a whole number or "auto"'),
        ({"size": (100, 200, 300)}, TypeError, "size must be a (width, height) pair"),
        ({"size": (-5, 200)}, ValueError, "size[0] = -5 does not fit"),
        ({"cache_data": 5}, TypeError, "cache_data must be a file path"),
        ({"file": ["a.png"]}, TypeError, "file must be a file path"),
        ({"add": "yes"}, TypeError, "add must be True, False or a Map"),
        ({"bbox": (1, 2, 3)}, TypeError, "bbox must be (xmin, ymin, xmax, ymax)"),
        ({"outlets": [2**64 + 13293970]}, ValueError, "outlets[0] = 18446744073722845586 does not fit"),
        ({"outlets": {2**64 + 13293970}}, ValueError, "a comid in outlets = 18446744073722845586 does not fit"),
        ({"outlets": [2**63]}, ValueError, "outlets[0] = 9223372036854775808 does not fit"),
        ({"outlets": {"13293970"}}, TypeError, "a comid in outlets must be a whole number, not '13293970'"),
        ({"outlets": {True}}, TypeError, "a comid in outlets must be a whole number, not True"),
        ({"outlets": [13293970, True]}, TypeError, "outlets[1] must be a whole number, not True"),
        # Each would fail in words naming no argument (float("a"), an unpack,
        # str.items), or a missing key as a bare KeyError.
        ({"bbox": ("a", 1, 2, 3)}, TypeError, "bbox xmin must be a number, not 'a'"),
        ({"bbox": {"xmin": 1, "ymin": 2, "xmax": 3}}, TypeError, "bbox ymax must be a number, not None"),
        ({"outlets": [{"type": "Point", "coordinates": []}]}, TypeError, "outlets[0] must be an (x, y) pair"),
        ({"plot_config": {"flowline": "red"}}, TypeError, "plot_config['flowline'] must be a dict, not 'red'"),
        ({"plot_config": {"outlets": {"comid": 17}}}, TypeError, "plot_config['outlets']['comid'] must be a dict"),
        ({"plot_config": "red"}, TypeError, "plot_config must be a dict"),
        # str() would send the list's repr as one basemap name.
        ({"basemap": ["none", "bogus"]}, TypeError, "basemap must be a string, not ['none', 'bogus']"),
    ],
)
def test_values_the_crossing_into_c_would_change_are_refused_first(arguments, error, words, tmp_path, monkeypatch):
    # Nothing listens on port 9: a request would fail with another error.
    nowhere = hydroplot.Context(index_url="http://127.0.0.1:9", fabric_url="http://127.0.0.1:9")
    monkeypatch.chdir(tmp_path)
    given = {"outlets": None if "bbox" in arguments else [13293970], "basemap": "none", **arguments}
    with pytest.raises(error) as err:
        hydroplot.plot_hydro(context=nowhere, **given)
    assert words in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_lists_sets_and_arrays_take_the_same_comids(sample_gpkg):
    """A comid is what whole() takes within int64, in a list (upstream), a
    set or a numpy array (exactly these) alike; what one refuses, all refuse
    with the same error, naming the item, before any request."""
    np = pytest.importorskip("numpy")
    local = dict(hydro_data=sample_gpkg, actually_plot=False, output="geojson")
    assert counts(hydroplot.plot_hydro([np.int64(13293970)], **local))["flowline"] == YAHARA["flowline"]
    assert counts(hydroplot.plot_hydro([13293970.0], **local))["flowline"] == YAHARA["flowline"]
    for exact in ({13293970.0, np.int64(13294312)}, np.array([13293970.0, 13294312.0])):
        data = hydroplot.plot_hydro(exact, **local)
        assert sorted(f["properties"]["comid"] for f in data["flowline"]["features"]) == [13293970, 13294312]
    nowhere = hydroplot.Context(index_url="http://127.0.0.1:9", fabric_url="http://127.0.0.1:9")
    for bad, error in [(True, TypeError), (1.5, TypeError), (np.nan, TypeError), (-(2**63) - 1, ValueError),
                       (np.uint64(2**63), ValueError), (2**64 + 13293970, ValueError)]:
        for outlets, name in [([bad], "outlets[0]"), ({bad}, "a comid in outlets"), (np.array([bad]), "outlets[0]")]:
            with pytest.raises(error, match=re.escape(name)):
                hydroplot.plot_hydro(outlets, context=nowhere, actually_plot=False)


def test_whole_numbers_flags_and_paths_of_other_types_are_taken(sample_gpkg, tmp_path):
    np = pytest.importorskip("numpy")
    png = tmp_path / "map.png"
    data = hydroplot.plot_hydro(
        [13293970], hydro_data=sample_gpkg, basemap="none", zoom=np.int64(11), size=(512.0, 384),
        lod=np.bool_(True), file=png, output="geojson",
    )
    assert counts(data)["flowline"] == YAHARA["flowline"]
    assert png.read_bytes() == data.png
    # The PNG's header: width and height, big-endian, at bytes 16..24.
    assert (int.from_bytes(data.png[16:20], "big"), int.from_bytes(data.png[20:24], "big")) == (512, 384)


def test_a_gpkg_is_written_and_kept_without_overwrite(ctx, tmp_path):
    out = tmp_path / "subset.gpkg"
    hydroplot.plot_hydro([13293970], gpkg=str(out), actually_plot=False, context=ctx)
    size = out.stat().st_size
    assert size > 0
    with pytest.raises(hydroplot.HydroplotError) as err:
        hydroplot.plot_hydro([13293970], gpkg=str(out), overwrite=False, actually_plot=False, context=ctx)
    assert err.value.name == "HYDROPLOT_ERR_EXISTS" and out.stat().st_size == size
    again = hydroplot.plot_hydro([13293970], hydro_data=str(out), actually_plot=False, context=ctx, output="geojson")
    assert counts(again)["flowline"] == 251


def test_geodataframes_when_geopandas_is_installed(ctx, sample_gpkg):
    pytest.importorskip("geopandas")
    data = hydroplot.plot_hydro([13293970], hydro_data=sample_gpkg, actually_plot=False, context=ctx)
    assert len(data["flowline"]) == 251 and data["flowline"].crs.to_epsg() == 4269


def test_file_is_checked_with_the_other_files_before_any_work(ctx, sample_gpkg, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.gpkg").write_bytes(open(sample_gpkg, "rb").read())
    (tmp_path / "mine.png").write_bytes(b"my own map")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    local = dict(hydro_data="x.gpkg", basemap="none", context=ctx, output="geojson")
    cases = [
        (dict(file="./x.gpkg"), "HYDROPLOT_ERR_INVALID_ARGUMENT", "same file"),
        (dict(file=str(tmp_path / "x.gpkg"), gpkg="out.gpkg"), "HYDROPLOT_ERR_INVALID_ARGUMENT", "same file"),
        (dict(file="out.png", gpkg="./out.png.gpkg", cache_data="out.png"), "HYDROPLOT_ERR_INVALID_ARGUMENT", "same file"),
        (dict(file="no/such/folder/map.png"), "HYDROPLOT_ERR_IO", "no/such/folder/map.png"),
        (dict(file=str(tmp_path)), "HYDROPLOT_ERR_IO", "not a regular file"),
        (dict(file="mine.png", overwrite=False), "HYDROPLOT_ERR_EXISTS", "mine.png"),
    ]
    for extra, status, message in cases:
        with pytest.raises(hydroplot.HydroplotError) as err:
            hydroplot.plot_hydro([13293970], **local, **extra)
        assert err.value.name == status and message in err.value.message, (extra, err.value)
        assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before, extra
    data = hydroplot.plot_hydro([13293970], **local, file="mine.png")
    assert (tmp_path / "mine.png").read_bytes() == data.png
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.png", "x.gpkg"]


def test_a_geodataframe_whose_crs_has_no_epsg_code_is_read_through_its_definition(ctx, sample_gpkg):
    geopandas = pytest.importorskip("geopandas")
    shapely = pytest.importorskip("shapely")
    point = geopandas.GeoDataFrame(geometry=[shapely.Point(-89.36, 43.09)], crs="EPSG:4326")
    albers = "+proj=aea +lat_0=23 +lon_0=-96 +lat_1=29.5 +lat_2=45.5 +x_0=0 +y_0=0 +datum=NAD83 +units=m +no_defs"
    projected = point.to_crs(albers)
    assert projected.crs.to_epsg(min_confidence=100) is None
    local = dict(hydro_data=sample_gpkg, actually_plot=False, context=ctx, output="geojson")
    want = hydroplot.plot_hydro(point, **local)
    got = hydroplot.plot_hydro(projected, **local)
    comids = lambda d: sorted(f["properties"]["comid"] for f in d["flowline"]["features"])
    assert comids(got) and comids(got) == comids(want)


def test_properties_plot_draws_the_same_map_with_fewer_flowline_columns(ctx):
    full = hydroplot.plot_hydro([13293970], basemap="none", context=ctx, output="geojson")
    slim = hydroplot.plot_hydro([13293970], basemap="none", properties="plot", context=ctx, output="geojson")
    assert_is_yahara(slim)
    assert slim.png == full.png
    columns = set(slim["flowline"]["features"][0]["properties"])
    assert {"comid", "hydroseq", "dnhydroseq", "streamorde"} <= columns
    assert len(columns) < len(full["flowline"]["features"][0]["properties"]) / 4
    listed = hydroplot.plot_hydro([13293970], properties=["TotDASqKM"], actually_plot=False, context=ctx, output="geojson")
    assert "totdasqkm" in listed["flowline"]["features"][0]["properties"]
    with pytest.raises(hydroplot.HydroplotError) as err:
        hydroplot.plot_hydro([13293970], properties="comid,nosuch", context=ctx)
    assert err.value.name == "HYDROPLOT_ERR_INVALID_ARGUMENT" and "nosuch" in err.value.message


def test_lod_false_draws_every_feature_of_a_map_too_small_to_show_them(ctx):
    # At 32 x 24 pixels the Yahara network is too dense to read: the level of
    # detail (default on) draws it by stream order; lod=False draws it whole.
    # The data returned is the same; at the default size so is the map.
    small = dict(basemap="none", size=(32, 24), context=ctx, output="geojson")
    thinned = hydroplot.plot_hydro([13293970], **small)
    whole = hydroplot.plot_hydro([13293970], lod=False, **small)
    assert_is_yahara(thinned)
    assert_is_yahara(whole)
    assert thinned.png != whole.png
    assert thinned["flowline"] == whole["flowline"]
    usual = dict(basemap="none", context=ctx, output="geojson")
    assert hydroplot.plot_hydro([13293970], **usual).png == hydroplot.plot_hydro([13293970], lod=False, **usual).png
