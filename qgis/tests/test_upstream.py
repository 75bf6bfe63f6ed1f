"""The "Upstream network and basin" algorithm through processing.run, from
the local sample and from the mock services: counts equal to the published
ones, and the flowlines equal to the upstream set plain SQL finds."""

import sqlite3

import pytest
from conftest import (
    UPSTREAM_SQL,
    YAHARA_CATCHMENTS,
    YAHARA_FLOWLINES,
    YAHARA_WATERBODIES,
    catchment_points,
    failure,
    point_layer,
    run,
)

TEMPORARY = "TEMPORARY_OUTPUT"
OUTPUTS = ("FLOWLINE", "BASIN", "CATCHMENT", "NETWORK_WTBD", "OFF_NETWORK_WTBD", "OUTLETS")


def sql_upstream(sample_gpkg):
    with sqlite3.connect(f"file:{sample_gpkg}?mode=ro", uri=True) as db:
        return {row[0] for row in db.execute(UPSTREAM_SQL)}


def comids_in(gpkg, table):
    """The comid column of ``table`` in a GeoPackage written by the sink, by SQL."""
    with sqlite3.connect(f"file:{gpkg}?mode=ro", uri=True) as db:
        srs = db.execute("SELECT srs_id FROM gpkg_geometry_columns WHERE table_name = ?", (table,)).fetchone()[0]
        return [row[0] for row in db.execute(f'SELECT comid FROM "{table}"')], srs


def all_temporary(**extra):
    return {**{name: TEMPORARY for name in OUTPUTS}, **extra}


def check_yahara(results):
    assert results["FLOWLINE"].featureCount() == YAHARA_FLOWLINES
    assert results["CATCHMENT"].featureCount() == YAHARA_CATCHMENTS
    assert results["BASIN"].featureCount() == 1
    waterbodies = results["NETWORK_WTBD"].featureCount() + results["OFF_NETWORK_WTBD"].featureCount()
    assert waterbodies == YAHARA_WATERBODIES
    for name in ("FLOWLINE", "BASIN", "CATCHMENT"):
        assert results[name].crs().authid() == "EPSG:4269", name


def test_local_geopackage_gives_the_published_counts_and_the_sql_upstream_set(plugin, sample_gpkg, tmp_path):
    flowline = str(tmp_path / "flowline.gpkg")
    results = run("upstream", {**all_temporary(), "COMIDS": "13293970", "HYDRO_DATA": sample_gpkg,
                               "FLOWLINE": flowline})
    comids, srs = comids_in(results["FLOWLINE"], "flowline")
    assert len(comids) == YAHARA_FLOWLINES
    assert set(comids) == sql_upstream(sample_gpkg)
    assert srs == 4269
    assert results["CATCHMENT"].featureCount() == YAHARA_CATCHMENTS
    assert results["BASIN"].featureCount() == 1
    assert results["BASIN"].wkbType() == 6  # MultiPolygon
    assert results["NETWORK_WTBD"].featureCount() + results["OFF_NETWORK_WTBD"].featureCount() == YAHARA_WATERBODIES


def test_the_feedback_carries_the_library_progress(plugin, sample_gpkg):
    from qgis.core import QgsProcessingFeedback

    class Stages(QgsProcessingFeedback):
        def __init__(self):
            super().__init__()
            self.texts = []

        def setProgressText(self, text):
            self.texts.append(text)
            super().setProgressText(text)

    feedback = Stages()
    run("upstream", {"COMIDS": "13293970", "HYDRO_DATA": sample_gpkg, "FLOWLINE": TEMPORARY}, feedback)
    assert feedback.progress() == 100  # the last stage's end
    # The library's stages, reading the sample's topology, then its layers.
    assert feedback.texts[:2] == ["topology", "catchment"], feedback.texts
    assert "flowline" in feedback.texts


def test_services_give_the_same_network(plugin, mock_url, sample_gpkg):
    results = run("upstream", all_temporary(COMIDS="13293970"))
    check_yahara(results)
    comids = {f["comid"] for f in results["FLOWLINE"].getFeatures()}
    assert comids == sql_upstream(sample_gpkg)


def test_a_linked_data_feature(plugin, mock_url, sample_gpkg):
    results = run("upstream", all_temporary(FEATURES="comid:13293970"))
    check_yahara(results)


@pytest.mark.parametrize("parameters, call", [
    ({"SITES": "05428500"}, {"outlets": ["05428500"]}),
    ({"EXTENT": "-89.45,-89.35,43.05,43.12 [EPSG:4326]"}, {"outlets": None, "bbox": (-89.45, 43.05, -89.35, 43.12)}),
])
def test_sites_and_extents_reach_the_package_as_given(plugin, mock_url, parameters, call):
    import hydroplot

    results = run("upstream", all_temporary(**parameters))
    direct = hydroplot.plot_hydro(**call, actually_plot=False, output="geojson")
    for layer, name in (("flowline", "FLOWLINE"), ("catchment", "CATCHMENT")):
        assert sorted(f["comid" if layer == "flowline" else "featureid"] for f in results[name].getFeatures()) \
            == sorted(f["properties"]["comid" if layer == "flowline" else "featureid"]
                      for f in direct[layer]["features"]), layer
    assert results["FLOWLINE"].featureCount() > 0


def test_selected_outlet_points_only(plugin, mock_url, sample_gpkg):
    from qgis.core import QgsProcessingFeatureSourceDefinition, QgsProject

    inside, elsewhere = catchment_points(sample_gpkg, [13293970, 13294312])
    layer = point_layer([(*inside, {}), (*elsewhere, {})])
    QgsProject.instance().addMapLayer(layer)
    try:
        layer.selectByIds([f.id() for f in layer.getFeatures() if f.id() == min(layer.allFeatureIds())])
        source = QgsProcessingFeatureSourceDefinition(layer.id(), selectedFeaturesOnly=True)
        results = run("upstream", all_temporary(OUTLETS_LAYER=source, HYDRO_DATA=sample_gpkg))
    finally:
        QgsProject.instance().removeMapLayer(layer.id())
    check_yahara(results)
    assert results["OUTLETS"].featureCount() == 1


def test_exact_comids_and_flowline_only(plugin, sample_gpkg):
    results = run("upstream", all_temporary(COMIDS="13293970 13294312", EXACT_COMIDS=True, FLOWLINE_ONLY=True,
                                            HYDRO_DATA=sample_gpkg))
    assert sorted(f["comid"] for f in results["FLOWLINE"].getFeatures()) == [13293970, 13294312]
    for name in ("CATCHMENT", "NETWORK_WTBD", "OFF_NETWORK_WTBD"):
        assert results[name].featureCount() == 0, name


def test_map_png_with_its_world_file(plugin, mock_url, sample_gpkg, tmp_path):
    png = tmp_path / "map.png"
    results = run("upstream", {"COMIDS": "13293970", "HYDRO_DATA": sample_gpkg, "MAP": str(png)})
    assert results["MAP"] == str(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    world = [float(v) for v in (tmp_path / "map.pgw").read_text().split()]
    assert len(world) == 6 and world[0] > 0 and world[3] < 0  # square pixels, north up
    assert world[0] == pytest.approx(-world[3])


def test_a_library_error_is_its_message_without_a_traceback(plugin, mock_url, sample_gpkg):
    message = failure("upstream", all_temporary(COMIDS="1"))
    # The library's own words (the mock's index has no comid 1).
    assert message.startswith("outlet comid/1: the index service has no feature comid/1"), message


def test_a_bad_value_is_refused_by_the_library_in_its_words(plugin, sample_gpkg):
    message = failure("upstream", all_temporary(COMIDS="13293970", HYDRO_DATA=sample_gpkg, STREAMORDER="0"))
    assert message.startswith("stream order 0 must be"), message


def test_a_plugin_error_names_the_parameter(plugin):
    assert failure("upstream", all_temporary(COMIDS="13293970 abc")) == "Comids: 'abc' is not a whole number"


def test_every_algorithm_has_help(plugin):
    from qgis.core import QgsApplication

    provider = QgsApplication.processingRegistry().providerById("hydroplot")
    names = sorted(a.displayName() for a in provider.algorithms())
    assert names == ["Comid at points", "Raindrop trace", "Upstream network and basin"]
    for algorithm in provider.algorithms():
        assert len(algorithm.shortHelpString()) > 200, algorithm.id()
