#' Plot the basins and upstream networks of outlets, or everything in a box.
#'
#' The parameters and defaults are the interface spec's. `outlets` takes its
#' six forms: NULL with a `bbox`; a list of comids (`list(13293970)`, upstream
#' tributaries plotted); an integer vector (exactly these comids); a
#' character vector of gauge sites (`"05428500"`); a list of (feature source,
#' id) pairs (`list(c("comid", "13293970"), list("huc12pp", "070900020602"))`);
#' an sf data.frame of points (POINT geometries only: a line's or polygon's
#' vertices are not outlets). A list may mix comids, sites and pairs. A site
#' id or feature holding NA is an error naming it, as a missing comid is. An
#' argument of another type or length than it takes (`lod = "yes"`,
#' `zoom = 3.7`, `overwrite = NA`, two paths in `file`, two basemaps, five
#' numbers in `bbox`, a `plot_config` of another shape) is an error naming
#' it, before any request.
#'
#' @param outlets,bbox,streamorder,hydro_data,gpkg,plot_config,basemap,zoom,add,actually_plot,overwrite,flowline_only,cache_data
#'   as in the spec; `streamorder = "auto"` is the reference's area rule;
#'   `plot_config` a nested list, element then property (outlets by source:
#'   `list(outlets = list(comid = list(pch = 17)))`); `cache_data` a file
#'   path, or FALSE to turn off every cache; `add = TRUE` draws onto the last
#'   map plot_hydro() drew in this session (not with `actually_plot = FALSE`,
#'   which draws and shows nothing).
#' @param file write the PNG here instead of showing it in the active graphics
#'   device. The library checks it with `hydro_data`, `gpkg` and `cache_data`
#'   before anything is read or fetched (never one of them, however spelled;
#'   not named as another image format, `.jpg` or `.pdf`: the map is a PNG;
#'   its folder must exist; an existing file is kept when `overwrite` is
#'   FALSE) and writes it atomically. Shown in the device, the map is placed
#'   at its EPSG:3857 bounds with equal scales (`asp = 1`, no margins), and
#'   the device stays in those metres: `points()`, `lines()`, `text()` and
#'   `plot(sf::st_transform(x, 3857), add = TRUE)` then draw where they belong.
#' @param size map size in pixels, c(width, height) (default 1024 x 768).
#' @param properties the columns asked of the fabric service: `"all"` (the
#'   default), `"plot"` (what the map reads: a smaller download, the same
#'   map), or a character vector of network flowline columns added to
#'   `"plot"`, such as `c("totdasqkm", "slope")`; an unknown name is an error
#'   before any request.
#' @param lod the map's level of detail (default TRUE): a map too dense to
#'   read at its size shows flowlines by stream order (widths growing with
#'   order, the main stem always, features under a pixel left out); FALSE
#'   draws every feature. The data returned is the same either way, and the
#'   samples' maps at their usual sizes too.
#' @param context a [hydroplot_context()]; default: one from the environment.
#' @return invisibly, a named list of layers (outlets, flowline, basin,
#'   catchment, network_wtbd, off_network_wtbd), sf objects in NAD83
#'   (EPSG:4269) when sf is installed, else data.frames with a geometry
#'   list column of WKB raw vectors; read from the library's Arrow streams
#'   (integer properties such as comid are integer, or double beyond 32
#'   bits); attributes `bbox`, `warnings`, `png` (raw PNG bytes, NULL when
#'   not plotted) and `map_bounds` (the PNG's extent in EPSG:3857 metres,
#'   c(xmin, ymin, xmax, ymax): the outer edges of its corner pixels; NULL
#'   when not plotted). Each of `warnings` is also raised as an R warning.
plot_hydro <- function(outlets = NULL, bbox = NULL, streamorder = NULL, hydro_data = NULL,
                       gpkg = NULL, plot_config = NULL, basemap = "Esri.NatGeoWorldMap",
                       zoom = NULL, add = FALSE, actually_plot = TRUE, overwrite = TRUE,
                       flowline_only = NULL, cache_data = NULL, file = NULL, size = NULL,
                       properties = NULL, lod = TRUE, context = NULL) {
  req <- add_bbox(add_outlets(empty_request(), outlets), bbox)
  if (!is.null(streamorder)) req$streamorder <- if (identical(streamorder, "auto")) -1L else whole(streamorder, "streamorder", also = ' or "auto"')
  if (!is.null(hydro_data)) req$hydro_data <- one_path(hydro_data, "hydro_data")
  if (!is.null(gpkg)) req$gpkg <- one_path(gpkg, "gpkg")
  if (!is.null(file)) req$png_file <- one_path(file, "file")
  req$styles <- style_triples(plot_config)
  if (!is.null(basemap)) req$basemap <- one_string(basemap, "basemap")
  if (!is.null(zoom)) req$zoom <- whole(zoom, "zoom")
  if (!is.null(size)) req$size <- whole(size, "size", 2L, lowest = 0)
  req$actually_plot <- flag(actually_plot, "actually_plot")
  req$overwrite <- flag(overwrite, "overwrite")
  if (!is.null(flowline_only)) req$flowline_only <- flag(flowline_only, "flowline_only")
  if (isFALSE(cache_data)) {
    req$no_cache <- TRUE
  } else if (!is.null(cache_data) && !isTRUE(cache_data)) {
    req$cache_file <- one_path(cache_data, "cache_data")
  }
  if (!is.null(properties)) req$properties <- paste(column_names(properties), collapse = ",")
  req$lod <- flag(lod, "lod")
  add <- flag(add, "add")

  onto <- NULL
  if (add) {
    onto <- .state$map
    if (is.null(onto)) stop("plot_hydro(add = TRUE): no map was drawn before in this session")
  }
  layers <- c("outlets", "flowline", "basin", "catchment", "network_wtbd", "off_network_wtbd")
  res <- .Call(C_hp_plot, context_of(context), req, layers, onto, TRUE)

  out <- lapply(res$layers, arrow_frame, crs = "EPSG:4269")
  attr(out, "bbox") <- structure(res$bbox, names = c("xmin", "ymin", "xmax", "ymax"))
  attr(out, "warnings") <- res$warnings
  if (!is.null(res$map)) {
    .state$map <- res$map
    png_bytes <- .Call(C_hp_map_png, res$map)
    attr(out, "png") <- png_bytes
    bounds <- structure(.Call(C_hp_map_bounds, res$map), names = c("xmin", "ymin", "xmax", "ymax"))
    attr(out, "map_bounds") <- bounds
    show_png(png_bytes, file, bounds)
  }
  # The library's warnings (basemap tiles left blank, ...) as R warnings,
  # after the map is drawn; they stay in attr(x, "warnings").
  for (w in res$warnings) warning(w, call. = FALSE)
  invisible(out)
}

# Draws the PNG in the active graphics device at its EPSG:3857 `bounds`,
# unless it went to `file` (the library wrote it there, checked and
# atomically). The device keeps the map's user coordinates (par("usr") in
# metres, mar = 0) afterwards, so layers added with base graphics land on
# the map. Drawing the PNG needs the png package (`can_read_png`); without
# it the device still gets the map's coordinates, and the PNG goes to a
# temporary file, named in a message.
show_png <- function(bytes, file, bounds, can_read_png = requireNamespace("png", quietly = TRUE)) {
  if (!is.null(file)) return(invisible(file))
  # Not restored on exit: the margins and window are the map's coordinates.
  graphics::par(mar = c(0, 0, 0, 0))
  graphics::plot.new()
  graphics::plot.window(xlim = bounds[c(1, 3)], ylim = bounds[c(2, 4)], asp = 1, xaxs = "i", yaxs = "i")
  if (!can_read_png) {
    file <- tempfile(fileext = ".png")
    writeBin(bytes, file)
    message("plot_hydro(): install the png package to see the map in R; it was written to ", file,
            " (the device has the map's EPSG:3857 coordinates: layers added now land where they belong)")
    return(invisible(file))
  }
  img <- png::readPNG(bytes)
  graphics::rasterImage(img, bounds[1], bounds[2], bounds[3], bounds[4], interpolate = FALSE)
  invisible(NULL)
}
