#' Trace a raindrop from a point to the nearest flowline.
#'
#' @param point an sf/sfc point (any CRS with an EPSG code) or c(lon, lat) in WGS 84.
#' @param direction "down" (default), "up" or "none".
#' @param context a [hydroplot_context()]; default: one from the environment.
#' @return 2 features, the flowline portion then the raindrop path, with the
#'   spec's 7 fields whatever the service sent: id, gnis_name, comid
#'   (integer), reachcode, raindrop_pathDist, measure (NA when missing),
#'   intersection_point (a list column: c(lon, lat) on the flowline,
#'   numeric(0) on the raindrop path) and a LINESTRING geometry in WGS 84:
#'   an sf object when sf is installed, else a data.frame whose geometry
#'   column holds WKB raw vectors.
get_raindrop_trace <- function(point, direction = "down", context = NULL) {
  crs <- "EPSG:4326"
  if (inherits(point, "sf") || inherits(point, "sfc")) {
    crs <- crs_string(sf::st_crs(point))
    point <- sf::st_coordinates(point)[1, 1:2]
  }
  tbl <- .Call(C_hp_trace, context_of(context), as.numeric(point[1]), as.numeric(point[2]),
               as.character(crs), as.character(direction), TRUE)
  tr <- arrow_frame(tbl, crs = "EPSG:4326")
  # The stream has the spec's 7 fields, typed, in its order;
  # intersection_point a list of c(lon, lat) and numeric(0).
  tr$intersection_point <- unclass(tr$intersection_point)
  tr
}
