"""Scale-out: thousands of basins or traces on a Dask cluster, within the
services' rate limit.

Every worker process keeps one :class:`~hydroplot.Context` per set of
options, shared by its threads; the C library spaces that context's
requests, from all threads together, by ``rate_limit_per_s``. The budget of
the whole cluster is split evenly between its worker processes, so the
cluster together never sends more than ``requests_per_s`` (plus at most one
request per worker at the very start). The real index service allows about
3,600 requests per hour per address: :data:`INDEX_REQUESTS_PER_S`, the default.

    from dask.distributed import Client, LocalCluster
    from hydroplot.scale import run_batch
    with LocalCluster(n_workers=4, threads_per_worker=2) as cluster, Client(cluster) as client:
        results = run_batch(client, plots=[[13293970], [13294312]], traces=[(-89.2158, 42.9561)])

The split is fixed when the batch is submitted: a cluster that adds workers
while it runs (adaptive scaling) must submit its next batch after scaling.
"""

import threading

from . import Context, get_raindrop_traces, plot_hydro

#: The real index service's limit, 3,600 requests per hour per address.
INDEX_REQUESTS_PER_S = 3600 / 3600

_contexts = {}
_lock = threading.Lock()


def worker_context(options):
    """This process's context for ``options`` (created once, shared by its threads)."""
    key = tuple(sorted(options.items()))
    with _lock:
        if key not in _contexts:
            _contexts[key] = Context(**options)
        return _contexts[key]


def share_rate_limit(options, requests_per_s, n_workers):
    """``options`` with each worker's share of a cluster-wide ``requests_per_s``."""
    if requests_per_s <= 0 or n_workers <= 0:
        raise ValueError("requests_per_s and the number of workers must be positive")
    return dict(options, rate_limit_per_s=requests_per_s / n_workers)


def plot_summary(outlets, options, plot_kwargs):
    """One plot on a worker: layer counts, bbox, warnings and PNG bytes (None when not drawn)."""
    data = plot_hydro(outlets, context=worker_context(options), output="geojson", **plot_kwargs)
    return {
        "outlets": outlets,
        "counts": {layer: len(fc["features"]) for layer, fc in data.items()},
        "bbox": data.bbox,
        "warnings": data.warnings,
        "png": data.png,
    }


def trace_chunk(points, options, direction):
    """Traces of a chunk of points on a worker: FeatureCollections or HydroplotErrors, in order."""
    return get_raindrop_traces(points, direction, context=worker_context(options), output="geojson")


def run_batch(client, plots=(), traces=(), *, options=None, requests_per_s=INDEX_REQUESTS_PER_S,
              direction="down", plot_kwargs=None, trace_chunk_size=50):
    """Runs plots (a list of ``outlets`` values) and traces (a list of points)
    on the cluster of ``client``; returns ``(plot_results, trace_results)`` in
    input order (see :func:`plot_summary` and :func:`trace_chunk`).

    ``options`` are the context options of every worker (service URLs, ...);
    ``requests_per_s`` the budget of the whole cluster.
    """
    n_workers = len(client.scheduler_info()["workers"])
    opts = share_rate_limit(dict(options or {}), requests_per_s, n_workers)
    plot_futures = [client.submit(plot_summary, o, opts, dict(plot_kwargs or {}), pure=False) for o in plots]
    traces = list(traces)
    chunks = [traces[i:i + trace_chunk_size] for i in range(0, len(traces), trace_chunk_size)]
    trace_futures = [client.submit(trace_chunk, c, opts, direction, pure=False) for c in chunks]
    plot_results = client.gather(plot_futures)
    trace_results = [r for chunk in client.gather(trace_futures) for r in chunk]
    return plot_results, trace_results
