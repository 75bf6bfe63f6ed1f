# sf (GDAL, PROJ and the system SQLite) and hydroplot (its own SQLite) in one
# R session: each reads and writes GeoPackages the other can read.
#   Rscript tests/bindings/sf_together.R YAHARA_SAMPLE_GPKG
args <- commandArgs(trailingOnly = TRUE)
suppressPackageStartupMessages(library(sf))
library(hydroplot)
gpkg <- args[1]
versions <- sf::sf_extSoftVersion()
# sf first, through GDAL's SQLite.
by_sf <- sf::st_read(gpkg, layer = "NHDFlowline_Network", quiet = TRUE)
# Then ours, on the same file in the same process.
d <- plot_hydro(list(13293970), hydro_data = gpkg, actually_plot = FALSE)
stopifnot(nrow(d$flowline) == 251, all(d$flowline$comid %in% by_sf[[grep("^comid$", names(by_sf), ignore.case = TRUE)]]))
# Our GeoPackage, read back by GDAL.
out <- tempfile(fileext = ".gpkg")
plot_hydro(list(13293970), hydro_data = gpkg, gpkg = out, actually_plot = FALSE)
layers <- sf::st_layers(out)
flowline_layer <- layers$name[tolower(layers$name) == "nhdflowline_network"]
stopifnot(length(flowline_layer) == 1, nrow(sf::st_read(out, layer = flowline_layer, quiet = TRUE)) == 251)
# And sf still transforms with PROJ after our library ran (Albers of 89.4 W 43.1 N).
p <- sf::st_transform(sf::st_sfc(sf::st_point(c(-89.4, 43.1)), crs = 4326), 5070)
stopifnot(abs(sf::st_coordinates(p)[1] - 533988.2) < 1, abs(sf::st_coordinates(p)[2] - 2252423) < 1)
cat(sprintf("ok: sf (GDAL %s, PROJ %s, GEOS %s) and hydroplot %s in one R session; %d of %d sample flowlines upstream\n",
            versions[["GDAL"]], versions[["PROJ"]], versions[["GEOS"]], hydroplot_version(), nrow(d$flowline), nrow(by_sf)))
