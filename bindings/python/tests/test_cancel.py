"""Stopping a call in flight: ``Context.cancel()`` from another thread, and
Ctrl-C (KeyboardInterrupt) on the main thread, end a call waiting on a
server that never answers; nothing is written, and the context serves on.

The silent server accepts connections and never answers; the context's
timeout is longer than the tests wait, so a wait the cancel did not end
would fail as a network timeout, not as a cancel."""

import _thread
import signal
import socket
import threading

import pytest

import hydroplot
from conftest import mock_options

YAHARA_FLOWLINES = 251  # upstream of comid 13293970, the published nhdplusTools count


@pytest.fixture()
def silent_url():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    server.close()


def silent_context(silent_url, mock_url, tmp_path):
    options = mock_options(mock_url)
    options["index_url"] = f"{silent_url}/nldi"
    return hydroplot.Context(timeout_s=60, retries=0, tile_cache_dir=str(tmp_path / "tiles"), **options)


def out_dir(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    return out


def test_cancel_from_another_thread_ends_the_call_and_writes_nothing(silent_url, mock_url, tmp_path, sample_gpkg):
    ctx = silent_context(silent_url, mock_url, tmp_path)
    out = out_dir(tmp_path)
    timer = threading.Timer(0.3, ctx.cancel)
    timer.start()
    with pytest.raises(hydroplot.HydroplotError) as err:
        hydroplot.plot_hydro([13293970], basemap="none", file=str(out / "map.png"), context=ctx)
    timer.join()
    assert err.value.name == "HYDROPLOT_ERR_CANCELLED", err.value
    assert list(out.iterdir()) == []
    # The same context serves the calls begun after the cancel.
    data = hydroplot.plot_hydro([13293970], hydro_data=sample_gpkg, actually_plot=False, context=ctx,
                                output="geojson")
    assert len(data["flowline"]["features"]) == YAHARA_FLOWLINES


@pytest.fixture()
def ctrl_c_raises():
    """SIGINT raises KeyboardInterrupt, as in an interactive session, even
    when this runner was started with SIGINT ignored (a background job)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_ctrl_c_stops_the_call_and_raises_keyboard_interrupt(silent_url, mock_url, tmp_path, ctrl_c_raises):
    ctx = silent_context(silent_url, mock_url, tmp_path)
    out = out_dir(tmp_path)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        hydroplot.plot_hydro([13293970], basemap="none", file=str(out / "map.png"), context=ctx)
    # Raised only once the C call has returned: the request it reads is
    # freed right after.
    assert [t for t in threading.enumerate() if t.name == "hydroplot-call"] == []
    timer.join()
    assert list(out.iterdir()) == []
