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

#: algorithm -> (the page held back, the parameters besides the context options).
#: Each held page is the only request in flight when it is asked for (the
#: basin's comes before the fabric's pages, which need its box).
CASES = {
    "upstream": ("/basin", {"COMIDS": "13293970", "CACHE": 1, "FLOWLINE": "TEMPORARY_OUTPUT"}),
    "comid_at_points": ("/fabric/", {"OUTPUT": "TEMPORARY_OUTPUT"}),
    "raindrop_trace": ("/processes/", {"FLOWLINE": "TEMPORARY_OUTPUT", "RAINDROP_PATH": "TEMPORARY_OUTPUT"}),
}


def cancel_when_held(proxy, feedback, seen):
    """Cancels ``feedback`` once the slow page is being held, noting how
    many requests the proxy had seen by then."""
    assert proxy.slow_began.wait(30), "the slow page was never asked for"
    seen.append(len(proxy.requests()))
    feedback.cancel()


@pytest.mark.parametrize("algorithm", sorted(CASES))
def test_cancel_during_a_slow_page_ends_the_run_and_sends_nothing_after(plugin, mock_url, algorithm):
    from qgis.core import QgsProcessingFeedback

    slow, parameters = CASES[algorithm]
    proxy = SlowProxy(mock_url, slow=slow)
    try:
        # One point: its request is the only one that may be in flight at the cancel.
        points = [(-89.2158, 42.9561, {})]
        if algorithm != "upstream":
            parameters = {**parameters, ("INPUT" if algorithm == "comid_at_points" else "POINTS"): point_layer(points)}
        options = f"index_url={proxy.url}/nldi; fabric_url={proxy.url}/fabric/pygeoapi; timeout_s=120; retries=0"
        feedback = QgsProcessingFeedback()
        seen = []
        canceller = threading.Thread(target=cancel_when_held, args=(proxy, feedback, seen))
        canceller.start()
        message = failure(algorithm, {**parameters, "CONTEXT_OPTIONS": options}, feedback)
        canceller.join()
        # Returned while the page is still held: the cancel, not the page, ended it.
        assert proxy.held >= 1
        assert "cancel" in message.lower(), message
        proxy.release()
        assert len(proxy.requests()) == seen[0], proxy.requests()[seen[0]:]
    finally:
        proxy.close()
