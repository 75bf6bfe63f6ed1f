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

# Column names (properties): NA would cross as the text "NA", a number as
# its digits, so both are refused; the library judges the names.
column_names <- function(x) {
  if (!is.character(x) || anyNA(x)) {
    stop("plot_hydro(): properties must be \"all\", \"plot\" or column names (strings), not ", shown(x), call. = FALSE)
  }
  x
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

# The x, y of sf/sfc points as a 2-column matrix, a row per point.
# st_coordinates() gives a row per vertex of any geometry, so a polygon or
# line would become as many points: any type but POINT is refused, naming
# `what`. An empty point is a row of NA, which the library refuses.
sf_points_xy <- function(x, what, caller) {
  types <- as.character(sf::st_geometry_type(x))
  other <- which(types != "POINT")
  if (length(other) > 0) {
    stop(caller, ": ", what, " must be POINT geometries, not ", types[other[1]], " (feature ", other[1], ")",
         call. = FALSE)
  }
  sf::st_coordinates(x)[, 1:2, drop = FALSE]
}

# Site ids and (feature source, id) pairs as the text the C glue sends,
# where NA would become "NA", an outlet of that name: refused, as a
# missing comid is, naming the outlet.
outlet_text <- function(x, what) {
  if (anyNA(x)) {
    text <- paste(ifelse(is.na(x), "NA", paste0('"', x, '"')), collapse = ", ")
    stop("plot_hydro(): ", what, " ", if (length(x) > 1) paste0("(", text, ")") else text, " is missing (NA)",
         call. = FALSE)
  }
  as.character(unlist(x))
}

# The six outlet forms of the spec.
add_outlets <- function(req, outlets) {
  if (is.null(outlets)) return(req)
  if (inherits(outlets, "sf") || inherits(outlets, "sfc")) {
    if (needs_4326(sf::st_crs(outlets))) outlets <- sf::st_transform(outlets, 4326)
    req$points <- as.numeric(t(sf_points_xy(outlets, "outlets", "plot_hydro()")))
    req$points_crs <- as.character(crs_string(sf::st_crs(outlets)))
    return(req)
  }
  if (is.data.frame(outlets)) {
    stop("plot_hydro(): a data.frame outlet needs point geometry (an sf object); install sf")
  }
  if (is.character(outlets)) {
    req$sites <- vapply(outlets, outlet_text, "", what = "site id", USE.NAMES = FALSE)
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
      req$features <- c(req$features, outlet_text(o, "feature source or id in"))
    } else if (is.character(o) && length(o) == 1) {
      req$sites <- c(req$sites, outlet_text(o, "site id"))
    } else {
      stop("plot_hydro(): cannot read an outlet of class ", class(o)[1],
           ": give a comid, a site id or a (feature source, id) pair")
    }
  }
  req
}

# The box as 4 numbers (by name when named xmin, ymin, xmax, ymax, as an sf
# bbox is): of more, the C glue would read the first 4.
add_bbox <- function(req, bbox) {
  if (is.null(bbox)) return(req)
  if (!is.numeric(bbox) || length(bbox) != 4) {
    stop("plot_hydro(): bbox must be 4 numbers, c(xmin, ymin, xmax, ymax), or an sf bbox, not ",
         shown(bbox), call. = FALSE)
  }
  req$bbox <- as.numeric(unname(bbox[c("xmin", "ymin", "xmax", "ymax")]))
  if (anyNA(req$bbox)) req$bbox <- as.numeric(unname(bbox))
  crs <- attr(bbox, "crs")
  if (inherits(crs, "crs") && needs_4326(crs)) {
    box <- sf::st_bbox(sf::st_transform(sf::st_as_sfc(sf::st_bbox(bbox)), 4326))
    req$bbox <- as.numeric(unname(box[c("xmin", "ymin", "xmax", "ymax")]))
    crs <- sf::st_crs(4326)
  }
  req$bbox_crs <- if (inherits(crs, "crs")) as.character(crs_string(crs)) else as.character(crs)
  req
}

# plot_config (a nested list: element, property, value; outlets one level
# deeper, by source) as element, property, value triples; NA is "NA". The
# library judges every name and value; R refuses the shapes its walk would
# skip unseen (a level that is not a named list) and values that are not
# one item (if() would stop on them in R's own words), naming the element.
style_triples <- function(plot_config) {
  if (is.null(plot_config)) return(character(0))
  elements <- style_level(plot_config, "plot_config", 'list(flowline = list(col = "red"))')
  out <- character(0)
  for (i in seq_along(elements)) {
    element <- names(elements)[i]
    where <- paste0("plot_config$", element)
    if (element == "outlets") {
      sources <- style_level(elements[[i]], where, "list(comid = list(pch = 17)), by outlet source")
      for (j in seq_along(sources)) {
        source <- names(sources)[j]
        out <- c(out, style_props(sources[[j]], paste0("outlets.", source), paste0(where, "$", source),
                                  "list(pch = 17) (outlets are styled by source: outlets = list(comid = list(pch = 17)))"))
      }
    } else {
      out <- c(out, style_props(elements[[i]], element, where, 'list(col = "red", lwd = 2)'))
    }
  }
  out
}

# One level of plot_config: a list whose items all have names (the walk
# reads names, so a nameless item or a vector would be skipped).
style_level <- function(x, where, example) {
  named <- is.list(x) && (length(x) == 0 || (!is.null(names(x)) && !anyNA(names(x)) && all(nzchar(names(x)))))
  if (!named) stop("plot_hydro(): ", where, " must be a named list such as ", example, ", not ", shown(x), call. = FALSE)
  x
}

# The element, property, value triples of one element's (or outlet
# source's) properties.
style_props <- function(props, element, where, example) {
  props <- style_level(props, where, example)
  unlist(lapply(seq_along(props), function(i) {
    c(element, names(props)[i], style_value(props[[i]], paste0(where, "$", names(props)[i])))
  }))
}

# One style value as R writes it: NA is "NA".
style_value <- function(v, where) {
  if (!is.atomic(v) || length(v) != 1) stop("plot_hydro(): ", where, " must be one value, not ", shown(v), call. = FALSE)
  if (is.na(v)) "NA" else as.character(v)
}
