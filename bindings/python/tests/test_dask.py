"""Scale-out: a Dask LocalCluster of worker processes runs a batch of plots and
traces against the mock, behind a counting proxy that proves the cluster
stayed within its shared request budget."""

import bisect
import os
import pathlib
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import hydroplot
from hydroplot.scale import run_batch

from conftest import mock_options

distributed = pytest.importorskip("dask.distributed")

BUDGET_PER_S = 15.0
WORKERS = 3
START = (-89.2158, 42.9561)


class CountingProxy(ThreadingHTTPServer):
    """Forwards every request to the mock and records when it arrived."""

    daemon_threads = True

    def __init__(self, upstream):
        self.upstream = upstream
        self.arrivals = []
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Forward)

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Forward(BaseHTTPRequestHandler):
    def _forward(self):
        with self.server.lock:
            self.server.arrivals.append(time.monotonic())
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        req = urllib.request.Request(self.server.upstream + self.path, data=body, method=self.command)
        if self.headers.get("Content-Type"):
            req.add_header("Content-Type", self.headers["Content-Type"])
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                status, ctype, data = r.status, r.headers.get("Content-Type"), r.read()
        except urllib.error.HTTPError as e:
            status, ctype, data = e.code, e.headers.get("Content-Type"), e.read()
        self.send_response(status)
        self.send_header("Content-Type", ctype or "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _forward

    def log_message(self, *args):
        pass


def max_in_window(times, seconds):
    times = sorted(times)
    return max(bisect.bisect_left(times, t + seconds) - i for i, t in enumerate(times))


def test_a_cluster_batch_stays_within_the_shared_budget(mock_url, tmp_path):
    proxy = CountingProxy(mock_url)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    package_dir = str(pathlib.Path(hydroplot.__file__).resolve().parents[1])
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [package_dir, os.environ.get("PYTHONPATH")]))
    options = dict(mock_options(proxy.base_url), retries=0, tile_cache_dir=str(tmp_path / "tiles"))
    plots = [[13293970], [13294312], [13293454], [("comid", "13293970")]]
    traces = [START] * 30 + [(0.0, 0.0)]
    try:
        # The workers' scratch space in the test's own folder, not the
        # system's temporary folder, where it would stay.
        with distributed.LocalCluster(n_workers=WORKERS, threads_per_worker=2, processes=True,
                                      dashboard_address=None, local_directory=str(tmp_path / "dask")) as cluster, \
                distributed.Client(cluster) as client:
            started = time.monotonic()
            plot_results, trace_results = run_batch(
                client, plots, traces, options=options, requests_per_s=BUDGET_PER_S, direction="up",
                plot_kwargs={"actually_plot": False}, trace_chunk_size=8)
            elapsed = time.monotonic() - started
    finally:
        proxy.shutdown()

    # Upstream of 13293970, the published nhdplusTools figures for the Yahara
    # sample: 251 flowlines, 250 catchments, 117 waterbodies (network and
    # off-network together; the split is not published).
    n = plot_results[0]["counts"]
    assert (n["outlets"], n["flowline"], n["basin"], n["catchment"]) == (1, 251, 1, 250), n
    assert n["network_wtbd"] + n["off_network_wtbd"] == 117, n
    assert plot_results[3]["counts"] == plot_results[0]["counts"]
    assert all(r["counts"]["flowline"] > 0 for r in plot_results)
    assert len(trace_results) == 31
    for fc in trace_results[:30]:
        props = fc["features"][0]["properties"]
        assert (props["comid"], props["gnis_name"], props["reachcode"]) == (13297178, "Yahara River", "07090002007369")
    assert isinstance(trace_results[30], hydroplot.HydroplotError) and trace_results[30].http_status == 500

    n = len(proxy.arrivals)
    print(f"dask: {n} requests in {elapsed:.1f} s, at most {max_in_window(proxy.arrivals, 1.0)} in any second")
    assert n >= 31 + 4 * 3, n
    # Each worker spaces its requests 1/(budget/workers) apart: no second holds
    # more than the budget plus one starting request per worker.
    assert max_in_window(proxy.arrivals, 1.0) <= BUDGET_PER_S + WORKERS, max_in_window(proxy.arrivals, 1.0)
    assert elapsed >= (n - WORKERS) / BUDGET_PER_S * 0.9, (n, elapsed)
