"""index_geopackage and unindex_geopackage through the C library, checked
with plain SQL: what the file holds before, after and after removal."""

import shutil
import sqlite3

import pytest

import hydroplot


def _indexes(path):
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'NHDFlowline_Network'")
        return sorted(name for (name,) in rows)


def test_index_then_remove(ctx, sample_gpkg, tmp_path):
    copy = tmp_path / "yahara.gpkg"
    shutil.copy(sample_gpkg, copy)
    assert "hydroplot_topology" not in _indexes(copy)
    hydroplot.index_geopackage(copy, context=ctx)
    hydroplot.index_geopackage(str(copy), context=ctx)  # again: nothing changes
    assert "hydroplot_topology" in _indexes(copy)
    # The indexed file plots the published upstream count.
    data = hydroplot.plot_hydro([13293970], hydro_data=copy, actually_plot=False, context=ctx, output="geojson")
    assert len(data["flowline"]["features"]) == 251
    hydroplot.unindex_geopackage(copy, context=ctx)
    assert "hydroplot_topology" not in _indexes(copy)


def test_a_file_that_is_not_a_geopackage_is_refused_untouched(ctx, tmp_path):
    notes = tmp_path / "notes.gpkg"
    notes.write_text("my notes")
    with pytest.raises(hydroplot.HydroplotError) as e:
        hydroplot.index_geopackage(notes, context=ctx)
    assert e.value.name == "HYDROPLOT_ERR_GPKG" and "not an SQLite database" in e.value.message
    assert notes.read_text() == "my notes"
    with pytest.raises(TypeError):
        hydroplot.index_geopackage(42, context=ctx)
