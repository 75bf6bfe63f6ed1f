#' Trace a raindrop from a point to the nearest flowline.
#'
#' @param point an sf/sfc point (any CRS with an EPSG code; another geometry
#'   than POINT is an error) or c(lon, lat) in WGS 84; several points (an
#'   sf/sfc of many, or a 2-column matrix of lon, lat) are traced as one
#'   batch: one table of every point's rows with `point_index` (1-based) and
#'   `error` columns (see docs/batch.md).
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
  direction <- one_string(direction, "direction", "get_raindrop_trace()")
  crs <- "EPSG:4326"
  if (inherits(point, "sf") || inherits(point, "sfc")) {
    crs <- crs_string(sf::st_crs(point))
    point <- sf_points_xy(point, "point", "get_raindrop_trace()")
  }
  bad_point <- function() {
    stop("get_raindrop_trace(): point must be c(lon, lat), an sf point or a 2-column matrix, not ",
         shown(point), call. = FALSE)
  }
  if (is.matrix(point) && nrow(point) != 1) {
    # raindrop_traces() reads 2 columns: a third would be dropped unseen.
    if (!is.numeric(point) || ncol(point) != 2) bad_point()
    return(raindrop_traces(point, crs, direction, context))
  }
  point <- as.vector(point)
  if (!is.numeric(point) || length(point) != 2) bad_point()
  tbl <- .Call(C_hp_trace, context_of(context), as.numeric(point[1]), as.numeric(point[2]),
               as.character(crs), direction, TRUE)
  trace_frame(tbl)
}

# A trace's read_stream() table as the spec's columns and geometry.
trace_frame <- function(tbl) {
  tr <- arrow_frame(tbl, crs = "EPSG:4326")
  # The stream has the spec's 7 fields, typed, in its order;
  # intersection_point a list of c(lon, lat) and numeric(0).
  tr$intersection_point <- unclass(tr$intersection_point)
  tr
}
