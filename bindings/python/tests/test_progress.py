"""Progress and log callbacks of a Context: what a GUI's progress bar and
message log are fed, on the calling thread, and a Cancel pressed from the
progress callback itself."""

import threading

import hydroplot
import pytest

YAHARA_FLOWLINES = 251  # upstream of comid 13293970, the published nhdplusTools count


def test_progress_reaches_the_callback_on_the_calling_thread(ctx, sample_gpkg):
    seen = []
    ctx.set_progress_callback(lambda stage, done, total: seen.append((stage, done, total, threading.get_ident())))
    caller = []

    def run():
        caller.append(threading.get_ident())
        data = hydroplot.plot_hydro([13293970], hydro_data=sample_gpkg, actually_plot=False, context=ctx,
                                    output="geojson")
        assert len(data["flowline"]["features"]) == YAHARA_FLOWLINES

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert seen, "no progress reported"
    assert {thread for *_, thread in seen} == set(caller)
    assert all(isinstance(stage, str) and stage for stage, *_ in seen)
    assert all(total == 0 or done <= total for _, done, total, _ in seen)


def test_removed_callbacks_are_not_called(ctx, sample_gpkg):
    seen = []
    ctx.set_progress_callback(lambda *args: seen.append(args))
    ctx.set_log_callback(lambda *args: seen.append(args))
    ctx.set_progress_callback(None)
    ctx.set_log_callback(None)
    hydroplot.plot_hydro([13293970], hydro_data=sample_gpkg, actually_plot=False, context=ctx, output="geojson")
    assert seen == []


def test_cancel_from_the_progress_callback_stops_the_call(ctx, sample_gpkg):
    ctx.set_progress_callback(lambda stage, done, total: ctx.cancel())
    with pytest.raises(hydroplot.HydroplotError) as err:
        hydroplot.plot_hydro([13293970], hydro_data=sample_gpkg, actually_plot=False, context=ctx, output="geojson")
    assert err.value.name == "HYDROPLOT_ERR_CANCELLED", err.value
    ctx.set_progress_callback(None)
    data = hydroplot.plot_hydro([13293970], hydro_data=sample_gpkg, actually_plot=False, context=ctx,
                                output="geojson")
    assert len(data["flowline"]["features"]) == YAHARA_FLOWLINES


def test_log_lines_reach_the_callback(ctx):
    # A point outside the data: the flowtrace process answers HTTP 500, which
    # the client retries once, logging the retry as a warning.
    lines = []
    ctx.set_log_callback(lambda level, message: lines.append((level, message)))
    ctx.set_option("retries", 1)
    with pytest.raises(hydroplot.HydroplotError) as err:
        hydroplot.get_raindrop_trace((-100, 40), context=ctx, output="geojson")
    assert err.value.http_status == 500
    [(level, message)] = lines
    assert level == 2 and "HTTP 500" in message and "retry 1 of 1" in message, message
