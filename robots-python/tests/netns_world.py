"""A network of the test's own, for the address rule's Scrapy tests: run as root inside a new
network and mount namespace (``unshare -mn python netns_world.py CASES OUT``), it puts "public"
addresses (203.0.113.7 and .8) and internal ones (10.9.9.9, 169.254.169.254, 127.0.0.2) on
loopback, serves a DNS server it scripts (names that answer public and then internal) as the
system resolver, runs each crawl of CASES (``scrapy_crawl.py``, a process each) and writes
what every server saw. No packet leaves the namespace."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from servers import Reply, Server

PUBLIC, CDN, INTERNAL = "203.0.113.7", "203.0.113.8", "10.9.9.9"
HERE = Path(__file__).parent


def setup() -> None:
    """Loopback up with the addresses, and this namespace's own resolv.conf and hosts."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for address in (PUBLIC, CDN, INTERNAL, "169.254.169.254", "127.0.0.2"):
        subprocess.run(["ip", "addr", "add", f"{address}/32", "dev", "lo"], check=True)
    folder = Path(tempfile.mkdtemp())
    (folder / "resolv.conf").write_text("nameserver 127.0.0.1\noptions attempts:1 timeout:2\n")
    (folder / "hosts").write_text("127.0.0.1 localhost\n::1 localhost\n")
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    for name in ("resolv.conf", "hosts"):
        subprocess.run(["mount", "--bind", str(folder / name), f"/etc/{name}"], check=True)


class Dns:
    """A DNS server on 127.0.0.1:53 answering A queries from a script: each name's answers in
    turn, the last again for every later query (``None``: SERVFAIL); NXDOMAIN for other names,
    no records for other types."""

    def __init__(self) -> None:
        self.script: dict[str, tuple[list[str | None], int]] = {}
        self.lock = threading.Lock()
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.socket.bind(("127.0.0.1", 53))
        threading.Thread(target=self.serve, daemon=True).start()

    def set(self, name: str, answers: list[str | None]) -> None:
        with self.lock:
            self.script[name] = (answers, 0)

    def serve(self) -> None:
        while True:
            query, peer = self.socket.recvfrom(1500)
            answer = self.answer(query)
            if answer is not None:
                self.socket.sendto(answer, peer)

    def answer(self, query: bytes) -> bytes | None:
        if len(query) < 12:
            return None
        at, labels = 12, []
        while at < len(query) and query[at]:
            length = query[at]
            labels.append(query[at + 1 : at + 1 + length].decode("ascii", "replace").lower())
            at += 1 + length
        qtype = int.from_bytes(query[at + 1 : at + 3], "big")
        question = query[12 : at + 5]
        name = ".".join(labels)
        header = bytearray(query[:2] + b"\x81\x80\x00\x01\x00\x00\x00\x00\x00\x00")
        with self.lock:
            scripted = self.script.get(name)
            if scripted is None:
                header[3] = 0x83  # NXDOMAIN
                return bytes(header) + question
            if qtype != 1:
                return bytes(header) + question
            answers, asked = scripted
            self.script[name] = (answers, asked + 1)
            address = answers[min(asked, len(answers) - 1)]
        if address is None:
            header[3] = 0x82  # SERVFAIL
            return bytes(header) + question
        header[7] = 1
        record = b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x00\x00\x04" + socket.inet_aton(address)
        return bytes(header) + question + record


class Bound(Server):
    """A test server on a given address and port."""

    def __init__(self, address: str, routes: dict[str, Any]) -> None:
        from http.server import ThreadingHTTPServer

        super().__init__(routes)
        handler = self.server.RequestHandlerClass
        self.close()
        self.server = ThreadingHTTPServer((address, 8081), handler)
        self.base = f"http://{address}:8081"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


LINKS = [
    "http://10.9.9.9:8081/secret",
    "http://169.254.169.254:8081/latest/meta-data/",
    "http://127.0.0.2:8081/",
    "http://inner.pub.test:8081/x",
    "http://evil.test.:8081/t",
] + [f"http://cdn.pub.test:8081/c{i}" for i in range(5)]


def page(links: list[str]) -> Reply:
    return Reply(200, "".join(f'<a href="{link}">x</a>\n' for link in links).encode())


def main() -> None:
    cases = json.loads(Path(sys.argv[1]).read_text())
    setup()
    dns = Dns()
    allow = Reply(200, b"User-agent: *\nAllow: /\n")
    public = Bound(PUBLIC, {"/robots.txt": allow, "/": page(LINKS)})
    cdn = Bound(CDN, {"/robots.txt": allow})
    internal = [Bound(address, {}) for address in (INTERNAL, "169.254.169.254", "127.0.0.2")]
    results = []
    for case in cases:
        for server in [public, cdn, *internal]:
            server.log.clear()
        dns.set("www.pub.test", [PUBLIC])
        dns.set("inner.pub.test", [INTERNAL])
        dns.set("evil.test", ["127.0.0.2"])
        dns.set("cdn.pub.test", [CDN] * case.get("cdn_public_answers", 100) + [INTERNAL])
        with tempfile.TemporaryDirectory() as folder:
            config, out = Path(folder, "config.json"), Path(folder, "out.json")
            config.write_text(
                json.dumps(
                    {
                        "middleware": "ours",
                        "start_urls": ["http://www.pub.test:8081/"],
                        "follow": True,
                        "settings": case.get("settings", {}),
                    }
                )
            )
            run = subprocess.run(
                [sys.executable, str(HERE / "scrapy_crawl.py"), str(config), str(out)],
                capture_output=True,
                text=True,
                timeout=120,
                cwd=HERE,
                env={**os.environ, "PYTHONPATH": str(HERE)},
            )
            crawl = json.loads(out.read_text()) if out.exists() else {}
        results.append(
            {
                "case": case,
                "returncode": run.returncode,
                "log": run.stderr[-6000:],
                "stats": crawl.get("stats", {}),
                "public": public.paths(),
                "cdn": cdn.paths(),
                "internal": [f"{server.base}{path}" for server in internal for path in server.paths()],
            }
        )
    Path(sys.argv[2]).write_text(json.dumps(results))


if __name__ == "__main__":
    main()
