"""Cancel reaches the library: a run waiting on a slow page (held 60 s by a
proxy in front of the mock) ends as soon as the feedback is cancelled,
long before the page would come, and sends no request after the cancel.

No wall clock is asserted: the run must return while the page is still
held (it would otherwise wait out the 60 s), and the proxy's record of
requests is compared before and after."""

import threading

import pytest
from conftest import failure, point_layer
from slow_proxy import SlowProxy


@pytest.fixture()
def slow_fabric(mock_url):
    proxy = SlowProxy(mock_url, slow="/fabric/")
    yield proxy
    proxy.close()


def cancel_when_held(proxy, feedback, seen):
    """Cancels ``feedback`` once the slow page is being held, noting how
    many requests the proxy had seen by then."""
    assert proxy.slow_began.wait(30), "the slow page was never asked for"
    seen.append(len(proxy.requests()))
    feedback.cancel()


@pytest.mark.parametrize("algorithm", ["upstream", "comid_at_points"])
def test_cancel_during_a_slow_page_ends_the_run_and_sends_nothing_after(plugin, slow_fabric, algorithm):
    from qgis.core import QgsProcessingFeedback

    options = f"fabric_url={slow_fabric.url}/fabric/pygeoapi; timeout_s=120; retries=0"
    if algorithm == "upstream":
        parameters = {"COMIDS": "13293970", "CACHE": 1, "FLOWLINE": "TEMPORARY_OUTPUT"}
    else:
        parameters = {"INPUT": point_layer([(-89.2158, 42.9561, {})]), "OUTPUT": "TEMPORARY_OUTPUT"}
    feedback = QgsProcessingFeedback()
    seen = []
    canceller = threading.Thread(target=cancel_when_held, args=(slow_fabric, feedback, seen))
    canceller.start()
    message = failure(algorithm, {**parameters, "CONTEXT_OPTIONS": options}, feedback)
    canceller.join()
    # Returned while the page is still held: the cancel, not the page, ended it.
    assert slow_fabric.held >= 1
    assert "cancel" in message.lower(), message
    slow_fabric.release()
    assert len(slow_fabric.requests()) == seen[0], slow_fabric.requests()[seen[0]:]
