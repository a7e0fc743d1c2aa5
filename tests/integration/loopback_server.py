"""A test's own HTTP server: bound to 127.0.0.1 on a free port, served from a daemon thread,
stopped (shut down, closed, joined) by the test that started it. The one definition of that
lifecycle for every server a test writes itself (flaky-upstream is a real process instead)."""

from __future__ import annotations

import http.server
import socketserver
import sys
import threading


class LoopbackHttpServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True

    def __init__(self, handler: type[http.server.BaseHTTPRequestHandler]):
        super().__init__(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.serve_forever, name=type(self).__name__, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        self.thread.join(timeout=10)

    @property
    def port(self) -> int:
        return self.server_address[1]

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)  # a client hanging up is no error
