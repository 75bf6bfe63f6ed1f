"""The Arrow C streams through pyarrow: imported from ctypes with
``RecordBatchReader._import_from_c`` and through the PyCapsule protocol; types,
published row counts, the CRS, and every value and geometry equal to the
GeoJSON accessor's, feature by feature."""

import ctypes
import json

import pytest

import hydroplot
from hydroplot import _ffi
from hydroplot._arrow import _CStream
from hydroplot._ffi import check, lib, text

pa = pytest.importorskip("pyarrow")
shapely = pytest.importorskip("shapely")

#: Published counts of the Yahara sample upstream of comid 13293970.
COUNTS = {"flowline": 251, "catchment": 250, "nhdarea": 3, "flowline_nonnetwork": 48, "gage": 44,
          "basin": 1, "outlets": 1}
ALL_LAYERS = tuple(COUNTS) + ("network_wtbd", "off_network_wtbd")
START = (-89.2158, 42.9561)


@pytest.fixture(scope="module")
def sample_pd(sample_gpkg):
    """The raw plot data of the sample (no map), freed after the module."""
    ctx = hydroplot.Context()
    req = lib.hydroplot_plot_request_new()
    pd = ctypes.c_void_p()
    try:
        check(lib.hydroplot_plot_request_add_comid(req, 13293970))
        check(lib.hydroplot_plot_request_set_hydro_data(req, text(sample_gpkg)))
        check(lib.hydroplot_plot_request_set_actually_plot(req, False))
        check(lib.hydroplot_plot(ctx._handle, req, None, ctypes.byref(pd)))
    finally:
        lib.hydroplot_plot_request_free(req)
    yield pd
    lib.hydroplot_plot_data_free(pd)


def import_layer(pd, layer):
    """A layer's stream imported by pyarrow from a C struct we own."""
    stream = _CStream()
    check(lib.hydroplot_plot_data_layer_arrow(pd, text(layer), ctypes.byref(stream)))
    return pa.RecordBatchReader._import_from_c(ctypes.addressof(stream)).read_all()


def geojson_of(pd, layer):
    return json.loads(_ffi.take_buffer(lambda out: lib.hydroplot_plot_data_layer_geojson(pd, text(layer), out)))


def crs_of(table):
    field = table.schema.field("geometry")
    assert field.metadata[b"ARROW:extension:name"] == b"geoarrow.wkb"
    meta = json.loads(field.metadata[b"ARROW:extension:metadata"])
    # GeoArrow's recommended form: PROJJSON, named by its id.
    assert meta["crs_type"] == "projjson" and meta["crs"]["type"] == "GeographicCRS"
    return "{authority}:{code}".format(**meta["crs"]["id"])


def assert_same_features(table, fc):
    """Every row of ``table`` holds the values and geometry of the same
    feature of the FeatureCollection ``fc``."""
    rows = table.to_pylist()
    assert len(rows) == len(fc["features"])
    columns = set(table.column_names) - {"geometry"}
    for row, feature in zip(rows, fc["features"]):
        props = feature["properties"]
        assert set(props) <= columns
        for name in columns:
            want, got = props.get(name), row[name]
            field_type = table.schema.field(name).type
            if want is None:
                assert got is None, name
            elif pa.types.is_int64(field_type):
                assert isinstance(got, int) and got == want and float(got) == float(want), name
            elif pa.types.is_string(field_type) and not isinstance(want, str):
                assert json.loads(got) == want, name
            else:
                assert got == want, name
        if feature["geometry"] is None:
            assert row["geometry"] is None
        else:
            # The same coordinates exactly, the rings' winding aside: GeoJSON
            # winds them as RFC 7946 says, WKB keeps the source's.
            got = shapely.normalize(shapely.from_wkb(row["geometry"]))
            want = shapely.normalize(shapely.geometry.shape(feature["geometry"]))
            assert shapely.equals_exact(got, want, 0.0)


def test_every_layer_of_the_sample_equals_its_geojson(sample_pd):
    waterbodies = 0
    for layer in ALL_LAYERS:
        table = import_layer(sample_pd, layer)
        assert crs_of(table) == "EPSG:4269"
        assert table.schema.field(0).name == "geometry"
        assert pa.types.is_binary(table.schema.field("geometry").type)
        if layer in COUNTS:
            assert table.num_rows == COUNTS[layer], layer
        else:
            waterbodies += table.num_rows
        assert_same_features(table, geojson_of(sample_pd, layer))
    assert waterbodies == 117


def test_flowline_types_and_comids(sample_pd):
    table = import_layer(sample_pd, "flowline")
    assert table.schema.field("comid").type == pa.int64()
    assert table.schema.field("gnis_name").type == pa.string()
    assert table.schema.field("lengthkm").type == pa.float64()
    comids = table.column("comid").to_pylist()
    assert len(set(comids)) == 251 and 13293970 in comids and table.column("comid").null_count == 0


def test_unknown_layer_and_null_out_are_errors(sample_pd):
    with pytest.raises(hydroplot.HydroplotError) as err:
        import_layer(sample_pd, "rivers")
    assert err.value.name == "HYDROPLOT_ERR_INVALID_ARGUMENT" and "rivers" in err.value.message
    with pytest.raises(hydroplot.HydroplotError) as err:
        check(lib.hydroplot_plot_data_layer_arrow(sample_pd, text("flowline"), None))
    assert err.value.name == "HYDROPLOT_ERR_NULL_ARGUMENT"


def test_output_arrow_is_a_capsule_stream_readable_twice(ctx, sample_gpkg):
    data = hydroplot.plot_hydro([13293970], hydro_data=sample_gpkg, actually_plot=False, context=ctx,
                                output="arrow")
    flowline = data["flowline"]
    assert isinstance(flowline, hydroplot.ArrowStream)
    first, second = pa.table(flowline), pa.table(flowline)
    assert first.num_rows == second.num_rows == 251
    assert first.equals(second)
    # A capsule nobody consumes is released by its destructor (no leak, no crash).
    capsule = flowline.__arrow_c_stream__()
    del capsule
    assert pa.table(data["catchment"]).num_rows == 250


#: The spec's trace fields and their Arrow types ("Trace result").
TRACE_SCHEMA = [("id", "string"), ("gnis_name", "string"), ("comid", "int64"), ("reachcode", "string"),
                ("raindrop_pathDist", "double"), ("measure", "double"), ("intersection_point", "list<item: double>")]


def test_trace_stream(ctx):
    arrow = hydroplot.get_raindrop_trace(START, "up", context=ctx, output="arrow")
    fc = hydroplot.get_raindrop_trace(START, "up", context=ctx, output="geojson")
    table = pa.table(arrow)
    assert crs_of(table) == "EPSG:4326"
    assert [(f.name, str(f.type)) for f in table.schema][1:] == TRACE_SCHEMA
    # The recorded trace: the Yahara flowline 13297178, then the raindrop path.
    assert table.column("id").to_pylist() == ["upstreamFlowline", "raindropPath"]
    assert table.column("comid").to_pylist() == [13297178, None]
    assert table.column("intersection_point").to_pylist() == [[-89.21324480351977, 42.956821579907405], []]
    assert_same_features(table, fc)
    batch = hydroplot.get_raindrop_traces([START, (0.0, 0.0)], "up", context=ctx, output="arrow")
    assert pa.table(batch[0]).num_rows == 2 and isinstance(batch[1], hydroplot.HydroplotError)


def test_the_trace_geodataframe_has_the_specs_7_fields(ctx):
    geopandas = pytest.importorskip("geopandas")
    frame = hydroplot.get_raindrop_trace(START, "up", context=ctx, output="geopandas")
    assert isinstance(frame, geopandas.GeoDataFrame) and frame.crs.to_epsg() == 4326
    assert [c for c in frame.columns if c != "geometry"] == [name for name, _ in TRACE_SCHEMA]
    points = [list(p) for p in frame["intersection_point"]]
    assert points == [[-89.21324480351977, 42.956821579907405], []]
    assert frame["gnis_name"].tolist()[0] == "Yahara River" and frame["comid"].tolist()[0] == 13297178


def test_an_integer_column_with_a_missing_value_stays_integer_in_a_geodataframe(ctx, monkeypatch):
    """The path has no comid: pandas would make the column float64
    (13297178.0); it is the nullable Int64, from Arrow or from GeoJSON."""
    pytest.importorskip("geopandas")
    for from_arrow in (True, False):
        monkeypatch.setattr(hydroplot, "_from_arrow_supported", lambda: from_arrow)
        frame = hydroplot.get_raindrop_trace(START, "up", context=ctx, output="geopandas")
        comid = frame.set_index("id")["comid"]
        assert str(comid.dtype) == "Int64", from_arrow
        assert comid["upstreamFlowline"] == 13297178 and comid.isna().tolist() == [False, True], from_arrow


def test_layer_types_follow_the_number_kinds_sent(ctx):
    # The mock replays the fabric's flowlines as the real service writes them:
    # comid an integer literal, hydroseq a float literal (510042379.0) though
    # integral. The schema follows the literals, not the values.
    data = hydroplot.plot_hydro([13293970], actually_plot=False, context=ctx, output="arrow",
                                cache_data=False)
    table = pa.table(data["flowline"])
    assert table.schema.field("comid").type == pa.int64()
    assert table.schema.field("hydroseq").type == pa.float64()
    assert 510042379.0 in table.column("hydroseq").to_pylist()


def test_geopandas_goes_through_arrow(ctx, sample_gpkg, monkeypatch):
    geopandas = pytest.importorskip("geopandas")
    if not hasattr(geopandas.GeoDataFrame, "from_arrow"):
        pytest.skip("geopandas < 1.0")
    # No GeoJSON is read on the way.
    monkeypatch.setattr(hydroplot, "_geojson", lambda fill: pytest.fail("GeoJSON was parsed"))
    data = hydroplot.plot_hydro([13293970], hydro_data=sample_gpkg, actually_plot=False, context=ctx,
                                output="geopandas")
    flowline = data["flowline"]
    assert len(flowline) == 251 and flowline.crs.to_epsg() == 4269
    assert str(flowline["comid"].dtype) == "int64"
    assert set(flowline.geom_type) <= {"LineString", "MultiLineString"}
