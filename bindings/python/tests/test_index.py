"""index_geopackage and unindex_geopackage through the C library, checked
with plain SQL and bytes: the GeoPackage never written, the index file in
the context's index_dir, current, used by a plot, and removed."""

import hashlib
import shutil
import sqlite3

import pytest

import hydroplot
from conftest import mock_options


def _md5(path):
    return hashlib.md5(path.read_bytes()).hexdigest()


def test_index_then_remove(mock_url, sample_gpkg, tmp_path):
    indexes = tmp_path / "indexes"
    ctx = hydroplot.Context(tile_cache_dir=str(tmp_path / "tiles"), index_dir=str(indexes), **mock_options(mock_url))
    copy = tmp_path / "yahara.gpkg"
    shutil.copy(sample_gpkg, copy)
    before = _md5(copy)
    hydroplot.index_geopackage(copy, context=ctx)
    hydroplot.index_geopackage(str(copy), context=ctx)  # again: nothing changes
    assert _md5(copy) == before
    (index,) = list(indexes.iterdir())
    assert index.name.startswith("yahara.gpkg-") and index.name.endswith(".hydroplot-index")
    with sqlite3.connect(index) as db:
        (size,) = db.execute("SELECT size FROM source").fetchone()
        (blob,) = db.execute("SELECT length(reaches) FROM hydroplot_basin_network").fetchone()
    with sqlite3.connect(sample_gpkg) as db:
        (flowlines,) = db.execute("SELECT count(*) FROM NHDFlowline_Network WHERE COMID IS NOT NULL").fetchone()
        # The upstream links: flowlines that drain into a flowline of the file.
        (links,) = db.execute(
            "SELECT count(*) FROM NHDFlowline_Network f WHERE f.COMID IS NOT NULL AND EXISTS "
            "(SELECT 1 FROM NHDFlowline_Network d WHERE d.COMID IS NOT NULL AND d.Hydroseq = f.DnHydroseq)"
        ).fetchone()
    # The blob's layout (src/gpkg/stored_network.rs): magic and a 24-byte
    # header, a 36-byte record per reach, the upstream links as compressed
    # rows (n + 1 offsets, a u32 per link), a u32 per reach in comid order.
    assert size == copy.stat().st_size
    assert blob == 8 + 24 + 36 * flowlines + 4 * (flowlines + 1) + 4 * links + 4 * flowlines
    # The indexed file plots the published upstream count, and is not written.
    data = hydroplot.plot_hydro([13293970], hydro_data=copy, actually_plot=False, context=ctx, output="geojson")
    assert len(data["flowline"]["features"]) == 251
    assert _md5(copy) == before
    hydroplot.unindex_geopackage(copy, context=ctx)
    assert list(indexes.iterdir()) == []
    assert _md5(copy) == before


def test_a_file_that_is_not_a_geopackage_is_refused_untouched(ctx, tmp_path):
    notes = tmp_path / "notes.gpkg"
    notes.write_text("my notes")
    with pytest.raises(hydroplot.HydroplotError) as e:
        hydroplot.index_geopackage(notes, context=ctx)
    assert e.value.name == "HYDROPLOT_ERR_GPKG" and "not an SQLite database" in e.value.message
    assert notes.read_text() == "my notes"
    with pytest.raises(TypeError):
        hydroplot.index_geopackage(42, context=ctx)
