# hydroplot's R binding on the benchmark network: the largest basin (50k
# flowlines) fetched from the loopback mock into sf objects, once through the
# Arrow C streams (plot_hydro, the default) and once through GeoJSON text (the
# package's earlier path: jsonlite::fromJSON, then sf::st_read of the same
# text), plus the flowline layer alone both ways.
#
#   Rscript bindings.R BASE_URL NETWORK.json OUT.json
# Prints `name value unit` lines; needs sf and jsonlite.
library(hydroplot)
args <- commandArgs(trailingOnly = TRUE)
base <- args[1]
outlet <- as.numeric(jsonlite::fromJSON(args[2])$outlets$all)
figures <- list()
put <- function(name, value, unit) {
  cat(sprintf("%-40s %14.3f %s\n", name, value, unit))
  figures[[name]] <<- value
}
ctx <- hydroplot_context(index_url = paste0(base, "/nldi"), fabric_url = paste0(base, "/fabric/pygeoapi"),
                         page_size = 1000, concurrency = 4, timeout_s = 600)
layers <- c("outlets", "flowline", "basin", "catchment", "network_wtbd", "off_network_wtbd")
req <- utils::modifyList(hydroplot:::empty_request(), list(comids = outlet, actually_plot = FALSE))
geojson_sf <- function(json) {
  jsonlite::fromJSON(json, simplifyVector = FALSE)
  sf::st_read(json, quiet = TRUE, stringsAsFactors = FALSE)
}

t <- system.time(d <- plot_hydro(list(outlet), actually_plot = FALSE, context = ctx))[["elapsed"]]
put("r_binding_arrow_e2e_wall", t, "s")
put("r_binding_flowlines", nrow(d$flowline), "flowlines")
stopifnot(inherits(d$flowline, "sf"))

t <- system.time({
  res <- .Call(hydroplot:::C_hp_plot, ctx, req, layers, NULL, FALSE)
  lapply(res$layers, geojson_sf)
})[["elapsed"]]
put("r_binding_geojson_e2e_wall", t, "s")

streams <- .Call(hydroplot:::C_hp_plot, ctx, req, "flowline", NULL, TRUE)$layers$flowline
put("r_binding_flowline_arrow_to_sf", system.time(hydroplot:::arrow_frame(streams, "EPSG:4269"))[["elapsed"]], "s")
put("r_binding_flowline_geojson_to_sf", system.time(geojson_sf(res$layers[["flowline"]]))[["elapsed"]], "s")
jsonlite::write_json(figures, args[3], auto_unbox = TRUE, digits = NA)
