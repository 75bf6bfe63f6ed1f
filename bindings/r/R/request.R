# Turns plot_hydro()'s arguments into the typed fields the C glue reads
# (src/hydroplot_r.c, fill_request): every field is present, empty when unset.

empty_request <- function() {
  list(comids = numeric(0), comid_set = numeric(0), sites = character(0),
       features = character(0), points = numeric(0), points_crs = character(0),
       bbox = numeric(0), bbox_crs = character(0), streamorder = integer(0),
       hydro_data = character(0), gpkg = character(0), png_file = character(0), styles = character(0),
       basemap = character(0), zoom = integer(0), size = integer(0),
       actually_plot = TRUE, overwrite = TRUE, flowline_only = logical(0),
       no_cache = FALSE, cache_file = character(0), properties = character(0),
       lod = TRUE)
}

# Type checks of plot_hydro()'s arguments before they cross into C. The
# library checks every value (ranges, names, files), so R refuses what the
# CLI and C refuse, with the same words; what it cannot see is a value the
# crossing would change: isTRUE("yes") is FALSE, as.integer(3.7) is 3, NA
# becomes INT_MIN, and only the first of two paths would be read. These
# refuse such values with an error naming the argument.

# One TRUE or FALSE.
flag <- function(x, what) {
  if (!is.logical(x) || length(x) != 1 || is.na(x)) {
    stop("plot_hydro(): ", what, " must be TRUE or FALSE, not ", shown(x), call. = FALSE)
  }
  x
}

# `n` whole numbers that fit R's integers (the C int the library takes),
# none below `lowest` (0 for the C glue's unsigned sizes); `also` names
# another form the argument takes, for the message.
whole <- function(x, what, n = 1L, lowest = -.Machine$integer.max, also = NULL) {
  ok <- is.numeric(x) && length(x) == n && !anyNA(x) && all(is.finite(x)) &&
    all(x == trunc(x)) && all(x >= lowest & x <= .Machine$integer.max)
  if (!ok) {
    stop("plot_hydro(): ", what, " must be ", if (n == 1L) "a whole number" else paste(n, "whole numbers"),
         if (lowest == 0) " >= 0", also, ", not ", shown(x), call. = FALSE)
  }
  as.integer(x)
}

# One string (the C glue would read only the first of several).
one_string <- function(x, what, caller = "plot_hydro()", kind = "one string") {
  if (!is.character(x) || length(x) != 1 || is.na(x)) {
    stop(caller, ": ", what, " must be ", kind, ", not ", shown(x), call. = FALSE)
  }
  x
}

# One file path (a single string), with ~ expanded.
one_path <- function(x, what, caller = "plot_hydro()") {
  path.expand(one_string(x, what, caller, kind = "one file path (a string)"))
}

# A value as R prints it, cut short, for an error message.
shown <- function(x) {
  text <- paste(deparse(x, width.cutoff = 60L), collapse = " ")
  if (nchar(text) > 60) paste0(substr(text, 1, 57), "...") else text
}

# "EPSG:<code>" of an sf/sfc/bbox object's CRS (NULL when it has none: the
# default, EPSG:4326). The library knows EPSG codes only, so a CRS without one
# (a WKT or PROJ definition) must be transformed first (needs_4326()).
crs_string <- function(crs) {
  if (is.null(crs) || is.na(crs)) return(NULL)
  paste0("EPSG:", crs$epsg)
}

# Whether an sf CRS is set but has no EPSG code: its coordinates are then
# transformed to EPSG:4326 by sf (which reads the WKT), never read as lon/lat.
needs_4326 <- function(crs) !is.null(crs) && !is.na(crs) && is.na(crs$epsg)

# Comids as doubles the C glue converts exactly: each must be a finite whole
# number within the 64-bit integer range; anything else is an error naming it.
comid_values <- function(x) {
  if (!is.numeric(x)) stop("plot_hydro(): comids are numbers, not ", class(x)[1])
  x <- as.numeric(x)
  bad <- function(test, why) {
    if (any(test)) stop("plot_hydro(): comid ", format(x[which(test)[1]], digits = 15), " ", why, call. = FALSE)
  }
  bad(is.na(x) & !is.nan(x), "is missing (NA)")
  bad(is.nan(x) | is.infinite(x), "is not a finite number")
  bad(abs(x) >= 2^63, "is outside the 64-bit integer range")
  bad(x != trunc(x), "is not a whole number")
  x
}

# The six outlet forms of the spec.
add_outlets <- function(req, outlets) {
  if (is.null(outlets)) return(req)
  if (inherits(outlets, "sf") || inherits(outlets, "sfc")) {
    if (needs_4326(sf::st_crs(outlets))) outlets <- sf::st_transform(outlets, 4326)
    xy <- sf::st_coordinates(outlets)
    req$points <- as.numeric(t(xy[, 1:2, drop = FALSE]))
    req$points_crs <- as.character(crs_string(sf::st_crs(outlets)))
    return(req)
  }
  if (is.data.frame(outlets)) {
    stop("plot_hydro(): a data.frame outlet needs point geometry (an sf object); install sf")
  }
  if (is.character(outlets)) {
    req$sites <- outlets
    return(req)
  }
  if (is.numeric(outlets)) {
    req$comid_set <- comid_values(outlets)
    return(req)
  }
  if (!is.list(outlets)) stop("plot_hydro(): cannot read outlets of class ", class(outlets)[1])
  for (o in outlets) {
    if ((is.numeric(o) || identical(o, NA)) && length(o) == 1) {
      req$comids <- c(req$comids, comid_values(as.numeric(o)))
    } else if ((is.character(o) || is.list(o)) && length(o) == 2 && all(vapply(o, is.character, TRUE))) {
      req$features <- c(req$features, as.character(unlist(o)))
    } else if (is.character(o) && length(o) == 1) {
      req$sites <- c(req$sites, o)
    } else {
      stop("plot_hydro(): cannot read an outlet of class ", class(o)[1],
           ": give a comid, a site id or a (feature source, id) pair")
    }
  }
  req
}

add_bbox <- function(req, bbox) {
  if (is.null(bbox)) return(req)
  req$bbox <- as.numeric(unname(bbox[c("xmin", "ymin", "xmax", "ymax")]))
  if (anyNA(req$bbox)) req$bbox <- as.numeric(unname(bbox))[1:4]
  crs <- attr(bbox, "crs")
  if (inherits(crs, "crs") && needs_4326(crs)) {
    box <- sf::st_bbox(sf::st_transform(sf::st_as_sfc(sf::st_bbox(bbox)), 4326))
    req$bbox <- as.numeric(unname(box[c("xmin", "ymin", "xmax", "ymax")]))
    crs <- sf::st_crs(4326)
  }
  req$bbox_crs <- if (inherits(crs, "crs")) as.character(crs_string(crs)) else as.character(crs)
  req
}

# plot_config (a nested list) as element, property, value triples; NA is "NA".
style_triples <- function(plot_config) {
  out <- character(0)
  for (element in names(plot_config)) {
    props <- plot_config[[element]]
    if (element == "outlets") {
      for (source in names(props)) out <- c(out, style_triples(structure(list(props[[source]]), names = paste0("outlets.", source))))
    } else {
      for (p in names(props)) out <- c(out, element, p, if (is.na(props[[p]])) "NA" else as.character(props[[p]]))
    }
  }
  out
}
