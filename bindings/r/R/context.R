#' A hydroplot context: service URLs, timeouts, retries, rate limit, caches.
#'
#' Options are the C library's `hydroplot_context_set_option` keys
#' (`index_url`, `fabric_url`, `tile_url`, `tile_cache_dir`, `timeout_s`,
#' `retries`, `concurrency`, `rate_limit_per_s`, `max_features`, ...),
#' applied after the defaults and the `HYDROPLOT_*` environment variables.
#' Behind an agency network (docs/network.md): `ca_bundle = "agency-root.pem"`
#' (else `SSL_CERT_FILE`, `REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE` serve, as
#' for curl), `proxy = "http://user:password@proxy:3128"` or `proxy = "none"`.
#' With `offline = TRUE` (or `HYDROPLOT_OFFLINE=1`) no request is ever sent:
#' the plot-data cache, local GeoPackages and the tile cache serve, anything
#' else fails at once naming offline mode.
#' A context is freed by the garbage collector; it does not survive saving
#' the session.
#' @param ... named options, e.g. `index_url = "http://127.0.0.1:8080/nldi"`;
#'   each one value (a string, number or TRUE/FALSE; numbers go as written in
#'   full, 100000 not "1e+05"): several values or NA is an error naming it.
#' @return an external pointer of class `hydroplot_context`.
hydroplot_context <- function(...) {
  opts <- list(...)
  if (length(opts) > 0 && (is.null(names(opts)) || any(names(opts) == ""))) {
    stop("hydroplot_context(): every option needs a name, e.g. index_url = \"...\"")
  }
  values <- vapply(seq_along(opts), function(i) option_text(opts[[i]], names(opts)[i]), "")
  names(values) <- names(opts)
  structure(.Call(C_hp_context_new, values), class = "hydroplot_context")
}

# One option as the text hydroplot_context_set_option takes (TRUE is
# "TRUE"): vapply() would stop at two values in R's own words, NA would
# cross as the text "NA", and as.character(100000) is "1e+05", which is not
# a whole number to the library.
option_text <- function(v, name) {
  if (!is.atomic(v) || length(v) != 1 || is.na(v)) {
    stop("hydroplot_context(): ", name, " must be one value, not ", shown(v), call. = FALSE)
  }
  if (is.logical(v)) return(toupper(as.character(v)))
  if (is.numeric(v)) return(format(v, scientific = FALSE, digits = 15))
  as.character(v)
}

#' The C library's version, "MAJOR.MINOR.PATCH".
hydroplot_version <- function() .Call(C_hp_version)

.state <- new.env(parent = emptyenv())

# The context of a call: the one given, or a default built once from the environment.
context_of <- function(context) {
  if (!is.null(context)) return(context)
  if (is.null(.state$context)) .state$context <- hydroplot_context()
  .state$context
}

#' Make a national NHDPlus GeoPackage fast as `hydro_data`.
#'
#' Does what the CLI's `hydroplot index` does, without ever writing the
#' GeoPackage (a read-only or checksummed file stays as it was): its
#' flowline network, of which a plot reads only its basin's upstream, and,
#' with a catchment
#' layer, the basin parts (outlines of parts of the network, from which
#' large basins are folded, to the bit the same basins) go into an index
#' file in the context's `index_dir` (by default
#' `$XDG_CACHE_HOME/hydroplot/index`). The index records the file's identity
#' and rowid ranges: after a write by any program, or a copy over the file, it
#' is unused until the next call. Running it again changes nothing.
#' Esc/Ctrl-C stops it, the old index kept.
#' @param path the GeoPackage file, only read.
#' @param remove `TRUE` to delete its index files instead (and take out an
#'   index that release 0.2 wrote inside the file, if it holds one).
#' @param context a [hydroplot_context()], or `NULL` for the default one.
#' @return `path`, invisibly.
hydroplot_index <- function(path, remove = FALSE, context = NULL) {
  if (!is.character(path) || length(path) != 1 || is.na(path)) {
    stop("hydroplot_index(): path must be one file name, not ", shown(path), call. = FALSE)
  }
  if (!is.logical(remove) || length(remove) != 1 || is.na(remove)) {
    stop("hydroplot_index(): remove must be TRUE or FALSE, not ", shown(remove), call. = FALSE)
  }
  .Call(C_hp_index, context_of(context), path.expand(path), remove)
  invisible(path)
}
