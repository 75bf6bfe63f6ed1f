"""A proxy's credentials stay in the C context: never in ``Context.options``,
a repr or a pickle; a context unpickled in another process (a Dask worker)
takes them from that process's environment or says they are missing; an
error through that proxy does not show them."""

import pickle

import pytest

import hydroplot

SECRET = "s3cr3t-Pa55"
PROXY = f"http://agent:{SECRET}@127.0.0.1:9"


def test_credentials_are_in_no_repr_options_or_pickle(monkeypatch):
    monkeypatch.delenv("HYDROPLOT_PROXY", raising=False)
    ctx = hydroplot.Context(proxy=PROXY, retries=0)
    assert "proxy" not in ctx.options and ctx.options == {"retries": 0}
    for shown in (repr(ctx), str(ctx), repr(ctx.options), repr(vars(ctx))):
        assert SECRET not in shown
    data = pickle.dumps(ctx)
    assert SECRET.encode() not in data
    # Unpickled where the environment has no proxy: an error naming the variable.
    with pytest.raises(hydroplot.HydroplotError) as e:
        pickle.loads(data)
    assert e.value.name == "HYDROPLOT_ERR_INVALID_ARGUMENT" and "HYDROPLOT_PROXY" in e.value.message
    assert SECRET not in str(e.value)
    # A worker whose environment holds the proxy builds the context.
    monkeypatch.setenv("HYDROPLOT_PROXY", PROXY)
    worker = pickle.loads(data)
    assert worker.options == {"retries": 0}
    # Or the secret given explicitly.
    assert hydroplot.Context(**ctx.options, proxy=PROXY).options == {"retries": 0}


def test_an_error_through_the_proxy_does_not_show_its_credentials(monkeypatch, sample_gpkg):
    monkeypatch.delenv("HYDROPLOT_PROXY", raising=False)
    ctx = hydroplot.Context(proxy=PROXY, retries=0, index_url="http://example.invalid/nldi")
    with pytest.raises(hydroplot.HydroplotError) as e:
        hydroplot.plot_hydro([13293970], actually_plot=False, cache_data=False, context=ctx, output="geojson")
    assert SECRET not in str(e.value)
    ctx.set_option("proxy", "none")
    assert ctx.options["proxy"] == "none" and ctx._withheld == set()
