"""One schema per layer, whatever the source: the Yahara sample through
``hydro_data`` and the same basin from the mock services give the same Arrow
schemas and the same pandas dtypes; an empty layer keeps its fields."""

import pytest

import hydroplot

pa = pytest.importorskip("pyarrow")

#: The flowline fields the sample declares MEDIUMINT that the services write
#: as floats (``"streamorde": 5.0``): integers whatever the source.
ONCE_REAL = ("streamleve", "streamorde", "streamcalc", "divergence", "startflag", "terminalfl", "dnlevel",
             "dndraincou", "rtndiv", "vpuin", "vpuout", "tidal", "enabled")

#: The catchments' fields as the sample declares them (``CatchmentSP``:
#: MEDIUMINT, TEXT, REAL), written here by hand.
CATCHMENT = [("gridcode", pa.int64()), ("featureid", pa.int64()), ("sourcefc", pa.string()),
             ("areasqkm", pa.float64()), ("shape_length", pa.float64()), ("shape_area", pa.float64())]


def both(ctx, sample_gpkg, output, **kw):
    local = hydroplot.plot_hydro([13293970], hydro_data=sample_gpkg, actually_plot=False, context=ctx,
                                 output=output, **kw)
    services = hydroplot.plot_hydro([13293970], actually_plot=False, context=ctx, output=output,
                                    cache_data=False, **kw)
    return local, services


def test_local_and_services_give_one_arrow_schema(ctx, sample_gpkg):
    local, services = both(ctx, sample_gpkg, "arrow")
    for layer in hydroplot.LAYERS:
        a, b = pa.table(local[layer]).schema, pa.table(services[layer]).schema
        assert a.equals(b, check_metadata=True), layer
    flowline = pa.table(services["flowline"])
    for name in ONCE_REAL:
        assert flowline.schema.field(name).type == pa.int64(), name
    assert [(f.name, f.type) for f in pa.table(services["catchment"]).schema][1:] == CATCHMENT


def test_local_and_services_give_the_same_pandas_dtypes(ctx, sample_gpkg):
    pytest.importorskip("geopandas")
    local, services = both(ctx, sample_gpkg, "geopandas")
    for layer in hydroplot.LAYERS:
        assert local[layer].dtypes.to_dict() == services[layer].dtypes.to_dict(), layer
    assert all(str(services["flowline"][name].dtype) == "int64" for name in ONCE_REAL)


def test_an_empty_layer_keeps_its_fields_and_geometry_type(ctx):
    # Flowlines only: the catchments are not fetched, the layer is empty.
    data = hydroplot.plot_hydro([13293970], actually_plot=False, context=ctx, output="arrow", cache_data=False,
                                flowline_only=True)
    table = pa.table(data["catchment"])
    assert table.num_rows == 0
    assert [(f.name, f.type) for f in table.schema][1:] == CATCHMENT
    assert table.schema.field("geometry").metadata[b"hydroplot:geometry_type"] == b"MULTIPOLYGON"
    geopandas = pytest.importorskip("geopandas")
    frame = hydroplot.plot_hydro([13293970], actually_plot=False, context=ctx, output="geopandas",
                                 cache_data=False, flowline_only=True)["catchment"]
    assert isinstance(frame, geopandas.GeoDataFrame) and len(frame) == 0
    assert [c for c in frame.columns if c != "geometry"] == [name for name, _ in CATCHMENT]
    assert str(frame["featureid"].dtype) == "int64" and str(frame["areasqkm"].dtype) == "float64"
