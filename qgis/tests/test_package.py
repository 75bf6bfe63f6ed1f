"""The installable zip: qgis/package.py builds it with the folder
hydroplot_qgis/ at the top; unzipped into a fresh QGIS profile's plugin
folder, QGIS finds the plugin there and starts it (qgis.utils, in a
process of its own so that this one's loaded copy does not answer), with
the hydroplot package and without it (then one message says how to
install it)."""

import os
import subprocess
import sys
import textwrap
import zipfile

import pytest
from conftest import PLUGIN_DIR

STARTS_FROM_PROFILE = textwrap.dedent("""
    import os, sys, zipfile
    from unittest import mock
    from qgis.core import QgsApplication
    from qgis.gui import QgisInterface, QgsMapCanvas
    from qgis.PyQt.QtWidgets import QMainWindow
    profile_root, archive, with_package = sys.argv[1], sys.argv[2], sys.argv[3] == "yes"
    if not with_package:
        sys.modules["hydroplot"] = None  # import hydroplot raises ImportError
    QgsApplication.setPrefixPath("/usr", True)
    app = QgsApplication([], False, profile_root)
    app.initQgis()
    plugins = os.path.join(QgsApplication.qgisSettingsDirPath(), "python", "plugins")
    os.makedirs(plugins)
    zipfile.ZipFile(archive).extractall(plugins)
    import qgis.utils
    iface = mock.Mock(spec=QgisInterface)
    iface.mainWindow.return_value = QMainWindow()
    iface.mapCanvas.return_value = QgsMapCanvas(iface.mainWindow())
    qgis.utils.iface = iface
    qgis.utils.plugin_paths = [plugins]
    sys.path.insert(0, plugins)
    qgis.utils.updateAvailablePlugins()
    assert "hydroplot_qgis" in qgis.utils.available_plugins, qgis.utils.available_plugins
    assert qgis.utils.pluginMetadata("hydroplot_qgis", "qgisMinimumVersion") == "3.22"
    assert qgis.utils.loadPlugin("hydroplot_qgis") and qgis.utils.startPlugin("hydroplot_qgis")
    import hydroplot_qgis
    assert os.path.dirname(hydroplot_qgis.__file__) == os.path.join(plugins, "hydroplot_qgis"), hydroplot_qgis.__file__
    provider = QgsApplication.processingRegistry().providerById("hydroplot")
    if with_package:
        print("algorithms", sorted(a.id() for a in provider.algorithms()))
    else:
        assert provider is None
        [call] = iface.messageBar.return_value.pushMessage.call_args_list
        print("message", call.args[1])
    assert qgis.utils.unloadPlugin("hydroplot_qgis")
    assert QgsApplication.processingRegistry().providerById("hydroplot") is None
    print("ok")
""")


@pytest.mark.parametrize("with_package", ["yes", "no"])
def test_the_zip_installs_into_a_fresh_profile_and_starts(qgis_app, tmp_path, with_package):
    sys.path.insert(0, str(PLUGIN_DIR))
    try:
        import package
    finally:
        sys.path.remove(str(PLUGIN_DIR))
    archive = package.build(tmp_path / "dist")
    names = zipfile.ZipFile(archive).namelist()
    assert {"hydroplot_qgis/metadata.txt", "hydroplot_qgis/__init__.py", "hydroplot_qgis/icon.png",
            "hydroplot_qgis/LICENSE"} <= set(names)
    assert all(n.startswith("hydroplot_qgis/") and "__pycache__" not in n for n in names)
    result = subprocess.run(
        [sys.executable, "-c", STARTS_FROM_PROFILE, str(tmp_path / "profile"), str(archive), with_package],
        check=False, capture_output=True, text=True, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    if with_package == "yes":
        assert "algorithms ['hydroplot:comid_at_points', 'hydroplot:raindrop_trace', 'hydroplot:upstream']" \
            in result.stdout, result.stdout
    else:
        assert "message The hydroplot plugin needs the hydroplot Python package" in result.stdout, result.stdout
        assert "-m pip install" in result.stdout
    assert result.stdout.strip().endswith("ok")
