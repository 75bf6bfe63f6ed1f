# The R binding against the loopback mock (run under tests/bindings/with-mock.sh,
# which sets HYDROPLOT_INDEX_URL etc.) and the Yahara sample GeoPackage
# (HYDROPLOT_TEST_DATA, default tests/data). Prints "hydroplot-r: N passed, M failed".
library(hydroplot)

# In CI (CI=true) a missing tool or package is a failure naming it, never a
# skip; locally its tests are skipped, saying so.
in_ci <- identical(Sys.getenv("CI"), "true")

# Only against the mock: without it (e.g. a plain R CMD check) the calls would
# go to the real services.
if (!nzchar(Sys.getenv("HYDROPLOT_TEST_MOCK_URL"))) {
  if (in_ci) {
    cat("hydroplot-r: the loopback mock services are missing, and CI=true: run under tests/bindings/with-mock.sh\n")
    cat("hydroplot-r: 0 passed, 1 failed\n")
    quit(status = 1)
  }
  cat("hydroplot-r: skipped: run under tests/bindings/with-mock.sh, which starts the loopback mock services\n")
  quit(status = 0)
}

data_dir <- Sys.getenv("HYDROPLOT_TEST_DATA", "tests/data")
sample_gpkg <- file.path(data_dir, "yahara_sample.gpkg")
with_sf <- hydroplot:::has_sf()
passed <- 0L
failed <- 0L
check <- function(name, expr) {
  ok <- tryCatch({ force(expr); TRUE }, error = function(e) { message("FAIL ", name, ": ", conditionMessage(e)); FALSE })
  if (ok) { passed <<- passed + 1L; cat("ok  ", name, "\n") } else failed <<- failed + 1L
}
# TRUE when `present`; else FALSE, after a failure naming `what` under CI=true
# or a note that the tests needing it are skipped.
required <- function(present, what) {
  if (present) return(TRUE)
  if (in_ci) check(paste(what, "is installed (CI=true: a missing tool fails)"), stop(what, " is missing"))
  else cat("skipped: the tests needing", what, "(not installed)\n")
  FALSE
}
# sf, unless the data.frame path is asked for (HYDROPLOT_R_NO_SF=1).
if (!nzchar(Sys.getenv("HYDROPLOT_R_NO_SF"))) invisible(required(with_sf, "the R package sf (Debian r-cran-sf)"))
expect_error <- function(expr, pattern) {
  msg <- tryCatch({ force(expr); "" }, error = function(e) conditionMessage(e))
  if (!grepl(pattern, msg)) stop("expected an error matching '", pattern, "', got '", msg, "'")
}
counts <- function(d) vapply(d, nrow, 0L)
# Upstream of comid 13293970, the published nhdplusTools figures for the Yahara
# sample: 251 flowlines, 250 catchments (one basin, one outlet) and 117
# waterbodies, network and off-network together (the split is not published).
yahara <- c(outlets = 1L, flowline = 251L, basin = 1L, catchment = 250L)
yahara_waterbodies <- 117L
is_yahara <- function(d) {
  n <- counts(d)
  identical(n[names(yahara)], yahara) && n[["network_wtbd"]] + n[["off_network_wtbd"]] == yahara_waterbodies
}
# The basin's bbox, rounded: the extent of the 250 upstream catchments,
# computed by hand from the GeoPackage's CatchmentSP geometries.
yahara_bbox <- c(-89.605, 42.95, -89.204, 43.366)

check("upstream of comid 13293970 from the services, drawn to a file", {
  png_file <- tempfile(fileext = ".png")
  d <- plot_hydro(list(13293970), file = png_file)
  stopifnot(is_yahara(d))
  stopifnot(identical(readBin(png_file, "raw", 8), as.raw(c(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a))))
  stopifnot(identical(readBin(png_file, "raw", file.size(png_file)), attr(d, "png")))
  stopifnot(all.equal(round(unname(attr(d, "bbox")), 3), yahara_bbox))
  stopifnot(d$outlets$comid == 13293970, length(attr(d, "warnings")) == 0)
  if (with_sf) stopifnot(inherits(d$flowline, "sf"), sf::st_crs(d$flowline)$epsg == 4269)
})

check("the local sample gives the same layers without drawing", {
  d <- plot_hydro(list(13293970), hydro_data = sample_gpkg, actually_plot = FALSE)
  stopifnot(is_yahara(d), is.null(attr(d, "png")))
})

check("the published bbox case: stream order 2 in the NAD83 box", {
  # nhdplusTools' published figures: 76 flowlines, 10 network and 43
  # off-network waterbodies.
  box <- structure(c(xmin = -89.56684, ymin = 42.99816, xmax = -89.24681, ymax = 43.17192), crs = "EPSG:4269")
  d <- plot_hydro(bbox = box, streamorder = 2, hydro_data = sample_gpkg, actually_plot = FALSE)
  n <- counts(d)
  stopifnot(n[["flowline"]] == 76L, n[["network_wtbd"]] == 10L, n[["off_network_wtbd"]] == 43L)
})

check("outlet forms: feature pair, comid set, site", {
  by_pair <- plot_hydro(list(c("comid", "13293970")), actually_plot = FALSE)
  stopifnot(is_yahara(by_pair))
  exact <- plot_hydro(c(13293970L, 13294312L, 13293454L), actually_plot = FALSE)
  stopifnot(identical(sort(as.numeric(exact$flowline$comid)), c(13293454, 13293970, 13294312)))
  site <- plot_hydro("05429500", actually_plot = FALSE)
  stopifnot(site$outlets$id == "USGS-05429500")
  by_comid <- plot_hydro(list(site$outlets$comid), actually_plot = FALSE)
  stopifnot(nrow(site$flowline) == nrow(by_comid$flowline))
})

if (with_sf) check("an sf point outlet is looked up like the C point outlet", {
  pt <- sf::st_sf(geometry = sf::st_sfc(sf::st_point(c(-89.36, 43.09)), crs = 4326))
  d <- plot_hydro(pt, actually_plot = FALSE)
  stopifnot(nrow(d$flowline) > 0, nrow(d$basin) == 1)
})

check("add = TRUE draws onto the last map; plot_config as a nested list", {
  first <- plot_hydro(list(13293970), basemap = "none", file = tempfile(fileext = ".png"))
  second <- plot_hydro(list(13294312), add = TRUE, file = tempfile(fileext = ".png"),
                       plot_config = list(flowline = list(col = "red", lwd = 3), basin = list(col = NA),
                                          outlets = list(comid = list(pch = 17, col = "red"))))
  stopifnot(!identical(attr(first, "png"), attr(second, "png")))
})

check("the map is shown in the active graphics device", {
  stopifnot(requireNamespace("png", quietly = TRUE))
  pdf_file <- tempfile(fileext = ".pdf")
  grDevices::pdf(pdf_file)
  plot_hydro(list(13293970), basemap = "none")
  grDevices::dev.off()
  stopifnot(file.size(pdf_file) > 10000)
})

# Web Mercator by hand (EPSG:3857, R = 6378137 m), not the library's: metres of a lon/lat.
mercator <- function(lon, lat) c(6378137 * lon * pi / 180, 6378137 * log(tan(pi / 4 + lat * pi / 360)))
# The mean (column, row) of the pixels of exactly `rgb` (0..1) in a PNG file,
# in the pixel coordinates of the map (pixel centres at +0.5).
marker_at <- function(file, rgb) {
  img <- png::readPNG(file)
  hit <- which(img[, , 1] == rgb[1] & img[, , 2] == rgb[2] & img[, , 3] == rgb[3], arr.ind = TRUE)
  if (nrow(hit) == 0) stop("no pixel of colour ", paste(rgb, collapse = ","))
  c(mean(hit[, 2]) - 0.5, mean(hit[, 1]) - 0.5)
}
# The map pixel (column, row) of 3857 metres `p` on a `w` pixels wide map of `bounds`.
pixel_of <- function(p, bounds, w) {
  res <- (bounds[["xmax"]] - bounds[["xmin"]]) / w
  c((p[1] - bounds[["xmin"]]) / res, (bounds[["ymax"]] - p[2]) / res)
}

check("the device is left in EPSG:3857: points() and sf layers land on their pixels", {
  stopifnot(requireNamespace("png", quietly = TRUE))
  w <- 400
  h <- 300
  f <- tempfile(fileext = ".png")
  grDevices::png(f, width = w, height = h)
  d <- plot_hydro(list(13293970), hydro_data = sample_gpkg, basemap = "none", size = c(w, h))
  b <- attr(d, "map_bounds")
  usr <- graphics::par("usr")
  capitol <- mercator(-89.3842, 43.0747)
  graphics::points(capitol[1], capitol[2], pch = 15, col = "#FF00FF")
  mendota <- mercator(-89.42, 43.11)
  if (with_sf) {
    pt <- sf::st_sfc(sf::st_point(c(-89.42, 43.11)), crs = 4326)
    plot(sf::st_transform(pt, 3857), add = TRUE, pch = 15, col = "#00FFFF")
  }
  grDevices::dev.off()
  stopifnot(identical(names(b), c("xmin", "ymin", "xmax", "ymax")))
  # Equal scales: square pixels, and the device window (x1, x2, y1, y2) is the map's bounds.
  stopifnot(isTRUE(all.equal((b[["xmax"]] - b[["xmin"]]) / w, (b[["ymax"]] - b[["ymin"]]) / h)))
  stopifnot(isTRUE(all.equal(usr, unname(b[c(1, 3, 2, 4)]), tolerance = 1e-9)))
  stopifnot(all(abs(marker_at(f, c(1, 0, 1)) - pixel_of(capitol, b, w)) <= 1))
  if (with_sf) stopifnot(all(abs(marker_at(f, c(0, 1, 1)) - pixel_of(mendota, b, w)) <= 1))
})

check("the library's warnings are R warnings and stay in attr(x, \"warnings\")", {
  offline <- hydroplot_context(offline = TRUE, tile_cache_dir = file.path(tempdir(), "no-tiles"))
  caught <- character()
  d <- withCallingHandlers(
    plot_hydro(list(13293970), hydro_data = sample_gpkg, context = offline, file = tempfile(fileext = ".png")),
    warning = function(w) { caught <<- c(caught, conditionMessage(w)); invokeRestart("muffleWarning") }
  )
  stopifnot(is_yahara(d), length(caught) == 1, identical(caught, attr(d, "warnings")))
  stopifnot(grepl("basemap tiles could not be used", caught), grepl("offline mode is on", caught))
})

check("without the png package the device still takes the map's bounds; the map goes to a file", {
  d <- plot_hydro(list(13293970), hydro_data = sample_gpkg, basemap = "none", size = c(400, 300),
                  file = tempfile(fileext = ".png"))
  b <- attr(d, "map_bounds")
  grDevices::png(tempfile(fileext = ".png"), width = 400, height = 300)
  f <- suppressMessages(hydroplot:::show_png(attr(d, "png"), NULL, b, can_read_png = FALSE))
  usr <- graphics::par("usr")
  grDevices::dev.off()
  stopifnot(identical(readBin(f, "raw", file.size(f)), attr(d, "png")))
  stopifnot(isTRUE(all.equal(usr, unname(b[c(1, 3, 2, 4)]), tolerance = 1e-9)))
})

check("add = TRUE redraws the map at the same bounds in the device", {
  stopifnot(requireNamespace("png", quietly = TRUE))
  grDevices::png(tempfile(fileext = ".png"), width = 400, height = 300)
  first <- plot_hydro(list(13293970), hydro_data = sample_gpkg, basemap = "none", size = c(400, 300))
  second <- plot_hydro(list(13294312), hydro_data = sample_gpkg, add = TRUE, plot_config = list(flowline = list(col = "red")))
  usr <- graphics::par("usr")
  grDevices::dev.off()
  stopifnot(identical(attr(first, "map_bounds"), attr(second, "map_bounds")))
  stopifnot(isTRUE(all.equal(usr, unname(attr(second, "map_bounds")[c(1, 3, 2, 4)]), tolerance = 1e-9)))
  stopifnot(is.null(attr(plot_hydro(list(13293970), hydro_data = sample_gpkg, actually_plot = FALSE), "map_bounds")))
})

if (with_sf && required(requireNamespace("ggplot2", quietly = TRUE), "the R package ggplot2 (Debian r-cran-ggplot2)")) {
  check("ggplot2: the map as annotation_raster at its bounds under coord_sf(crs = 3857)", {
    d <- plot_hydro(list(13293970), hydro_data = sample_gpkg, basemap = "none", size = c(400, 300),
                    file = tempfile(fileext = ".png"))
    b <- attr(d, "map_bounds")
    pt <- sf::st_sf(geometry = sf::st_sfc(sf::st_point(c(-89.3842, 43.0747)), crs = 4326))
    g <- ggplot2::ggplot() +
      ggplot2::annotation_raster(png::readPNG(attr(d, "png")), b[["xmin"]], b[["xmax"]], b[["ymin"]], b[["ymax"]]) +
      ggplot2::geom_sf(data = sf::st_transform(pt, 3857), shape = 15, size = 1.5, colour = "#FF00FF") +
      ggplot2::coord_sf(crs = 3857, xlim = b[c("xmin", "xmax")], ylim = b[c("ymin", "ymax")], expand = FALSE) +
      ggplot2::theme_void()
    f <- tempfile(fileext = ".png")
    ggplot2::ggsave(f, g, width = 4, height = 3, dpi = 100)
    stopifnot(all(abs(marker_at(f, c(1, 0, 1)) - pixel_of(mercator(-89.3842, 43.0747), b, 400)) <= 1))
  })
}

check("errors carry the status and the library's message", {
  expect_error(plot_hydro(list(13293970), plot_config = list(river = list(col = "red"))), "HYDROPLOT_ERR_INVALID_ARGUMENT.*river")
  expect_error(plot_hydro(list(13293970), bbox = c(xmin = -89.5, ymin = 43, xmax = -89.4, ymax = 43.1)), "HYDROPLOT_ERR_INVALID_ARGUMENT")
  expect_error(plot_hydro(list(1), actually_plot = FALSE), "HYDROPLOT_ERR_NOT_FOUND \\(HTTP 404\\)")
  expect_error(get_raindrop_trace(c(-89.2158, 42.9561), direction = "sideways"), "HYDROPLOT_ERR_INVALID_ARGUMENT")
  expect_error(plot_hydro(list(13293970), file = "map.jpg"), "HYDROPLOT_ERR_INVALID_ARGUMENT.*map.jpg")
  # Of several values the C glue would read the first: refused, named.
  expect_error(get_raindrop_trace(c(-89.2158, 42.9561), direction = c("up", "down")),
               "get_raindrop_trace\\(\\): direction must be one string")
  expect_error(get_raindrop_trace(c(-89.2158, 42.9561, 3)), "point must be c\\(lon, lat\\)")
  expect_error(get_comid(c(-89.4, 43.1), hydro_data = c(sample_gpkg, sample_gpkg)),
               "get_comid\\(\\): hydro_data must be one file path")
})

check("properties = \"plot\" draws the same map from fewer flowline columns; a list adds columns", {
  full <- plot_hydro(list(13293970), basemap = "none", file = tempfile(fileext = ".png"))
  slim <- plot_hydro(list(13293970), basemap = "none", file = tempfile(fileext = ".png"), properties = "plot")
  stopifnot(is_yahara(slim), identical(attr(slim, "png"), attr(full, "png")))
  stopifnot(all(c("comid", "hydroseq", "dnhydroseq", "streamorde") %in% names(slim$flowline)))
  stopifnot(ncol(slim$flowline) < ncol(full$flowline) / 4)
  listed <- plot_hydro(list(13293970), actually_plot = FALSE, properties = c("totdasqkm", "slope"))
  stopifnot(all(c("totdasqkm", "slope", "comid") %in% names(listed$flowline)))
  expect_error(plot_hydro(list(13293970), properties = "comid,nosuch"), "HYDROPLOT_ERR_INVALID_ARGUMENT.*nosuch")
})

check("lod = FALSE draws every feature of a map too small to show them; the data is the same", {
  # At 32 x 24 pixels the Yahara network is too dense to read: the level of
  # detail (default on) draws it by stream order; lod = FALSE draws it whole.
  thinned <- plot_hydro(list(13293970), basemap = "none", size = c(32, 24), file = tempfile(fileext = ".png"))
  whole <- plot_hydro(list(13293970), basemap = "none", size = c(32, 24), file = tempfile(fileext = ".png"), lod = FALSE)
  stopifnot(is_yahara(thinned), is_yahara(whole), !identical(attr(thinned, "png"), attr(whole, "png")))
  stopifnot(identical(sort(thinned$flowline$comid), sort(whole$flowline$comid)))
  usual <- plot_hydro(list(13293970), basemap = "none", file = tempfile(fileext = ".png"), lod = FALSE)
  default <- plot_hydro(list(13293970), basemap = "none", file = tempfile(fileext = ".png"))
  stopifnot(identical(attr(usual, "png"), attr(default, "png")))
})

# The class of each column of each layer (the geometry's too, with sf).
column_classes <- function(d) lapply(d, function(layer) lapply(as.data.frame(layer), class))

check("one schema per layer: the local sample and the services give the same column classes; an empty layer keeps its columns", {
  local <- plot_hydro(list(13293970), hydro_data = sample_gpkg, actually_plot = FALSE)
  services <- plot_hydro(list(13293970), actually_plot = FALSE, cache_data = FALSE)
  stopifnot(identical(column_classes(local), column_classes(services)))
  # Integers the services write as 5.0 (the sample declares them MEDIUMINT).
  for (name in c("streamorde", "divergence", "startflag", "dnlevel", "enabled"))
    stopifnot(is.integer(services$flowline[[name]]))
  # Flowlines only: no catchment is fetched, yet the layer has its columns,
  # typed as the sample declares them (CatchmentSP: MEDIUMINT, TEXT, REAL).
  thin <- plot_hydro(list(13293970), actually_plot = FALSE, cache_data = FALSE, flowline_only = TRUE)
  empty <- thin$catchment
  stopifnot(nrow(empty) == 0)
  stopifnot(identical(setdiff(names(empty), "geometry"),
                      c("gridcode", "featureid", "sourcefc", "areasqkm", "shape_length", "shape_area")))
  stopifnot(is.integer(empty$featureid), is.character(empty$sourcefc), is.double(empty$areasqkm))
  if (with_sf) stopifnot(inherits(sf::st_geometry(empty), "sfc_MULTIPOLYGON"))
})

check("a gpkg is written, kept without overwrite, and read back", {
  out <- tempfile(fileext = ".gpkg")
  plot_hydro(list(13293970), gpkg = out, actually_plot = FALSE)
  size <- file.size(out)
  expect_error(plot_hydro(list(13293970), gpkg = out, overwrite = FALSE, actually_plot = FALSE), "HYDROPLOT_ERR_EXISTS")
  stopifnot(file.size(out) == size)
  again <- plot_hydro(list(13293970), hydro_data = out, actually_plot = FALSE)
  stopifnot(nrow(again$flowline) == 251)
})

check("an upstream raindrop trace", {
  start <- c(-89.2158, 42.9561)
  if (with_sf) start <- sf::st_sfc(sf::st_point(start), crs = 4326)
  tr <- get_raindrop_trace(start, direction = "up")
  # The recorded real answer the mock replays (tests/data/responses/SOURCES.md).
  stopifnot(nrow(tr) == 2, identical(tr$id, c("upstreamFlowline", "raindropPath")))
  stopifnot(tr$comid[1] == 13297178L, tr$gnis_name[1] == "Yahara River", tr$reachcode[1] == "07090002007369")
  stopifnot(abs(tr$raindrop_pathDist[1] - 242.09) < 1e-9, abs(tr$measure[1] - 30.15) < 1e-9)
  stopifnot(length(tr$intersection_point[[1]]) == 2, length(tr$intersection_point[[2]]) == 0)
  stopifnot(is.na(tr$comid[2]), is.na(tr$gnis_name[2]))
  stopifnot(identical(tr$intersection_point, list(c(-89.21324480351977, 42.956821579907405), numeric(0))))
  if (with_sf) stopifnot(inherits(tr, "sf"), all(sf::st_geometry_type(tr) == "LINESTRING"), sf::st_crs(tr)$epsg == 4326)
})

check("a trace has the spec's 7 typed fields when one is blank in both features", {
  # An interior point of catchment 13293570, whose flowline has no GNIS name
  # (the service sends "none"): gnis_name is NA twice, and still a column.
  tr <- get_raindrop_trace(c(-89.41560347125835, 43.15323746851607), direction = "down")
  fields <- c("id", "gnis_name", "comid", "reachcode", "raindrop_pathDist", "measure", "intersection_point")
  stopifnot(identical(setdiff(names(tr), "geometry"), fields))
  stopifnot(is.character(tr$gnis_name), all(is.na(tr$gnis_name)))
  stopifnot(is.integer(tr$comid), tr$comid[1] == 13293570L, is.na(tr$comid[2]))
  stopifnot(is.numeric(tr$measure), is.numeric(tr$raindrop_pathDist), is.character(tr$reachcode))
  stopifnot(is.list(tr$intersection_point), length(tr$intersection_point[[1]]) == 2,
            is.double(tr$intersection_point[[1]]), identical(tr$intersection_point[[2]], numeric(0)))
})

# The coordinate runs of a little-endian WKB geometry (a point, a line, each
# ring of a polygon), each x1, y1, x2, y2, ... in order.
wkb_runs <- function(wkb) {
  con <- rawConnection(wkb)
  on.exit(close(con))
  int <- function() readBin(con, "integer", 1, size = 4, endian = "little")
  dbl <- function(n) readBin(con, "double", n, size = 8, endian = "little")
  geom <- function() {
    stopifnot(readBin(con, "raw", 1) == as.raw(1))
    type <- int()
    if (type == 1) return(list(dbl(2)))
    n <- int()
    if (type == 2) return(list(dbl(2 * n)))
    if (type == 3) return(lapply(seq_len(n), function(i) dbl(2 * int())))
    do.call(c, lapply(seq_len(n), function(i) geom()))
  }
  geom()
}

# The same runs of a GeoJSON geometry (as jsonlite reads it).
geojson_runs <- function(g) {
  flat <- function(x) as.numeric(unlist(x))
  switch(g$type,
         Point = , LineString = list(flat(g$coordinates)),
         MultiPoint = , MultiLineString = , Polygon = lapply(g$coordinates, flat),
         MultiPolygon = do.call(c, lapply(g$coordinates, function(p) lapply(p, flat))),
         GeometryCollection = do.call(c, lapply(g$geometries, geojson_runs)))
}

# Whether two runs hold the same points in the same or the opposite order:
# GeoJSON winds rings as RFC 7946 says, WKB keeps the source's winding.
same_run <- function(a, b) {
  points <- matrix(b, nrow = 2)
  identical(a, b) || identical(a, as.numeric(points[, rev(seq_len(ncol(points)))]))
}

# Every row of an Arrow table (as the glue reads it) holds the properties and
# geometry of the same feature of the GeoJSON text.
same_features <- function(tbl, json, layer) {
  features <- jsonlite::fromJSON(json, simplifyVector = FALSE)$features
  cols <- structure(tbl$batches[[1]], names = tbl$names)
  stopifnot(length(cols$geometry) == length(features))
  for (i in seq_along(features)) {
    f <- features[[i]]
    stopifnot(all(names(f$properties) %in% names(cols)))
    for (k in setdiff(names(cols), "geometry")) {
      want <- if (k == "id" && is.null(f$properties[[k]])) f$id else f$properties[[k]]
      got <- cols[[k]][[i]]
      ok <- if (is.null(want)) is.na(got)
            else if (is.list(want) && is.double(got)) identical(as.numeric(unlist(want)), got) # a list column
            else if (is.list(want)) identical(jsonlite::fromJSON(got, simplifyVector = FALSE), want)
            else if (is.character(got)) identical(got, as.character(want)) else isTRUE(as.numeric(got) == as.numeric(want))
      if (!ok) stop(layer, " feature ", i, " property ", k, ": ", format(got), " vs ", format(want))
    }
    if (is.null(f$geometry)) stopifnot(is.null(cols$geometry[[i]]))
    else {
      got <- wkb_runs(cols$geometry[[i]])
      want <- geojson_runs(f$geometry)
      if (length(got) != length(want) || !all(mapply(same_run, got, want)))
        stop(layer, " feature ", i, ": the geometries differ")
    }
  }
}

if (requireNamespace("jsonlite", quietly = TRUE)) check("the Arrow path equals the GeoJSON path feature by feature", {
  ctx <- hydroplot:::context_of(NULL)
  req <- utils::modifyList(hydroplot:::empty_request(),
                           list(comids = 13293970, hydro_data = sample_gpkg, actually_plot = FALSE))
  layers <- c("outlets", "flowline", "basin", "catchment", "network_wtbd", "off_network_wtbd", "nhdarea",
              "flowline_nonnetwork", "gage")
  arrow <- .Call(hydroplot:::C_hp_plot, ctx, req, layers, NULL, TRUE)$layers
  json <- .Call(hydroplot:::C_hp_plot, ctx, req, layers, NULL, FALSE)$layers
  for (l in layers) {
    stopifnot(grepl('"id":{"authority":"EPSG","code":4269}', arrow[[l]]$geometry_metadata, fixed = TRUE))
    same_features(arrow[[l]], json[[l]], l)
  }
  # The published counts, read from the streams.
  rows <- vapply(arrow, function(t) length(t$batches[[1]][[1]]), 0L)
  stopifnot(rows[["flowline"]] == 251L, rows[["catchment"]] == 250L, rows[["nhdarea"]] == 3L,
            rows[["flowline_nonnetwork"]] == 48L, rows[["gage"]] == 44L,
            rows[["network_wtbd"]] + rows[["off_network_wtbd"]] == 117L)
  flowline <- hydroplot:::arrow_frame(arrow$flowline, "EPSG:4269")
  stopifnot(is.integer(flowline$comid), is.character(flowline$gnis_name), is.double(flowline$lengthkm))
  if (with_sf) stopifnot(inherits(flowline, "sf"), sf::st_crs(flowline)$epsg == 4269,
                         all(sf::st_geometry_type(flowline) %in% c("LINESTRING", "MULTILINESTRING")))
  else stopifnot(is.raw(flowline$geometry[[1]]))
  tr <- .Call(hydroplot:::C_hp_trace, ctx, -89.2158, 42.9561, "EPSG:4326", "up", TRUE)
  tr_json <- .Call(hydroplot:::C_hp_trace, ctx, -89.2158, 42.9561, "EPSG:4326", "up", FALSE)
  stopifnot(grepl('"id":{"authority":"EPSG","code":4326}', tr$geometry_metadata, fixed = TRUE))
  same_features(tr, tr_json, "trace")
})

check("an explicit context and the library version", {
  ctx <- hydroplot_context(index_url = Sys.getenv("HYDROPLOT_INDEX_URL"), retries = 0)
  tr <- get_raindrop_trace(c(-89.2158, 42.9561), direction = "up", context = ctx)
  stopifnot(tr$comid[1] == 13297178L, hydroplot_version() == "0.1.0")
  expect_error(hydroplot_context(no_such_option = 1), "HYDROPLOT_ERR_INVALID_ARGUMENT")
})

check("an R error raised inside the glue is a normal R error and frees what the call made", {
  held <- function() .Call(hydroplot:::C_hp_held_handles)
  stopifnot(held() == 0L) # every call above, failed or not, freed its handles
  ctx <- hydroplot:::context_of(NULL)
  # The glue's own entry points with arguments R/ never passes: comids must be
  # numeric (REAL() of a character vector raises after the request was made),
  # options must be named (STRING_ELT() of no names raises after the context
  # was made). Many times, so a leak per call would add up.
  bad_request <- list(comids = "13293970", actually_plot = FALSE, overwrite = TRUE)
  for (i in 1:500) {
    e <- tryCatch(.Call(hydroplot:::C_hp_plot, ctx, bad_request, "flowline", NULL), error = identity)
    stopifnot(inherits(e, "simpleError"), grepl("REAL()", conditionMessage(e), fixed = TRUE))
    e <- tryCatch(.Call(hydroplot:::C_hp_context_new, c("0")), error = identity)
    stopifnot(inherits(e, "simpleError"), grepl("STRING_ELT()", conditionMessage(e), fixed = TRUE))
    stopifnot(held() == 0L)
  }
  # The session goes on: the same context still plots.
  d <- plot_hydro(list(13293970), actually_plot = FALSE, context = ctx)
  stopifnot(nrow(d$flowline) == 251, held() == 0L)
})

# Every file in `dir` with its bytes, to compare before and after.
dir_bytes <- function(dir) {
  files <- sort(list.files(dir, all.files = TRUE, no.. = TRUE))
  stats::setNames(lapply(file.path(dir, files), function(f) readBin(f, "raw", file.size(f))), files)
}

check("file is checked with the inputs before any work and never replaces them", {
  dir <- tempfile("hydroplot-files-")
  dir.create(dir)
  old <- setwd(dir)
  on.exit(setwd(old))
  file.copy(sample_gpkg, "x.gpkg")
  writeBin(charToRaw("my own map"), "mine.png")
  before <- dir_bytes(dir)
  local <- function(...) plot_hydro(list(13293970), hydro_data = "x.gpkg", basemap = "none", ...)
  cases <- list(
    list(list(file = "x.gpkg"), "HYDROPLOT_ERR_INVALID_ARGUMENT.*same file"),
    list(list(file = "./x.gpkg"), "HYDROPLOT_ERR_INVALID_ARGUMENT.*same file"),
    list(list(file = "out.png", cache_data = "./out.png"), "HYDROPLOT_ERR_INVALID_ARGUMENT.*same file"),
    list(list(file = "no/such/folder/map.png"), "HYDROPLOT_ERR_IO.*no/such/folder/map.png.*does not exist"),
    list(list(file = dir), "HYDROPLOT_ERR_IO.*not a regular file"),
    list(list(file = "mine.png", overwrite = FALSE), "HYDROPLOT_ERR_EXISTS.*mine.png"))
  for (case in cases) {
    expect_error(do.call(local, case[[1]]), case[[2]])
    stopifnot(identical(dir_bytes(dir), before))
  }
  d <- local(file = "mine.png")
  stopifnot(identical(readBin("mine.png", "raw", file.size("mine.png")), attr(d, "png")),
            identical(sort(list.files(dir, all.files = TRUE, no.. = TRUE)), c("mine.png", "x.gpkg")))
})

check("comids that are not whole, finite 64-bit numbers are refused with a message", {
  for (case in list(list(list(13293970.7), "13293970.7 is not a whole number"),
                    list(list(NA), "NA is missing"),
                    list(list(NA_real_), "NA is missing"),
                    list(list(Inf), "Inf is not a finite number"),
                    list(list(NaN), "NaN is not a finite number"),
                    list(list(1e19), "outside the 64-bit integer range"),
                    list(c(13293970, NA), "NA is missing"),
                    list(c(13293970, 0.5), "0.5 is not a whole number"),
                    list(c(13293970, -Inf), "-Inf is not a finite number")))
    expect_error(plot_hydro(case[[1]], actually_plot = FALSE), case[[2]])
})

# Nothing listens on port 9: a request would fail with another error.
nowhere <- hydroplot_context(index_url = "http://127.0.0.1:9", fabric_url = "http://127.0.0.1:9")
# Calls `f` with `args` and each case's arguments (a case is list(arguments,
# pattern)) in an empty folder: each fails with its own error, before any
# request, and the folder stays empty.
refused_first <- function(cases, args = list(), f = plot_hydro) {
  dir <- tempfile("args")
  dir.create(dir)
  old <- setwd(dir)
  on.exit(setwd(old))
  for (case in cases) expect_error(do.call(f, c(args, case[[1]])), case[[2]])
  stopifnot(length(list.files(dir, all.files = TRUE, no.. = TRUE)) == 0)
}

check("arguments the crossing into C would change are refused first, and no file appears", {
  # Each would reach C as another value: isTRUE("yes") is FALSE, 3.7 becomes
  # 3, NA becomes INT_MIN, only the first of two paths would be read.
  refused_first(list(list(list(lod = "yes"), "lod must be TRUE or FALSE, not \"yes\""),
                     list(list(overwrite = NA), "overwrite must be TRUE or FALSE, not NA"),
                     list(list(flowline_only = "TRUE"), "flowline_only must be TRUE or FALSE"),
                     list(list(actually_plot = 1), "actually_plot must be TRUE or FALSE"),
                     list(list(add = "yes"), "add must be TRUE or FALSE"),
                     list(list(zoom = 3.7), "zoom must be a whole number, not 3.7"),
                     list(list(zoom = "abc"), "zoom must be a whole number"),
                     list(list(streamorder = NA), "streamorder must be a whole number or \"auto\", not NA"),
                     list(list(size = c(512, 384, 2)), "size must be 2 whole numbers >= 0"),
                     list(list(size = c(-1, 384)), "size must be 2 whole numbers >= 0"),
                     list(list(cache_data = 5), "cache_data must be one file path"),
                     list(list(file = c("a.png", "b.png")), "file must be one file path"),
                     list(list(gpkg = NA_character_), "gpkg must be one file path"),
                     list(list(properties = c("plot", NA)), "properties must be .* not c\\(\"plot\", NA\\)")),
                list(list(13293970), basemap = "none", context = nowhere))
})

check("a site id or feature holding NA is refused before any request, naming the outlet", {
  # Crossing into C, NA would become the text "NA": a site of that name.
  refused_first(list(list(list(NA_character_), "plot_hydro\\(\\): site id NA is missing \\(NA\\)"),
                     list(list(c("05427718", NA)), "site id NA is missing \\(NA\\)"),
                     list(list(list(NA_character_)), "site id NA is missing \\(NA\\)"),
                     list(list(list("05427718", NA_character_)), "site id NA is missing \\(NA\\)"),
                     list(list(list(c("huc12pp", NA))), "feature source or id in \\(\"huc12pp\", NA\\) is missing"),
                     list(list(list(list(NA_character_, "070900020602"))), "feature source or id in \\(NA, \"070900020602\"\\)")),
                list(basemap = "none", file = "map.png", context = nowhere))
  # The C glue refuses NA too, should R/ ever pass one, and frees the request.
  req <- utils::modifyList(hydroplot:::empty_request(), list(sites = NA_character_))
  expect_error(.Call(hydroplot:::C_hp_plot, nowhere, req, "flowline", NULL, TRUE), "missing \\(NA\\)")
  stopifnot(.Call(hydroplot:::C_hp_held_handles) == 0L)
})

if (with_sf) check("outlets and points of another geometry than POINT are refused before any request", {
  # st_coordinates() gives a row per vertex: each would become a point.
  square <- rbind(c(-89.40, 43.05), c(-89.39, 43.05), c(-89.39, 43.06), c(-89.40, 43.05))
  polygon <- sf::st_sf(geometry = sf::st_sfc(sf::st_polygon(list(square)), crs = 4326))
  line <- sf::st_sfc(sf::st_linestring(square[1:2, ]), crs = 4326)
  several <- sf::st_sfc(sf::st_multipoint(square[1:2, ]), crs = 4326)
  mixed <- sf::st_sfc(sf::st_point(square[1, ]), sf::st_linestring(square[1:2, ]), crs = 4326)
  refused_first(list(list(list(polygon), "plot_hydro\\(\\): outlets must be POINT geometries, not POLYGON \\(feature 1\\)"),
                     list(list(line), "outlets must be POINT geometries, not LINESTRING"),
                     list(list(several), "outlets must be POINT geometries, not MULTIPOINT"),
                     list(list(mixed), "outlets must be POINT geometries, not LINESTRING \\(feature 2\\)")),
                list(basemap = "none", file = "map.png", context = nowhere))
  refused_first(list(list(list(line), "get_raindrop_trace\\(\\): point must be POINT geometries, not LINESTRING"),
                     list(list(polygon), "point must be POINT geometries, not POLYGON")),
                list(context = nowhere), get_raindrop_trace)
  refused_first(list(list(list(several), "get_comid\\(\\): points must be POINT geometries, not MULTIPOINT")),
                list(context = nowhere), get_comid)
  # An empty point is a point whose coordinates (NaN) the library refuses.
  expect_error(plot_hydro(sf::st_sfc(sf::st_point(), crs = 4326), context = nowhere), "HYDROPLOT_ERR_INVALID_ARGUMENT.*finite")
})

check("a plot_config of another shape is refused, naming the element, before any request", {
  # Each would be skipped unseen (no names to walk) or stop in R's own words.
  refused_first(list(list(list(plot_config = list(flowline = "red")), "plot_config\\$flowline must be a named list"),
                     list(list(plot_config = list(flowline = list("red"))), "plot_config\\$flowline must be a named list"),
                     list(list(plot_config = list(outlets = list(col = "red"))),
                          "plot_config\\$outlets\\$col must be a named list .*styled by source"),
                     list(list(plot_config = list(outlets = "red")), "plot_config\\$outlets must be a named list"),
                     list(list(plot_config = c(flowline = "red")), "plot_config must be a named list"),
                     list(list(plot_config = list(list(col = "red"))), "plot_config must be a named list"),
                     list(list(plot_config = list(flowline = list(col = c("red", "blue")))),
                          "plot_config\\$flowline\\$col must be one value, not c\\(\"red\", \"blue\"\\)"),
                     list(list(plot_config = list(flowline = list(col = character(0)))),
                          "plot_config\\$flowline\\$col must be one value, not character\\(0\\)"),
                     list(list(plot_config = list(outlets = list(comid = list(pch = 1:2)))),
                          "plot_config\\$outlets\\$comid\\$pch must be one value")),
                list(list(13293970), basemap = "none", file = "map.png", context = nowhere))
})

check("add = TRUE with actually_plot = FALSE draws nothing: no device, no png, no map_bounds", {
  dir <- tempfile("noplot")
  dir.create(dir)
  old <- setwd(dir)
  on.exit(setwd(old))
  plot_hydro(list(13293970), hydro_data = sample_gpkg, basemap = "none", file = tempfile(fileext = ".png"))
  devices <- grDevices::dev.list()
  d <- plot_hydro(list(13294312), hydro_data = sample_gpkg, add = TRUE, actually_plot = FALSE)
  # Under Rscript, a map shown would open Rplots.pdf here.
  stopifnot(nrow(d$flowline) > 0, is.null(attr(d, "png")), is.null(attr(d, "map_bounds")),
            identical(grDevices::dev.list(), devices), length(list.files(dir, all.files = TRUE, no.. = TRUE)) == 0)
  # The last map drawn is still the one to add to.
  again <- plot_hydro(list(13294312), hydro_data = sample_gpkg, add = TRUE, file = tempfile(fileext = ".png"))
  stopifnot(!is.null(attr(again, "png")))
})

check("values of more or fewer items than an argument takes are refused, not cut or recycled", {
  refused_first(list(list(list(bbox = c(-89.45, 43, -89.35, 43.1, 12345)),
                          "plot_hydro\\(\\): bbox must be 4 numbers, .* not c\\(-89.45, 43, -89.35, 43.1, 12345\\)"),
                     list(list(bbox = c(-89.45, 43, -89.35)), "bbox must be 4 numbers"),
                     list(list(list(13293970), basemap = c("none", "bogus")),
                          "plot_hydro\\(\\): basemap must be one string, not c\\(\"none\", \"bogus\"\\)"),
                     list(list(list(13293970), basemap = NA), "basemap must be one string")),
                list(file = "map.png", context = nowhere))
  refused_first(list(list(list(c(-89.4, 43.05, 1)), "get_comid\\(\\): points must be .* not c\\(-89.4, 43.05, 1\\)"),
                     list(list(cbind(-89.4, 43.05, 1)), "get_comid\\(\\): points must be"),
                     list(list(data.frame(id = "a", lon = -89.4, lat = 43.05)), "get_comid\\(\\): points must be")),
                list(context = nowhere), get_comid)
  refused_first(list(list(list(rbind(c(-89.4, 43.05, 1), c(-89.3, 43.0, 1))), "get_raindrop_trace\\(\\): point must be")),
                list(context = nowhere), get_raindrop_trace)
  expect_error(hydroplot_context(retries = c(1, 2)), "hydroplot_context\\(\\): retries must be one value, not c\\(1, 2\\)")
  expect_error(hydroplot_context(proxy = NA), "hydroplot_context\\(\\): proxy must be one value, not NA")
  # as.character(100000) is "1e+05": the option crosses as "100000".
  stopifnot(inherits(hydroplot_context(max_features = 100000), "hydroplot_context"))
  # An even count of numbers is that many points (the sample's lookup, no request).
  stopifnot(identical(as.vector(get_comid(rep(c(-89.30492301879852, 43.0088104217879), 2), hydro_data = sample_gpkg)), c(13293970, 13293970)))
})

check("whole numbers given as doubles are taken: zoom = 11, size = c(512, 384)", {
  png_file <- tempfile(fileext = ".png")
  d <- plot_hydro(list(13293970), hydro_data = sample_gpkg, basemap = "none", zoom = 11,
                  size = c(512, 384), file = png_file)
  # The PNG's header: width and height, big-endian, at bytes 17..24.
  head <- readBin(png_file, "raw", 24)
  dims <- c(sum(as.integer(head[17:20]) * 256^(3:0)), sum(as.integer(head[21:24]) * 256^(3:0)))
  stopifnot(is_yahara(d), identical(dims, c(512, 384)))
})

if (with_sf) check("an sf outlet whose CRS has no EPSG code is read through its WKT", {
  pt <- sf::st_sf(geometry = sf::st_sfc(sf::st_point(c(-89.36, 43.09)), crs = 4326))
  albers <- sf::st_crs(paste("+proj=aea +lat_0=23 +lon_0=-96 +lat_1=29.5 +lat_2=45.5",
                             "+x_0=0 +y_0=0 +datum=NAD83 +units=m +no_defs"))
  stopifnot(is.na(albers$epsg))
  projected <- sf::st_transform(pt, albers)
  want <- plot_hydro(pt, hydro_data = sample_gpkg, actually_plot = FALSE)
  got <- plot_hydro(projected, hydro_data = sample_gpkg, actually_plot = FALSE)
  stopifnot(nrow(got$flowline) > 0, identical(sort(got$flowline$comid), sort(want$flowline$comid)))
  box <- sf::st_bbox(sf::st_transform(sf::st_as_sfc(sf::st_bbox(c(xmin = -89.5, ymin = 43.0, xmax = -89.3, ymax = 43.1),
                                                                 crs = sf::st_crs(4326))), albers))
  d <- plot_hydro(bbox = box, streamorder = 3, hydro_data = sample_gpkg, actually_plot = FALSE)
  stopifnot(nrow(d$flowline) > 0)
})

if (nzchar(Sys.which("sqlite3"))) check("a text property holding a NUL byte is cut at it, with one warning", {
  gpkg <- tempfile(fileext = ".gpkg")
  file.copy(sample_gpkg, gpkg)
  # The copy's R-tree triggers call GeoPackage SQL functions the sqlite3 shell
  # lacks; they do not matter to a name.
  triggers <- system2("sqlite3", c(gpkg, shQuote("SELECT name FROM sqlite_master WHERE type = 'trigger'")), stdout = TRUE)
  sql <- paste(c(sprintf('DROP TRIGGER "%s";', triggers),
                 "UPDATE NHDFlowline_Network SET gnis_name = 'Yahara' || char(0) || ' River' WHERE comid = 13293970;"),
               collapse = " ")
  stopifnot(system2("sqlite3", c(gpkg, shQuote(sql))) == 0)
  warned <- character(0)
  d <- withCallingHandlers(plot_hydro(list(13293970), hydro_data = gpkg, actually_plot = FALSE),
                           warning = function(w) { warned <<- c(warned, conditionMessage(w)); invokeRestart("muffleWarning") })
  stopifnot(is_yahara(d), length(warned) == 1, grepl("gnis_name", warned), grepl("NUL", warned),
            d$flowline$gnis_name[d$flowline$comid == 13293970] == "Yahara")
})

# --- many points (issue 27) ---
# A point in the catchment of comid 13293970 (shapely's representative point
# of that polygon in the sample), the recorded trace point (its flowline is
# comid 13297178), a point in the Pacific (the service answers 500), and the
# first point again.
pts <- rbind(c(-89.30492301879852, 43.0088104217879), c(-89.2158, 42.9561), c(-125, 35),
             c(-89.30492301879852, 43.0088104217879))

check("get_raindrop_trace() of several points returns every point", {
  input <- if (with_sf) sf::st_sf(site = c("a", "b", "c", "d"),
                                  geometry = sf::st_sfc(lapply(seq_len(nrow(pts)), function(i) sf::st_point(pts[i, ])), crs = 4326))
           else pts
  w <- NULL
  tr <- withCallingHandlers(get_raindrop_trace(input, direction = "up"),
                            warning = function(cond) { w <<- conditionMessage(cond); invokeRestart("muffleWarning") })
  stopifnot(!is.null(w), grepl("^1 of 4 points failed", w), grepl("point 3", w))
  stopifnot(identical(tr$point_index, c(1L, 1L, 2L, 2L, 3L, 4L, 4L)))
  stopifnot(identical(is.na(tr$error), c(TRUE, TRUE, TRUE, TRUE, FALSE, TRUE, TRUE)))
  stopifnot(grepl("outside", tr$error[5]), is.na(tr$comid[5]), is.na(tr$id[5]))
  stopifnot(tr$comid[1] == 13293970, tr$comid[3] == 13297178L, tr$comid[6] == 13293970)
  stopifnot(identical(tr$id[3:4], c("upstreamFlowline", "raindropPath")))
  stopifnot(names(tr)[1] == "point_index")
  if (with_sf) {
    stopifnot(inherits(tr, "sf"), sf::st_is_empty(sf::st_geometry(tr))[5], sum(sf::st_is_empty(sf::st_geometry(tr))) == 1)
    stopifnot(sf::st_crs(tr)$epsg == 4326)
  }
})

check("no points give an empty table with the batch's columns, and no warning", {
  m <- matrix(numeric(0), ncol = 2)
  tr <- withCallingHandlers(get_raindrop_trace(m), warning = function(w) stop("a warning: ", conditionMessage(w)))
  stopifnot(nrow(tr) == 0, names(tr)[1] == "point_index", "error" %in% names(tr))
})

check("one point still gives the 2 features of the spec", {
  tr <- get_raindrop_trace(c(-89.2158, 42.9561), direction = "up")
  stopifnot(nrow(tr) == 2, is.null(tr$point_index))
})

check("get_comid() from the service and from a local GeoPackage", {
  w <- NULL
  remote <- withCallingHandlers(get_comid(rbind(pts, c(NaN, 1))),
                                warning = function(cond) { w <<- conditionMessage(cond); invokeRestart("muffleWarning") })
  stopifnot(grepl("^1 of 5 points failed", w))
  # The recorded trace point lies outside the sample's catchments (the mock
  # replays its recorded trace all the same): in no catchment, like the Pacific.
  stopifnot(identical(as.vector(remote), c(13293970, NA, NA, 13293970, NA)))
  stopifnot(grepl("finite", attr(remote, "errors")[5]), is.na(attr(remote, "errors")[3]))
  local <- get_comid(pts, hydro_data = sample_gpkg)
  stopifnot(identical(as.vector(local), as.vector(remote)[1:4]), is.null(attr(local, "errors")))
  if (with_sf) {
    sfpts <- sf::st_transform(sf::st_sfc(sf::st_point(pts[1, ]), crs = 4326), 3857)
    stopifnot(get_comid(sfpts, hydro_data = sample_gpkg) == 13293970)
  }
})

if (required(nzchar(Sys.which("sqlite3")), "the sqlite3 shell (Debian sqlite3)")) check("hydroplot_index indexes a copy without writing it, which plots the same, and removes the index", {
  copy <- tempfile(fileext = ".gpkg")
  stopifnot(file.copy(sample_gpkg, copy))
  indexes <- file.path(tempdir(), "indexes")
  ctx <- hydroplot_context(index_dir = indexes)
  md5 <- function() unname(tools::md5sum(copy))
  # The file's schema by plain SQL: its tables, triggers and indexes.
  schema <- function() system2("sqlite3", c(shQuote(copy), shQuote(
    "SELECT type || ' ' || name || ' on ' || tbl_name FROM sqlite_master ORDER BY type, name")), stdout = TRUE)
  before <- md5()
  tables <- schema()
  stopifnot(!any(grepl("hydroplot", tables)))
  stopifnot(identical(hydroplot_index(copy, context = ctx), copy))
  stopifnot(md5() == before) # the GeoPackage is never written
  stopifnot(identical(schema(), tables)) # no table, trigger or index added
  index <- list.files(indexes, full.names = TRUE)
  stopifnot(length(index) == 1, grepl("\\.hydroplot-index$", index))
  hydroplot_index(copy, context = ctx)
  stopifnot(identical(list.files(indexes, full.names = TRUE), index)) # run again: kept
  stopifnot(is_yahara(plot_hydro(list(13293970), hydro_data = copy, actually_plot = FALSE, context = ctx)))
  stopifnot(md5() == before)
  hydroplot_index(copy, remove = TRUE, context = ctx)
  stopifnot(length(list.files(indexes)) == 0, md5() == before)
  stopifnot(is_yahara(plot_hydro(list(13293970), hydro_data = copy, actually_plot = FALSE, context = ctx)))
  notes <- tempfile(fileext = ".gpkg")
  writeLines("my notes", notes)
  msg <- tryCatch({hydroplot_index(notes); "no error"}, error = conditionMessage)
  stopifnot(grepl("HYDROPLOT_ERR_GPKG", msg, fixed = TRUE), readLines(notes) == "my notes")
  msg <- tryCatch({hydroplot_index(c(copy, copy)); "no error"}, error = conditionMessage)
  stopifnot(grepl("path must be one file name", msg, fixed = TRUE))
})

# --- interrupting a long call (Esc, Ctrl-C) ---
# A server that listens and never answers: the call waits on it until its
# 60 s timeout unless the interrupt cancels it. Rscript takes SIGINT as the
# console's Ctrl-C (R's handler sets the flag R_CheckUserInterrupt reads).
# The sleep and kill run in a background subshell: system(wait = FALSE)
# backgrounds only the last command of "sleep 1; kill ...", so it would
# return after the sleep and the signal would come before the call, or be
# lost while system() ignores SIGINT waiting for its shell.
if (.Platform$OS.type != "windows") check("an interrupt cancels a call waiting on a silent server; the context serves on", {
  server <- NULL
  for (i in 1:50) {
    port <- sample(40000:60000, 1)
    server <- tryCatch(suppressWarnings(serverSocket(port)), error = function(e) NULL)
    if (!is.null(server)) break
  }
  stopifnot(!is.null(server))
  ctx <- hydroplot_context(index_url = sprintf("http://127.0.0.1:%d/nldi", port), timeout_s = 60, retries = 0)
  out_dir <- tempfile("hydroplot-cancel-")
  dir.create(out_dir)
  system(sprintf("(sleep 1; kill -INT %d)", Sys.getpid()), wait = FALSE)
  msg <- tryCatch({
    plot_hydro(list(13293970), basemap = "none", file = file.path(out_dir, "map.png"), context = ctx)
    "no error"
  }, error = function(e) conditionMessage(e), interrupt = function(e) "an R interrupt, not the library's cancel",
  finally = close(server))
  # Ended before the signal came (no cancel): take it here, not in a later check.
  if (!grepl("HYDROPLOT_ERR_CANCELLED", msg, fixed = TRUE)) tryCatch(Sys.sleep(3), interrupt = function(e) NULL)
  stopifnot(startsWith(msg, "HYDROPLOT_ERR_CANCELLED: cancelled"))
  stopifnot(length(list.files(out_dir, all.files = TRUE, no.. = TRUE)) == 0) # no map written
  stopifnot(.Call(hydroplot:::C_hp_held_handles) == 0L)
  d <- plot_hydro(list(13293970), hydro_data = sample_gpkg, actually_plot = FALSE, context = ctx)
  stopifnot(is_yahara(d))
})

cat(sprintf("hydroplot-r: %d passed, %d failed\n", passed, failed))
quit(status = if (failed == 0) 0 else 1)
