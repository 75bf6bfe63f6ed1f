# Tables read from the library's Arrow C streams (src/hydroplot_r.c,
# read_stream: column names, the geometry's GeoArrow metadata and batches of
# R vectors) -> an sf object (when sf is installed) or a data.frame whose
# `geometry` column holds each feature's WKB as a raw vector (NULL when it
# has none). No GeoJSON on the way.

# HYDROPLOT_R_NO_SF=1 forces the data.frame path (tests use it to cover both).
has_sf <- function() !nzchar(Sys.getenv("HYDROPLOT_R_NO_SF")) && requireNamespace("sf", quietly = TRUE)

# The CRS the GeoArrow metadata names, "AUTHORITY:CODE": the id of its
# PROJJSON ({"crs":{..., "id":{"authority":"EPSG","code":4269}}}, the only
# id in the library's definitions) or an
# authority code ({"crs":"EPSG:4269"}); else `default`.
arrow_crs <- function(metadata, default) {
  id <- regmatches(metadata, regexec('"id"\\s*:\\s*\\{\\s*"authority"\\s*:\\s*"([^"]+)"\\s*,\\s*"code"\\s*:\\s*([0-9]+)', metadata))[[1]]
  if (length(id) == 3) return(paste0(id[2], ":", id[3]))
  m <- regmatches(metadata, regexec('"crs"\\s*:\\s*"([^"]*)"', metadata))[[1]]
  if (length(m) == 2) m[2] else default
}

# WKB of GEOMETRYCOLLECTION EMPTY: what sf gets for a feature without geometry.
empty_wkb <- as.raw(c(1, 7, 0, 0, 0, 0, 0, 0, 0))

arrow_frame <- function(tbl, crs) {
  cols <- if (length(tbl$batches) == 1) tbl$batches[[1]] else
    lapply(seq_along(tbl$names), function(i) do.call(c, lapply(tbl$batches, `[[`, i)))
  names(cols) <- tbl$names
  geometry <- cols$geometry
  cols$geometry <- NULL
  n <- length(geometry)
  # A list column (the trace's intersection_point) stays one column.
  cols <- lapply(cols, function(c) if (is.list(c)) I(c) else c)
  df <- if (length(cols)) as.data.frame(cols, stringsAsFactors = FALSE, optional = TRUE) else
    data.frame(row.names = seq_len(n))
  crs <- arrow_crs(tbl$geometry_metadata, crs)
  if (has_sf()) {
    wkb <- lapply(geometry, function(g) if (is.null(g)) empty_wkb else g)
    sfc <- sf::st_as_sfc(structure(wkb, class = "WKB"), crs = sf::st_crs(crs))
    # An empty layer keeps the geometry type the stream declares
    # (`hydroplot:geometry_type`), as its rows would give it.
    type <- if (is.null(tbl$geometry_type)) "" else tbl$geometry_type
    if (n == 0 && nzchar(type)) class(sfc) <- c(paste0("sfc_", type), "sfc")
    return(sf::st_sf(df, geometry = sfc))
  }
  df$geometry <- I(geometry)
  df
}
