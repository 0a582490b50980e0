"""One RobotsTxt shared by many threads gives every thread the answers it gives one, and a
large body is parsed with the GIL released."""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from robots_core import RobotsTxt

BODY = (
    b"".join(b"User-agent: Bot%d\nDisallow: /bot%d/\nAllow: /bot%d/open\n" % (i, i, i) for i in range(40))
    + b"User-agent: *\nDisallow: /private\n"
)


def expected(agent: str, url: str) -> bool:
    return RobotsTxt.parse(BODY).can_fetch(url, agent)


def test_threads_sharing_one_file_agree_with_a_fresh_parse():
    robots = RobotsTxt.parse(BODY)
    # More agents than views are kept, so threads compile, evict and look up at once.
    agents = [f"Bot{'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[i % 26]}" for i in range(30)] + ["FooBot/1.0", "Bot"]
    urls = [
        "https://e.example/private/x",
        "https://e.example/botA/x",
        "https://e.example/botA/open",
        "https://e.example/",
    ]
    truth = {(a, u): expected(a, u) for a in agents for u in urls}

    def work(seed: int) -> list[tuple[str, str, bool]]:
        out = []
        for i in range(2_000):
            agent = agents[(seed * 7 + i) % len(agents)]
            url = urls[i % len(urls)]
            out.append((agent, url, robots.can_fetch(url, agent)))
        return out

    with ThreadPoolExecutor(8) as pool:
        for results in pool.map(work, range(16)):
            for agent, url, allowed in results:
                assert allowed == truth[(agent, url)], (agent, url)


def test_parsing_a_large_body_lets_other_threads_run():
    body = b"User-agent: *\n" + b"Disallow: /some/long/path/*/segment$\n" * 14_000
    progress = 0
    stop = threading.Event()

    def count() -> None:
        # Counts, giving the GIL up after each step (sleep(0)) so that the main thread can go on.
        nonlocal progress
        while not stop.is_set():
            progress += 1
            time.sleep(0)

    interval = sys.getswitchinterval()
    # The GIL passes between threads only when one gives it up, never on a timer: the count
    # moves during a parse only if the parse gave the GIL up.
    sys.setswitchinterval(1000)
    worker = threading.Thread(target=count)
    try:
        worker.start()
        moved = False
        for _ in range(50):
            before = progress
            RobotsTxt.parse(body)
            if progress != before:
                moved = True
                break
    finally:
        stop.set()
        sys.setswitchinterval(interval)
        worker.join()
    assert moved, "the counting thread never ran while a 500 KiB body was parsed"
