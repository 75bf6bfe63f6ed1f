# GeoJSON FeatureCollection text -> an sf object (when sf is installed) or a
# data.frame whose `geometry` column holds each feature's GeoJSON geometry
# as a list (type, coordinates).

# HYDROPLOT_R_NO_SF=1 forces the data.frame path (tests use it to cover both).
has_sf <- function() !nzchar(Sys.getenv("HYDROPLOT_R_NO_SF")) && requireNamespace("sf", quietly = TRUE)

# Properties of every feature as columns; a property missing on a feature is NA,
# an array-valued one a list column.
properties_frame <- function(features) {
  keys <- unique(unlist(lapply(features, function(f) names(f$properties))))
  if (length(keys) == 0) return(data.frame(row.names = seq_along(features)))
  cols <- lapply(structure(keys, names = keys), function(k) {
    values <- lapply(features, function(f) f$properties[[k]])
    scalar <- all(vapply(values, function(v) length(v) <= 1 && !is.list(v), TRUE))
    if (scalar) unlist(lapply(values, function(v) if (is.null(v)) NA else v)) else I(values)
  })
  as.data.frame(cols, stringsAsFactors = FALSE, optional = TRUE)
}

geojson_frame <- function(json, crs) {
  fc <- fromJSON(json, simplifyVector = FALSE)
  features <- fc$features
  if (has_sf()) {
    if (length(features) == 0) return(sf::st_sf(geometry = sf::st_sfc(crs = crs)))
    layer <- sf::st_read(json, quiet = TRUE, stringsAsFactors = FALSE)
    return(suppressWarnings(sf::st_set_crs(sf::st_set_crs(layer, NA), crs)))
  }
  df <- properties_frame(features)
  df$geometry <- I(lapply(features, function(f) f$geometry))
  df
}
