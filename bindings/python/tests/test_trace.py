"""get_raindrop_trace(s) through the C library against the mock flowtrace process."""

import pickle

import pytest

import hydroplot

START = (-89.2158, 42.9561)


def test_an_upstream_trace_has_the_flowline_and_the_raindrop_path(ctx):
    fc = hydroplot.get_raindrop_trace(START, direction="up", context=ctx, output="geojson")
    flowline, path = fc["features"]
    assert len(fc["features"]) == 2
    assert (flowline["id"], path["id"]) == ("upstreamFlowline", "raindropPath")
    # The fields of the recorded real answer the mock replays
    # (tests/data/responses/flowtrace_up_yahara.json, facts in SOURCES.md there).
    props = flowline["properties"]
    assert props["comid"] == 13297178
    assert props["gnis_name"] == "Yahara River"
    assert props["reachcode"] == "07090002007369"
    assert props["raindrop_pathDist"] == pytest.approx(242.09)
    assert props["measure"] == pytest.approx(30.15)
    assert props["intersection_point"] == pytest.approx([-89.21324480351977, 42.956821579907405])
    assert len(flowline["geometry"]["coordinates"]) == 17 and len(path["geometry"]["coordinates"]) == 7
    assert path["geometry"]["type"] == "LineString"
    # The spec's 7 fields on both features: the path's missing ones null, its
    # intersection_point an empty list.
    assert path["properties"] == {
        "id": "raindropPath", "gnis_name": None, "comid": None, "reachcode": None,
        "raindrop_pathDist": None, "measure": None, "intersection_point": [],
    }
    assert set(props) == set(path["properties"]) and props["id"] == "upstreamFlowline"


def test_a_geojson_point_and_a_batch_give_the_same_trace(ctx):
    single = hydroplot.get_raindrop_trace({"type": "Point", "coordinates": list(START)}, "up",
                                          context=ctx, output="geojson")
    batch = hydroplot.get_raindrop_traces([START, (0.0, 0.0), START], "up", context=ctx, output="geojson")
    assert batch[0] == single == batch[2]
    assert isinstance(batch[1], hydroplot.HydroplotError)
    assert batch[1].name == "HYDROPLOT_ERR_HTTP" and batch[1].http_status == 500
    assert "outside" in batch[1].message


def test_bad_directions_fail_before_any_request(ctx):
    with pytest.raises(hydroplot.HydroplotError) as err:
        hydroplot.get_raindrop_trace(START, direction="sideways", context=ctx)
    assert err.value.name == "HYDROPLOT_ERR_INVALID_ARGUMENT"
    # str() would send a list's repr, or a CRS code as digits.
    with pytest.raises(TypeError, match=r"direction must be a string, not \['up'\]"):
        hydroplot.get_raindrop_traces([START], ["up"], context=ctx)
    with pytest.raises(TypeError, match="crs must be a string, not 4326"):
        hydroplot.get_raindrop_trace(START, crs=4326, context=ctx)


def test_a_start_that_is_no_point_is_refused_naming_it_before_any_request():
    # Nothing listens on port 9: a request would fail with a HydroplotError.
    nowhere = hydroplot.Context(index_url="http://127.0.0.1:9", fabric_url="http://127.0.0.1:9")
    cases = [
        ((), TypeError, "point must be an (x, y) pair"),
        ((-89.2, 42.9, 100.0), TypeError, "point must be an (x, y) pair"),
        (("-89.2", 42.9), TypeError, "point x must be a number, not '-89.2'"),
        ({"type": "Point", "coordinates": []}, TypeError, "point must be an (x, y) pair"),
        ({"type": "LineString", "coordinates": [START, START]}, ValueError, "point must be a Point"),
    ]
    for point, error, words in cases:
        with pytest.raises(error) as err:
            hydroplot.get_raindrop_trace(point, context=nowhere)
        assert words in str(err.value), point
    with pytest.raises(TypeError, match=r"points\[0\] must be an \(x, y\) pair"):
        hydroplot.get_comids([()], context=nowhere)
    # An empty shapely Point has no x: GEOS would raise, naming nothing.
    shapely = pytest.importorskip("shapely.geometry")
    with pytest.raises(ValueError, match="point is an empty geometry"):
        hydroplot.get_raindrop_trace(shapely.Point(), context=nowhere)
    with pytest.raises(ValueError, match=r"points\[1\] is an empty geometry"):
        hydroplot.get_raindrop_traces([START, shapely.Point()], context=nowhere)


def test_a_trace_is_drawn_on_a_new_map(ctx):
    fc = hydroplot.get_raindrop_trace(START, "up", context=ctx, output="geojson")
    xs = [x for f in fc["features"] for x, _ in f["geometry"]["coordinates"]]
    ys = [y for f in fc["features"] for _, y in f["geometry"]["coordinates"]]
    box = (min(xs) - 0.005, min(ys) - 0.005, max(xs) + 0.005, max(ys) + 0.005)
    m = hydroplot.Map.new(box, basemap="none", context=ctx)
    m.add_geojson(fc["features"][0], col="red", lwd=2).add_geojson(fc["features"][1], col="black", lwd=2)
    m.add_point(*START)
    assert m.png().startswith(b"\x89PNG")
    with pytest.raises(TypeError, match="pch must be a whole number"):
        m.add_point(*START, pch=2.5)
    with pytest.raises(TypeError, match="size must be a"):
        hydroplot.Map.new(box, size=800, basemap="none", context=ctx)


def test_contexts_pickle_by_their_options(ctx, mock_url):
    copy = pickle.loads(pickle.dumps(ctx))
    assert copy.options == ctx.options
    fc = hydroplot.get_raindrop_trace(START, "up", context=copy, output="geojson")
    assert fc["features"][0]["properties"]["comid"] == 13297178


def test_the_version_matches_the_header():
    assert hydroplot.version() == "0.1.0"
