"""The "Raindrop trace" algorithm through processing.run against the mock:
the recorded real trace (tests/data/responses/flowtrace_up_yahara.json),
and a batch of points, one failing, as the batch CLI lays them out."""

import json

import pytest
from conftest import catchment_points, failure, point_layer, run

TRACE_FIELDS = ["id", "gnis_name", "comid", "reachcode", "raindrop_pathDist", "measure", "intersection_point"]
RECORDED_POINT = (-89.2158, 42.9561)


def test_one_point_gives_the_recorded_trace_with_the_7_fields(plugin, mock_url):
    results = run("raindrop_trace", {"POINT": f"{RECORDED_POINT[0]},{RECORDED_POINT[1]} [EPSG:4326]",
                                     "DIRECTION": 1, "FLOWLINE": "TEMPORARY_OUTPUT",
                                     "RAINDROP_PATH": "TEMPORARY_OUTPUT"})
    flowline, path = results["FLOWLINE"], results["RAINDROP_PATH"]
    assert flowline.fields().names() == TRACE_FIELDS
    assert path.fields().names() == TRACE_FIELDS
    [f] = list(flowline.getFeatures())
    # The recorded real answer (as bindings/ci.sh checks it from C++).
    assert (f["comid"], f["gnis_name"], f["reachcode"]) == (13297178, "Yahara River", "07090002007369")
    assert f["raindrop_pathDist"] == pytest.approx(242.09, abs=0.005)
    assert f["measure"] == pytest.approx(30.15, abs=0.005)
    assert len(json.loads(f["intersection_point"])) == 2
    [p] = list(path.getFeatures())
    assert json.loads(p["intersection_point"]) == []
    assert flowline.crs().authid() == "EPSG:4326"
    assert not f.geometry().isEmpty() and not p.geometry().isEmpty()


def test_a_batch_with_one_failing_point(plugin, mock_url, sample_gpkg):
    a, b = catchment_points(sample_gpkg, [13293970, 13294312])
    outside = (-100.0, 40.0)  # in no catchment of the data: the service's HTTP 500
    layer = point_layer([(*a, {"site": "007"}), (*outside, {"site": "far"}), (*b, {"site": "b"})], ["site"])
    results = run("raindrop_trace", {"POINTS": layer, "DIRECTION": 0, "CONTEXT_OPTIONS": "retries=0",
                                     "FLOWLINE": "TEMPORARY_OUTPUT", "RAINDROP_PATH": "TEMPORARY_OUTPUT",
                                     "ERRORS": "TEMPORARY_OUTPUT"})
    flowline, path, errors = results["FLOWLINE"], results["RAINDROP_PATH"], results["ERRORS"]
    assert flowline.fields().names() == ["point_index", "site"] + TRACE_FIELDS
    rows = [(f["point_index"], f["site"], f["comid"]) for f in flowline.getFeatures()]
    assert rows == [(0, "007", 13293970), (2, "b", 13294312)]
    assert [(f["point_index"], f["site"]) for f in path.getFeatures()] == [(0, "007"), (2, "b")]
    assert errors.fields().names() == ["point_index", "site", "error"]
    [failed] = list(errors.getFeatures())
    assert (failed["point_index"], failed["site"]) == (1, "far")
    assert "500" in failed["error"], failed["error"]


def test_a_point_and_a_layer_together_are_refused(plugin):
    layer = point_layer([(*RECORDED_POINT, {})])
    message = failure("raindrop_trace", {"POINT": "-89.2,42.9 [EPSG:4326]", "POINTS": layer,
                                         "FLOWLINE": "TEMPORARY_OUTPUT"})
    assert message == "Give either a point or a point layer"


def test_a_carried_field_named_like_an_output_is_refused_before_any_request(plugin):
    layer = point_layer([(*RECORDED_POINT, {"comid": "1"})], ["comid"])
    # A closed port as the service: a request would fail otherwise.
    message = failure("raindrop_trace", {"POINTS": layer, "FLOWLINE": "TEMPORARY_OUTPUT",
                                         "CONTEXT_OPTIONS": "index_url=http://127.0.0.1:9/nldi; retries=0"})
    assert "'comid' has the name of an output field" in message, message
