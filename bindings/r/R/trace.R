#' Trace a raindrop from a point to the nearest flowline.
#'
#' @param point an sf/sfc point (any CRS with an EPSG code) or c(lon, lat) in WGS 84.
#' @param direction "down" (default), "up" or "none".
#' @param context a [hydroplot_context()]; default: one from the environment.
#' @return 2 features, the flowline portion then the raindrop path, with the
#'   spec's fields id, gnis_name, comid, reachcode, raindrop_pathDist,
#'   measure, intersection_point (a list column) and a LINESTRING geometry in
#'   WGS 84: an sf object when sf is installed, else a data.frame whose
#'   geometry column holds coordinate matrices.
get_raindrop_trace <- function(point, direction = "down", context = NULL) {
  crs <- "EPSG:4326"
  if (inherits(point, "sf") || inherits(point, "sfc")) {
    crs <- crs_string(sf::st_crs(point))
    point <- sf::st_coordinates(point)[1, 1:2]
  }
  json <- .Call(C_hp_trace, context_of(context), as.numeric(point[1]), as.numeric(point[2]),
                as.character(crs), as.character(direction))
  features <- fromJSON(json, simplifyVector = FALSE)$features
  get <- function(f, k, na) if (is.null(f$properties[[k]])) na else f$properties[[k]]
  df <- data.frame(
    id = vapply(features, function(f) if (is.null(f$id)) NA_character_ else f$id, ""),
    gnis_name = vapply(features, get, "", k = "gnis_name", na = NA_character_),
    comid = vapply(features, function(f) as.integer(get(f, "comid", NA_integer_)), 0L),
    reachcode = vapply(features, get, "", k = "reachcode", na = NA_character_),
    raindrop_pathDist = vapply(features, function(f) as.numeric(get(f, "raindrop_pathDist", NA_real_)), 0),
    measure = vapply(features, function(f) as.numeric(get(f, "measure", NA_real_)), 0),
    stringsAsFactors = FALSE
  )
  df$intersection_point <- lapply(features, function(f) as.numeric(unlist(f$properties$intersection_point)))
  coords <- lapply(features, function(f) do.call(rbind, lapply(f$geometry$coordinates, as.numeric)))
  if (has_sf()) {
    return(sf::st_sf(df, geometry = sf::st_sfc(lapply(coords, sf::st_linestring), crs = 4326)))
  }
  df$geometry <- I(coords)
  df
}
