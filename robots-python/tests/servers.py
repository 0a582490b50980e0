"""Local HTTP servers on free ports of 127.0.0.1 whose answers a test writes, and which log
every request (when, which Host, which path, what status), so that a test reads what a
crawler did from the server's side."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Hit:
    """One request as the server saw it."""

    at: float
    host: str
    path: str
    status: int


@dataclass
class Reply:
    status: int = 200
    body: bytes = b"<title>Page</title><p>page</p>"
    headers: dict[str, str] = field(default_factory=dict)
    # The body, then comment lines for as long as the client reads (at most 60 s): a body that
    # never ends.
    endless: bool = False
    # No answer at all: the connection is closed as the request arrives (logged as status 0).
    drop: bool = False
    # Seconds the answer takes (requests meanwhile are in flight together: `Server.peak`).
    delay: float = 0.0


# A route answers by the request's Host and how many times its path was asked before.
Route = Callable[[str, int], Reply]


class _Listening(ThreadingHTTPServer):
    # Room for every connection a crawl opens at once: with the default 5, a burst of them is
    # dropped and each client resends a second later, which looks like a late request.
    request_queue_size = 128


class Server:
    """Serves ``routes`` (path → a reply, or a function of Host and count); any other path is a
    page (200)."""

    def __init__(self, routes: dict[str, Reply | Route], keep_alive: bool = True) -> None:
        """Without ``keep_alive`` every connection serves one request (HTTP/1.0): a client
        then never resends a request on its own after a dropped connection, as Twisted does
        once on a connection it kept."""
        self.log: list[Hit] = []
        # Requests being answered now, and the most at once (robots.txt included).
        self.in_flight = 0
        self.peak = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                host = self.headers.get("Host", "")
                with server._lock:
                    server.in_flight += 1
                    server.peak = max(server.peak, server.in_flight)
                try:
                    self._answer(host)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _answer(self, host: str) -> None:
                with server._lock:
                    count = sum(1 for hit in server.log if hit.path == self.path and hit.host == host)
                    route = routes.get(self.path, Reply())
                    reply = route if isinstance(route, Reply) else route(host, count)
                    server.log.append(Hit(time.monotonic(), host, self.path, 0 if reply.drop else reply.status))
                if reply.drop:
                    self.close_connection = True
                    return
                if reply.delay:
                    time.sleep(reply.delay)
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                if reply.endless:
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(reply.body)
                    until = time.monotonic() + 60
                    try:
                        while time.monotonic() < until:
                            self.wfile.write(b"# more\n" * 8192)
                    except OSError:  # The client stopped reading.
                        pass
                    return
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = _Listening(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def paths(self, host: str | None = None) -> list[str]:
        """The paths requested, in order (of one Host when given: ``localhost:PORT``)."""
        return [hit.path for hit in self.log if host is None or hit.host == host]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
