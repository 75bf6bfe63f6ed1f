# Many points at once: the raindrop traces of several points (through the C
# trace batch) and the comids of the catchments holding points.

# The coordinates of `points` (sf/sfc points, a 2-column matrix or data
# frame of lon, lat, or c(lon, lat, ...)) and their CRS. A shape that would
# drop or recycle numbers (a third column, an odd count) is refused.
points_xy <- function(points) {
  given <- points
  crs <- "EPSG:4326"
  if (inherits(points, "sf") || inherits(points, "sfc")) {
    crs <- crs_string(sf::st_crs(points))
    points <- sf_points_xy(points, "points", "get_comid()")
  }
  if (is.data.frame(points)) points <- as.matrix(points)
  if (is.numeric(points) && !is.matrix(points) && length(points) %% 2 == 0) {
    points <- matrix(points, ncol = 2, byrow = TRUE)
  }
  if (!is.numeric(points) || !is.matrix(points) || ncol(points) != 2) {
    stop("get_comid(): points must be sf points, a 2-column matrix or data frame of lon, lat, ",
         "or c(lon, lat) (an even count of numbers), not ", shown(given), call. = FALSE)
  }
  list(x = as.numeric(points[, 1]), y = as.numeric(points[, 2]), crs = crs)
}

# Warns "M of N points failed" with the first message, when any failed.
warn_failures <- function(errors, what) {
  failed <- which(!is.na(errors))
  if (length(failed) > 0) {
    warning(sprintf("%d of %d points failed to %s; the first (point %d): %s",
                    length(failed), length(errors), what, failed[1], errors[failed[1]]),
            call. = FALSE)
  }
}

#' The raindrop traces of many points, as one table.
#'
#' Called by [get_raindrop_trace()] for several points. Requests run
#' concurrently (the context's `concurrency`), slowing down when the service
#' answers 429; a point that fails does not stop the others.
#' @param xy a 2-column matrix of the points' x, y in `crs`.
#' @return the rows of [get_raindrop_trace()] for every point (2 per traced
#'   point), in input order, with a `point_index` column (1-based) and an
#'   `error` column: NA when traced; for a failed point one row with an
#'   empty geometry and the message. A warning counts the failures.
#' @noRd
raindrop_traces <- function(xy, crs, direction, context) {
  res <- .Call(C_hp_trace_batch, context_of(context), as.numeric(xy[, 1]), as.numeric(xy[, 2]),
               as.character(crs), as.character(direction))
  parts <- lapply(seq_along(res$errors), function(i) {
    if (is.na(res$errors[i])) {
      f <- trace_frame(res$tables[[i]])
    } else {
      f <- failed_trace_row()
    }
    f$point_index <- rep(i, nrow(f))
    f$error <- rep(res$errors[i], nrow(f))
    f
  })
  warn_failures(res$errors, "trace")
  if (length(parts) == 0) {
    none <- failed_trace_row()[0, ]
    none$point_index <- integer(0)
    none$error <- character(0)
    parts <- list(none)
  }
  # One part is the table itself (sf's rbind warns binding a table of no row).
  out <- if (length(parts) == 1) parts[[1]] else do.call(rbind, parts)
  first <- c("point_index", setdiff(names(out), c("point_index", "error", "geometry")), "error")
  out <- out[, c(first, if (!has_sf()) "geometry"), drop = FALSE]
  rownames(out) <- NULL
  out
}

# The one row of a point that failed: the trace's columns NA, an empty
# LINESTRING (sf) or NULL WKB.
failed_trace_row <- function() {
  df <- data.frame(id = NA_character_, gnis_name = NA_character_, comid = NA_integer_,
                   reachcode = NA_character_, raindrop_pathDist = NA_real_, measure = NA_real_,
                   stringsAsFactors = FALSE)
  df$intersection_point <- list(numeric(0))
  if (has_sf()) {
    return(sf::st_sf(df, geometry = sf::st_sfc(sf::st_linestring(), crs = 4326)))
  }
  df$geometry <- list(NULL)
  df
}

#' The comid of the NHDPlus catchment holding each point.
#'
#' @param points sf/sfc points (any CRS with an EPSG code), a 2-column matrix
#'   or data frame of lon, lat in WGS 84, or c(lon, lat) (several points:
#'   c(lon1, lat1, lon2, lat2, ...)). Other geometries, other column counts
#'   and an odd count of numbers are errors.
#' @param hydro_data a local NHDPlus GeoPackage with a catchment layer: the
#'   lookup is then local (its R-tree and an exact point-in-polygon test), no
#'   request. NULL (default): the fabric service answers, concurrently, one
#'   request per distinct point.
#' @param context a [hydroplot_context()]; default: one from the environment.
#' @return a numeric vector of comids in input order: NA for a point in no
#'   catchment or one that failed (a warning counts those, and the
#'   `"errors"` attribute holds each point's message, NA when looked up).
get_comid <- function(points, hydro_data = NULL, context = NULL) {
  p <- points_xy(points)
  if (!is.null(hydro_data)) hydro_data <- one_path(hydro_data, "hydro_data", "get_comid()")
  res <- .Call(C_hp_comid, context_of(context), p$x, p$y, p$crs, hydro_data)
  warn_failures(res$errors, "look up")
  comids <- res$comids
  if (any(!is.na(res$errors))) attr(comids, "errors") <- res$errors
  comids
}
