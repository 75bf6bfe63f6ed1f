"""A loopback proxy in front of the mock that records every request and
holds the answers to chosen ones (a slow page) until released: the
cancel test's witness of which requests were sent, and when one began."""

import http.server
import threading
import urllib.error
import urllib.request


class SlowProxy:
    """Forwards to ``upstream`` (the mock's base URL); a request whose path
    contains ``slow`` is held until :meth:`release` (or ``hold_s``). Runs on
    a thread of its own; :meth:`close` stops it."""

    def __init__(self, upstream, slow, hold_s=60):
        self.upstream = upstream
        self.slow = slow
        self.hold_s = hold_s
        self.paths = []
        self.slow_began = threading.Event()
        self.held = 0  # requests still held
        self._released = threading.Event()
        self._lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                proxy._answer(self, None)

            def do_POST(self):
                proxy._answer(self, self.rfile.read(int(self.headers.get("Content-Length", 0))))

            def log_message(self, *args):
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def requests(self):
        with self._lock:
            return list(self.paths)

    def release(self):
        self._released.set()

    def close(self):
        self.release()
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, handler, body):
        with self._lock:
            self.paths.append(handler.path)
        if self.slow in handler.path:
            with self._lock:
                self.held += 1
            self.slow_began.set()
            self._released.wait(self.hold_s)
            with self._lock:
                self.held -= 1
        headers = {k: v for k, v in handler.headers.items() if k.lower() in ("content-type", "accept")}
        request = urllib.request.Request(self.upstream + handler.path, data=body, headers=headers,
                                         method=handler.command)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                status, content_type, payload = answer.status, answer.headers.get("Content-Type"), answer.read()
        except urllib.error.HTTPError as e:
            status, content_type, payload = e.code, e.headers.get("Content-Type"), e.read()
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", content_type or "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)
        except OSError:
            pass  # the client has gone (it was cancelled)
