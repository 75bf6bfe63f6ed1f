"""Any exception raised while a call runs on the main thread, not only
Ctrl-C's KeyboardInterrupt, waits for the C call to return before it
propagates: a signal handler that raises (pytest-timeout's SIGALRM method)
or SystemExit from a SIGTERM handler.

A child process plots 50 times against a slow page; the page signals the
child as the call's first request arrives (so the exception always strikes
a call in flight), holds its answer, then forwards it to the mock. Judged
here: the child does not crash, each call raised the handler's exception,
no call's thread outlived it, and the mock's front saw no request of a call
after the child said that call's exception had surfaced. Before the fix the
exception left the call running on its worker thread, which sent the next
requests once the page answered, reading a request the caller had freed.
"""

import http.server
import signal
import subprocess
import sys
import threading
import urllib.request

import pytest

CALLS = 50

CHILD = r"""
import signal, sys, threading, urllib.request
import hydroplot

front, calls, signame = sys.argv[1], int(sys.argv[2]), sys.argv[3]

class Timeout(BaseException):
    "What pytest-timeout's signal method raises: no Exception."

def on_alarm(signum, frame):
    raise Timeout()

def on_term(signum, frame):
    sys.exit(3)

signal.signal(signal.SIGALRM, on_alarm)
signal.signal(signal.SIGTERM, on_term)
expected = Timeout if signame == "SIGALRM" else SystemExit
for i in range(calls):
    ctx = hydroplot.Context(
        index_url=f"{front}/call{i}/nldi", fabric_url=f"{front}/call{i}/fabric/pygeoapi",
        tile_url=f"{front}/call{i}/tiles/{{z}}/{{x}}/{{y}}.png", timeout_s=60, retries=0,
    )
    try:
        hydroplot.plot_hydro([13293970], basemap="none", actually_plot=False, cache_data=False,
                             output="geojson", context=ctx)
        outcome = "returned"
    except expected:
        outcome = "raised"
    except BaseException as e:
        outcome = "raised " + type(e).__name__
    alive = [t for t in threading.enumerate() if t.name == "hydroplot-call"]
    urllib.request.urlopen(f"{front}/surfaced/{i}").read()
    print(i, outcome, "call thread alive" if alive else "call thread ended", flush=True)
"""


class SlowFront(http.server.ThreadingHTTPServer):
    """Logs every request path in arrival order; the first request of each
    call signals the child and is answered only after ``hold_s``; the rest
    are forwarded to the mock at once."""

    daemon_threads = True

    def __init__(self, mock_url):
        super().__init__(("127.0.0.1", 0), _Forward)
        self.mock_url = mock_url
        self.log = []
        self.lock = threading.Lock()
        self.signalled = set()
        self.child = None
        self.signum = None
        self.hold = threading.Event()  # set at teardown: held answers go


class _Forward(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        server = self.server
        parts = self.path.split("/", 3)  # "", "call7", "nldi", rest
        with server.lock:
            server.log.append(self.path)
            first = parts[1] not in server.signalled
            server.signalled.add(parts[1])
        if parts[1] == "surfaced":
            self._answer(200, b"ok", "text/plain")
            return
        if first:
            server.child.send_signal(server.signum)
            # The slow page: a call the exception left running would send
            # its next request once this answer comes.
            server.hold.wait(0.5)
        try:
            with urllib.request.urlopen(server.mock_url + "/" + "/".join(parts[2:])) as r:
                self._answer(r.status, r.read(), r.headers.get("Content-Type", "application/json"))
        except urllib.error.HTTPError as e:
            self._answer(e.code, e.read(), "application/json")

    def _answer(self, status, body, content_type):
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the cancelled call hung up

    def log_message(self, *args):
        pass


@pytest.fixture()
def front(mock_url):
    server = SlowFront(mock_url)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.hold.set()
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("signum", [signal.SIGALRM, signal.SIGTERM], ids=["SIGALRM raises", "SIGTERM exits"])
def test_an_exception_from_a_signal_handler_waits_for_the_call(front, signum):
    front.signum = signum
    base = f"http://127.0.0.1:{front.server_address[1]}"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, base, str(CALLS), signum.name],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    front.child = child
    out, err = child.communicate(timeout=600)
    assert child.returncode == 0, f"the child ended with {child.returncode}: {err}"
    lines = out.splitlines()
    assert lines == [f"{i} raised call thread ended" for i in range(CALLS)], out + err
    with front.lock:
        log = list(front.log)
    for i in range(CALLS):
        surfaced = log.index(f"/surfaced/{i}")
        late = [p for p in log[surfaced:] if p.startswith(f"/call{i}/")]
        assert late == [], f"call {i} sent requests after its exception surfaced: {late}"
        assert any(p.startswith(f"/call{i}/") for p in log[:surfaced]), f"call {i} sent no request"
