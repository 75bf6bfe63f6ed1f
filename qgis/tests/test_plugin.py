"""The plugin as QGIS loads it: the provider and the toolbar button come and
go with it, an unload during a running click leaves no layer and no task,
and without the hydroplot package one message says how to install it."""

import sys
import time

from conftest import catchment_points, start_plugin

PATIENCE_S = 30


def hydroplot_tasks():
    from qgis.core import QgsApplication

    manager = QgsApplication.taskManager()
    return [t for t in manager.activeTasks() if "Upstream network and basin" in t.description()]


def test_the_provider_has_the_three_algorithms(plugin):
    from qgis.core import QgsApplication

    provider = QgsApplication.processingRegistry().providerById("hydroplot")
    assert provider is not None
    assert sorted(a.id() for a in provider.algorithms()) == [
        "hydroplot:comid_at_points", "hydroplot:raindrop_trace", "hydroplot:upstream"]
    assert plugin.action.isCheckable()
    plugin.action.setChecked(True)
    assert plugin.iface.mapCanvas().mapTool() is plugin.tool
    plugin.action.setChecked(False)
    assert plugin.iface.mapCanvas().mapTool() is None


def test_unload_during_a_click_leaves_no_layers_and_no_tasks(plugin, iface, sample_gpkg):
    import qgis.utils
    from qgis.core import QgsApplication, QgsPointXY, QgsProject

    project = QgsProject.instance()
    layers_before = set(project.mapLayers())
    groups_before = len(project.layerTreeRoot().children())
    iface.mapCanvas().setDestinationCrs(project.crs().fromEpsgId(4326))
    [(lon, lat)] = catchment_points(sample_gpkg, [13293970])
    request = plugin.tool.add_upstream(QgsPointXY(lon, lat))
    assert qgis.utils.unloadPlugin("hydroplot_qgis")
    try:
        deadline = time.monotonic() + PATIENCE_S
        while hydroplot_tasks() and time.monotonic() < deadline:
            QgsApplication.processEvents()
            time.sleep(0.01)
        QgsApplication.processEvents()
        assert hydroplot_tasks() == []
        assert request.group is None
        assert set(project.mapLayers()) == layers_before
        assert len(project.layerTreeRoot().children()) == groups_before
        assert QgsApplication.processingRegistry().providerById("hydroplot") is None
        assert "hydroplot_qgis" not in sys.modules
    finally:
        start_plugin()


def test_without_the_package_one_message_says_how_to_install_it(plugin, iface, monkeypatch):
    import hydroplot_qgis

    monkeypatch.setitem(sys.modules, "hydroplot", None)  # import hydroplot raises ImportError
    iface.messageBar.reset_mock()
    stand_in = hydroplot_qgis.classFactory(iface)
    stand_in.initGui()
    [call] = iface.messageBar.return_value.pushMessage.call_args_list
    title, text = call.args[:2]
    assert title == "hydroplot"
    assert "-m pip install" in text and "bindings/python" in text, text
    stand_in.unload()
