"""A small site on a free port of 127.0.0.1 that records every path requested: a robots.txt, a
home page linking to ``links``, and a page at every other path."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Site:
    def __init__(self, robots_txt: bytes, links: list[str]) -> None:
        self.requested: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                site.requested.append(self.path)
                if self.path == "/robots.txt":
                    body, kind = robots_txt, "text/plain"
                elif self.path == "/":
                    anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
                    body, kind = f"<title>Home</title>{anchors}".encode(), "text/html"
                else:
                    body, kind = b"<title>Page</title><p>page</p>", "text/html"
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
