"""get_comids through the C library: the fabric service (the mock) and a local GeoPackage agree."""

import math

import hydroplot

# shapely's representative point of the catchment of comid 13293970 in the
# Yahara sample, a point in the Pacific, and the same first point again.
INSIDE = (-89.30492301879852, 43.0088104217879)
POINTS = [INSIDE, (-125.0, 35.0), {"type": "Point", "coordinates": list(INSIDE)}]


def test_service_and_local_lookups_agree(ctx, sample_gpkg):
    remote = hydroplot.get_comids(POINTS + [(math.nan, 1.0)], context=ctx)
    assert remote[:3] == [13293970, None, 13293970]
    assert isinstance(remote[3], hydroplot.HydroplotError)
    assert remote[3].name == "HYDROPLOT_ERR_INVALID_ARGUMENT" and "finite" in remote[3].message
    assert hydroplot.get_comids(POINTS, hydro_data=sample_gpkg, context=ctx) == remote[:3]


def test_a_projected_point_and_an_empty_list(ctx, sample_gpkg):
    # INSIDE in Web Mercator (EPSG:3857), computed with the spherical formulas.
    r = 6378137.0
    x = math.radians(INSIDE[0]) * r
    y = math.log(math.tan(math.pi / 4 + math.radians(INSIDE[1]) / 2)) * r
    assert hydroplot.get_comids([(x, y)], crs="EPSG:3857", hydro_data=sample_gpkg, context=ctx) == [13293970]
    assert hydroplot.get_comids([], context=ctx) == []


def test_a_missing_geopackage_fails_the_call(ctx, tmp_path):
    try:
        hydroplot.get_comids([INSIDE], hydro_data=tmp_path / "none.gpkg", context=ctx)
    except hydroplot.HydroplotError as e:
        assert e.name == "HYDROPLOT_ERR_IO"
    else:
        raise AssertionError("a missing GeoPackage must fail")
