"""The map is georeferenced in Python: Map.bounds in EPSG:3857, inline
display, and Map.show / plot_hydro(ax=) placing it on a matplotlib Axes so
one's own EPSG:3857 layers land where they belong. Positions are checked
against Web Mercator computed here, not by the library."""

import io
import math

import pytest

import hydroplot

R = 6378137.0
BBOX = (-89.5, 43.0, -89.3, 43.15)
# Madison's Capitol, lon/lat.
CAPITOL = (-89.3842, 43.0747)


def mercator(lon, lat):
    """EPSG:3857 metres of a lon/lat: x = R lambda, y = R ln(tan(pi/4 + phi/2))."""
    return R * math.radians(lon), R * math.log(math.tan(math.pi / 4 + math.radians(lat) / 2))


def extent_by_hand(bbox, w, h):
    """The 3857 extent of a w x h map of the lon/lat bbox: centred, aspect
    kept, 4 % of the canvas free on each side."""
    x0, y0 = mercator(bbox[0], bbox[1])
    x1, y1 = mercator(bbox[2], bbox[3])
    res = max((x1 - x0) / (w * 0.92), (y1 - y0) / (h * 0.92))
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return (cx - w / 2 * res, cy - h / 2 * res, cx + w / 2 * res, cy + h / 2 * res)


def test_bounds_are_the_web_mercator_extent(ctx):
    m = hydroplot.Map.new(BBOX, size=(300, 200), basemap="none", context=ctx)
    assert m.bounds == pytest.approx(extent_by_hand(BBOX, 300, 200), abs=1e-3)
    xmin, ymin, xmax, ymax = m.bounds
    assert (xmax - xmin) / 300 == pytest.approx((ymax - ymin) / 200), "square pixels"


def test_a_map_displays_inline_as_its_png(ctx):
    m = hydroplot.Map.new(BBOX, size=(64, 48), basemap="none", context=ctx)
    png = m._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png == m.png()


def test_world_file_beside_the_png(ctx, tmp_path):
    m = hydroplot.Map.new(BBOX, size=(300, 200), basemap="none", context=ctx)
    m.write_png(tmp_path / "map.png")
    m.write_world_file(tmp_path / "map.png")
    a, d, b, e, c, f = (float(v) for v in (tmp_path / "map.pgw").read_text().split())
    xmin, ymin, xmax, ymax = m.bounds
    assert (d, b) == (0.0, 0.0)
    assert (a, e) == pytest.approx(((xmax - xmin) / 300, -(xmax - xmin) / 300))
    assert (c, f) == pytest.approx((xmin + a / 2, ymax + e / 2))
    assert "3857" in (tmp_path / "map.png.aux.xml").read_text()


def test_map_arguments_of_another_type_are_refused_naming_them(ctx, tmp_path):
    m = hydroplot.Map.new(BBOX, size=(64, 48), basemap="none", context=ctx)
    cases = [
        (lambda: hydroplot.Map.new(("a", 43.0, -89.3, 43.15), basemap="none", context=ctx), "bbox xmin must be a number"),
        (lambda: m.add_point("-89.4", 43.1), "x must be a number, not '-89.4'"),
        (lambda: m.add_geojson({"type": "Point", "coordinates": [-89.4, 43.1]}, lwd="2"), "lwd must be a number"),
        # A number would name a file "5" (and "5.wld" beside it).
        (lambda: m.write_png(5), "path must be a file path"),
        (lambda: m.write_world_file(5), "png_path must be a file path"),
        (lambda: m.show(ax="not an axes"), "ax must be a matplotlib Axes"),
    ]
    for call, words in cases:
        with pytest.raises(TypeError) as err:
            call()
        assert words in str(err.value)


def test_no_world_file_for_an_image_path_that_is_not_a_file(ctx, tmp_path):
    # The /dev/null case, safely: a folder named like a PNG. Its world
    # files would place no image; the library refuses them as it refuses
    # the PNG itself.
    (tmp_path / "folder.png").mkdir()
    m = hydroplot.Map.new(BBOX, size=(64, 48), basemap="none", context=ctx)
    with pytest.raises(hydroplot.HydroplotError):
        m.write_png(tmp_path / "folder.png")
    with pytest.raises(hydroplot.HydroplotError, match="not a regular file"):
        m.write_world_file(tmp_path / "folder.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder.png"]


def marker_centre(rgba, colour):
    """The mean (column, row) of the pixels of exactly ``colour``."""
    import numpy as np

    rows, cols = np.nonzero(np.all(rgba[:, :, :3] == colour, axis=2))
    assert len(rows) > 0, f"no pixel of {colour}"
    return cols.mean(), rows.mean()


def test_a_point_added_with_matplotlib_lands_on_its_pixel(ctx, sample_gpkg):
    """The map drawn by plot_hydro(ax=) into axes that fill a figure of the
    map's pixel size; a point transformed here and drawn by matplotlib lands
    on the pixel that Web Mercator by hand gives it (within 1 px), and the
    rest of the figure is the map's PNG, pixel for pixel."""
    pytest.importorskip("matplotlib", reason="matplotlib is not installed; CI installs it")
    import matplotlib.image
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    w, h = 400, 300
    fig = Figure(figsize=(w / 100, h / 100), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    data = hydroplot.plot_hydro(
        [13293970], hydro_data=sample_gpkg, basemap="none", size=(w, h), context=ctx, output="geojson", ax=ax
    )
    xmin, ymin, xmax, ymax = data.map.bounds
    assert ax.get_xlim() == pytest.approx((xmin, xmax)) and ax.get_ylim() == pytest.approx((ymin, ymax))
    assert ax.get_aspect() == 1.0
    x, y = mercator(*CAPITOL)
    ax.plot([x], [y], marker="s", markersize=5, color="#ff00ff", linestyle="none", antialiased=False)
    fig.canvas.draw()
    rgba = np.asarray(fig.canvas.buffer_rgba())
    assert rgba.shape[:2] == (h, w)
    res = (xmax - xmin) / w
    want = ((x - xmin) / res, (ymax - y) / res)
    got = marker_centre(rgba, (255, 0, 255))
    # Pixel centres are at +0.5 in `want`'s coordinates.
    assert abs(got[0] + 0.5 - want[0]) <= 1 and abs(got[1] + 0.5 - want[1]) <= 1, (got, want)
    # Away from the marker the figure is the map itself.
    png = (matplotlib.image.imread(io.BytesIO(data.png), format="png") * 255).round().astype(np.uint8)
    far = np.ones((h, w), bool)
    far[int(want[1]) - 10 : int(want[1]) + 10, int(want[0]) - 10 : int(want[0]) + 10] = False
    assert np.abs(rgba[far][:, :3].astype(int) - png[far][:, :3]).max() <= 1


def test_show_makes_a_figure_of_the_maps_size(ctx):
    pytest.importorskip("matplotlib", reason="matplotlib is not installed; CI installs it")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = hydroplot.Map.new(BBOX, size=(300, 200), basemap="none", context=ctx)
    ax = m.show()
    xmin, ymin, xmax, ymax = m.bounds
    assert ax.get_xlim() == pytest.approx((xmin, xmax)) and ax.get_ylim() == pytest.approx((ymin, ymax))
    width, height = ax.figure.get_size_inches() * ax.figure.dpi
    assert (round(width), round(height)) == (300, 200)
    plt.close(ax.figure)


def test_ax_needs_a_drawn_map(ctx, sample_gpkg):
    with pytest.raises(ValueError, match="actually_plot"):
        hydroplot.plot_hydro([13293970], hydro_data=sample_gpkg, actually_plot=False, context=ctx, ax=object())


def test_an_ax_that_is_no_axes_is_refused_before_any_file_is_written(ctx, sample_gpkg, tmp_path):
    # The map would be drawn on it last, after the PNG and the GeoPackage.
    with pytest.raises(TypeError, match="ax must be a matplotlib Axes, not 'not an axes'"):
        hydroplot.plot_hydro([13293970], hydro_data=sample_gpkg, file=tmp_path / "map.png", gpkg=tmp_path / "out.gpkg",
                             basemap="none", context=ctx, ax="not an axes")
    assert list(tmp_path.iterdir()) == []
