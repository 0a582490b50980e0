"""Real Scrapy crawls of local servers with ``robots_core.scrapy.RobotsTxtMiddleware`` in place
of Scrapy's own, each beside the same crawl with Scrapy's middleware: what each fetched is read
from the servers' logs. Each crawl runs in a process of its own (``scrapy_crawl.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("scrapy")

from servers import Reply, Server  # noqa: E402

CRAWL = Path(__file__).with_name("scrapy_crawl.py")
# Scrapy starts a request and the server logs it a moment later: gaps between two requests, as
# the server sees them, may be that much shorter than the delay between their starts.
MEASURE = 0.05


def crawl(middleware: str, start_urls: list[str], **settings: Any) -> dict[str, Any]:
    """Runs one crawl; its pages, stats and log."""
    with tempfile.TemporaryDirectory() as folder:
        config, out = Path(folder, "config.json"), Path(folder, "out.json")
        config.write_text(json.dumps({"middleware": middleware, "start_urls": start_urls, "settings": settings}))
        run = subprocess.run(
            [sys.executable, str(CRAWL), str(config), str(out)],
            capture_output=True,
            text=True,
            timeout=180,
            cwd=Path(__file__).parent,
        )
        assert run.returncode == 0, run.stderr[-4000:]
        result: dict[str, Any] = json.loads(out.read_text())
        result["log"] = run.stderr
        return result


def pages(server: Server, host: str | None = None) -> list[str]:
    return [path for path in server.paths(host) if path != "/robots.txt"]


def both(routes: dict[str, Any], paths: list[str], **settings: Any) -> tuple[Server, Server, dict[str, Any]]:
    """The same site crawled with our middleware and with Scrapy's, each on a server of its own."""
    ours, theirs = Server(routes), Server(routes)
    try:
        result = crawl("ours", [ours.base + p for p in paths], **settings)
        crawl("scrapy", [theirs.base + p for p in paths], **settings)
    finally:
        ours.close()
        theirs.close()
    return ours, theirs, result


def test_a_503_robots_txt_gives_no_page_until_it_recovers_then_the_pages():
    def robots(started: list[float]) -> Any:
        def route(host: str, count: int) -> Reply:
            started.append(time.monotonic()) if not started else None
            if time.monotonic() - started[0] < 1.5:
                return Reply(503, b"<h1>Down for maintenance</h1>", {"Retry-After": "1"})
            return Reply(200, b"User-agent: *\nAllow: /\n")

        return route

    ours, theirs = Server({"/robots.txt": robots([])}), Server({"/robots.txt": robots([])})
    try:
        result = crawl("ours", [ours.base + p for p in ["/", "/a", "/b"]])
        crawl("scrapy", [theirs.base + p for p in ["/", "/a", "/b"]])
    finally:
        ours.close()
        theirs.close()
    statuses = [(hit.path, hit.status) for hit in ours.log]
    recovered = next(i for i, (path, status) in enumerate(statuses) if path == "/robots.txt" and status == 200)
    assert all(path == "/robots.txt" for path, _ in statuses[:recovered]), statuses
    assert [status for _, status in statuses[:recovered]].count(503) >= 1
    assert sorted(pages(ours)) == ["/", "/a", "/b"], statuses
    assert len(result["pages"]) == 3
    # Held while robots.txt was down, then fetched: deferred, never counted as refused, and
    # when it goes again is said at INFO.
    assert "the request is tried again in" in result["log"], result["log"]
    assert result["stats"]["robotstxt/deferred"] >= 3
    assert result["stats"].get("robotstxt/refused/unreachable", 0) == 0
    assert result["stats"]["robotstxt/response_status_count/503"] >= 1
    # Scrapy's middleware parses the 503 page as rules: every page goes while robots.txt is down.
    served = [(hit.path, hit.status) for hit in theirs.log]
    first_ok = next((i for i, (p, s) in enumerate(served) if p == "/robots.txt" and s == 200), len(served))
    assert sorted(p for p, _ in served[:first_ok] if p != "/robots.txt") == ["/", "/a", "/b"], served


def test_a_site_whose_robots_txt_stays_down_costs_seconds_and_is_named():
    """A site whose robots.txt answers 503 for ever, beside a live one: robots.txt is tried at
    0 and 10 s (the early retry of a server that answered), its requests are then given up (the
    next try, at 70 s, would come past ROBOTSTXT_UNREACHABLE_HOLD's minute), a WARNING names the
    site, and the spider ends with the live site's pages, seconds later, not minutes."""
    live = Server({"/robots.txt": Reply(200, b"User-agent: *\nAllow: /\n")})
    down = Server({"/robots.txt": Reply(503, b"<h1>Down</h1>")})
    started = time.monotonic()
    try:
        result = crawl(
            "ours",
            [live.base + f"/{n}" for n in range(10)] + [down.base + f"/{n}" for n in range(3)],
        )
    finally:
        live.close()
        down.close()
    took = time.monotonic() - started
    assert sorted(pages(live)) == sorted(f"/{n}" for n in range(10))
    assert pages(down) == []
    tries = [hit.at for hit in down.log if hit.path == "/robots.txt"]
    assert len(tries) == 2, tries
    assert 9.5 <= tries[1] - tries[0] < 12, tries
    assert took < 40, took
    assert result["stats"]["robotstxt/refused/unreachable"] == 3, result["stats"]
    log = result["log"]
    named = [line for line in log.splitlines() if "WARNING" in line and down.base in line]
    assert any("the site's requests are given up" in line for line in named), log
    # At the close, the sum for the site: how often its requests were held, how many given up.
    summary = [line for line in named if f"({down.base}/robots.txt)" in line]
    assert any("held 3 times while it was unreachable, 3 requests given up" in line for line in summary), log


def test_a_404_robots_txt_gives_every_page():
    ours, theirs, result = both({"/robots.txt": Reply(404, b"<h1>Not found</h1>")}, ["/", "/a", "/b"])
    assert sorted(pages(ours)) == ["/", "/a", "/b"]
    # Three requests at once for one origin: one fetch of its robots.txt, first.
    assert ours.paths().count("/robots.txt") == 1 and ours.paths()[0] == "/robots.txt"
    assert result["stats"]["robotstxt/request_count"] == 1
    assert result["stats"]["robotstxt/outcome/unavailable"] == 1
    assert sorted(pages(theirs)) == ["/", "/a", "/b"]


def redirect_crawl(middleware: str) -> tuple[Server, Server]:
    other = Server(
        {
            "/shared-robots.txt": Reply(200, b"User-agent: *\nDisallow: /private\n"),
            "/robots.txt": Reply(200, b"User-agent: *\nDisallow: /other-only\n"),
        }
    )
    elsewhere = f"http://localhost:{other.port}"
    site = Server({"/robots.txt": Reply(301, b"", {"Location": elsewhere + "/shared-robots.txt"})})
    try:
        crawl(
            middleware,
            [site.base + "/private/x", site.base + "/open", elsewhere + "/private/x", elsewhere + "/other-only"],
        )
    finally:
        site.close()
        other.close()
    return site, other


def test_a_redirect_to_another_hosts_robots_txt_gives_its_rules_to_the_original_origin_only():
    for middleware in ("ours", "scrapy"):
        site, other = redirect_crawl(middleware)
        assert pages(site) == ["/open"], middleware
        # The other host keeps its own rules: /private is allowed there, /other-only is not.
        assert sorted(other.paths()) == ["/private/x", "/robots.txt", "/shared-robots.txt"], middleware


def test_crawl_delay_paces_each_server_and_two_host_names_of_one_server_share_it():
    server = Server({"/robots.txt": Reply(200, b"User-agent: *\nCrawl-delay: 2\n")})
    try:
        names = [server.base, f"http://localhost:{server.port}"]
        paths = ["/a", "/b"]
        result = crawl(
            "ours",
            [name + path for name in names for path in paths],
            CONCURRENT_REQUESTS=16,
            CONCURRENT_REQUESTS_PER_DOMAIN=16,
            ROBOTSTXT_SLOT_KEY="ip",
        )
    finally:
        server.close()
    hits = [hit for hit in server.log if hit.path != "/robots.txt"]
    assert len(hits) == 4 and {hit.host.split(":")[0] for hit in hits} == {"127.0.0.1", "localhost"}
    gaps = [b.at - a.at for a, b in zip(hits, hits[1:])]
    assert min(gaps) >= 2.0 - MEASURE, gaps
    assert result["stats"]["robotstxt/delay_max"] == 2.0

    # Scrapy's middleware never reads Crawl-delay: the same pages go at once.
    theirs = Server({"/robots.txt": Reply(200, b"User-agent: *\nCrawl-delay: 2\n")})
    try:
        crawl("scrapy", [theirs.base + p for p in ["/a", "/b", "/c", "/d"]], CONCURRENT_REQUESTS=16)
    finally:
        theirs.close()
    hits = [hit for hit in theirs.log if hit.path != "/robots.txt"]
    assert hits[-1].at - hits[0].at < 1.0


def test_a_429_with_retry_after_pauses_its_server():
    def first_429(host: str, count: int) -> Reply:
        return Reply(429, b"slow down", {"Retry-After": "5"}) if count == 0 else Reply()

    # One request at a time, half a second apart: the next one is the first to meet the pause.
    settings = {"CONCURRENT_REQUESTS_PER_DOMAIN": 1, "DOWNLOAD_DELAY": 0.5}
    ours, theirs, result = both({"/a": first_429}, ["/a", "/b", "/c"], **settings)
    hits = ours.log
    limited = next(i for i, hit in enumerate(hits) if hit.status == 429)
    after = hits[limited + 1]
    assert after.at - hits[limited].at >= 5.0 - MEASURE, [(h.path, h.status, h.at) for h in hits]
    assert sorted(pages(ours)) == ["/a", "/a", "/b", "/c"]
    assert result["stats"]["robotstxt/pause_count"] >= 1
    hits = theirs.log
    limited = next(i for i, hit in enumerate(hits) if hit.status == 429)
    assert hits[limited + 1].at - hits[limited].at < 5.0


def test_a_429_holds_every_request_handed_over_after_it_and_one_at_a_time_holds_all() -> None:
    """40 pages of one server queued, no download delay: the server's 429 (``Retry-After: 3``)
    is met by the requests Scrapy had in flight (its per-domain concurrency, sent before the
    429 was read) and by no request handed over after it; with ``CONCURRENT_REQUESTS_PER_DOMAIN
    = 1``, as the README says, by none at all. Run on the oldest and newest CPython too."""

    def first_429(host: str, count: int) -> Reply:
        return Reply(429, b"slow down", {"Retry-After": "3"}) if count == 0 else Reply()

    paths = [f"/p{n}" for n in range(40)]
    # Scrapy's default, 8 a server at once: those in flight when the 429 is read reach the
    # server within moments of it (half a second allowed for a loaded machine).
    one_at_a_time = {"DOWNLOAD_DELAY": 0, "CONCURRENT_REQUESTS_PER_DOMAIN": 1}
    for settings, in_flight in (({"DOWNLOAD_DELAY": 0}, 0.5), (one_at_a_time, 0.0)):
        server = Server({"/p0": first_429})
        try:
            result = crawl("ours", [server.base + p for p in paths], **settings)
        finally:
            server.close()
        hits = [hit for hit in server.log if hit.path != "/robots.txt"]
        limited = next(hit for hit in hits if hit.status == 429)
        trace = str([(h.path, h.status, round(h.at - limited.at, 3)) for h in hits])
        # Within the 3 s, only those sent before the 429 was read; the rest after it.
        within = [h for h in hits if limited.at + in_flight < h.at < limited.at + 3.0 - MEASURE]
        assert within == [], (settings, trace)
        after = [h for h in hits if h.at >= limited.at + 3.0 - MEASURE]
        assert len(after) >= 20, (settings, trace)
        assert sorted(pages(server)) == sorted([*paths, "/p0"]), trace
        assert result["stats"]["robotstxt/pause_count"] >= 1


def test_scrapy_s_per_domain_concurrency_is_kept_with_no_download_delay() -> None:
    """``CONCURRENT_REQUESTS_PER_DOMAIN`` is how many requests a server gets at once, as the
    README says, even with ``DOWNLOAD_DELAY = 0``, where Scrapy's own downloader (2.13 and later,
    on the asyncio reactor) sends every queued request of a slot at once."""
    slow = Reply(delay=0.1)
    paths = [f"/p{n}" for n in range(12)]
    for per_domain in (1, 2):
        server = Server({path: slow for path in paths})
        try:
            crawl("ours", [server.base + p for p in paths], DOWNLOAD_DELAY=0, CONCURRENT_REQUESTS_PER_DOMAIN=per_domain)
        finally:
            server.close()
        assert server.peak == per_domain, (per_domain, server.peak)
        assert sorted(pages(server)) == sorted(paths)


def assert_backed_off(hits: list[Any], base: float) -> int:
    """Each distress answer (503, or a dropped connection: status 0) holds its server for the
    back-off its streak calls for (``base`` doubled per answer in a row, ±10%), and an answer
    ends the streak (the next request at the usual delay). The longest streak."""
    trace = [(h.path, h.status, round(h.at, 2)) for h in hits]
    streak = longest = 0
    for hit, after in zip(hits, hits[1:]):
        gap = after.at - hit.at
        if hit.status in (0, 503):
            streak += 1
            longest = max(longest, streak)
            wanted = base * 2 ** (streak - 1)
            assert wanted * 0.9 - MEASURE <= gap < wanted * 1.1 + 0.6, (streak, gap, trace)
        else:
            if streak:
                assert gap < 0.9, ("the streak ended", gap, trace)
            streak = 0
    return longest


# One request at a time, a fifth of a second apart; Scrapy retries a 503 or a dropped
# connection twice.
BACK_OFF = {"CONCURRENT_REQUESTS_PER_DOMAIN": 1, "DOWNLOAD_DELAY": 0.2, "ROBOTSTXT_BACKOFF_BASE": 1.0}


def test_a_server_answering_503_without_retry_after_is_backed_off_exponentially():
    def two_503s(host: str, count: int) -> Reply:
        return Reply(503, b"busy") if count < 2 else Reply()

    ours, theirs, result = both({"/a": two_503s}, ["/a"], **BACK_OFF)
    hits = [hit for hit in ours.log if hit.path != "/robots.txt"]
    assert [h.status for h in hits] == [503, 503, 200]
    # 1 s after the first, 2 s after the second.
    assert assert_backed_off(hits, 1.0) == 2
    assert result["stats"]["robotstxt/backoff_count"] == 2
    # Scrapy's own middleware retries at the download delay.
    hits = [hit for hit in theirs.log if hit.path != "/robots.txt"]
    assert max(b.at - a.at for a, b in zip(hits, hits[1:])) < 0.9


def dropping_crawl(**settings: Any) -> tuple[list[Any], dict[str, Any]]:
    """A crawl of /a and /b where /a's first two requests get their connection dropped."""

    def dropped_twice(host: str, count: int) -> Reply:
        return Reply(drop=True) if count < 2 else Reply()

    server = Server({"/a": dropped_twice}, keep_alive=False)
    try:
        result = crawl("ours", [server.base + "/a", server.base + "/b"], **BACK_OFF, **settings)
    finally:
        server.close()
    hits = [hit for hit in server.log if hit.path != "/robots.txt"]
    assert [h.status for h in hits if h.path == "/a"] == [0, 0, 200]
    assert sorted(pages(server)) == ["/a", "/a", "/a", "/b"]
    return hits, result


def test_a_server_dropping_connections_is_backed_off_and_an_answer_ends_the_streak():
    hits, result = dropping_crawl()
    # /b, answered, may come between the drops (its slot place was taken first): it ends the
    # streak, and the next drop is backed off as a first again.
    assert assert_backed_off(hits, 1.0) >= 1
    assert result["stats"]["robotstxt/backoff_count"] == 2


def test_backing_off_on_no_answer_can_be_turned_off_and_a_bad_setting_is_refused():
    from robots_core.scrapy import RobotsTxtMiddleware
    from scrapy.utils.test import get_crawler

    hits, result = dropping_crawl(ROBOTSTXT_BACKOFF_NETWORK_ERRORS=False)
    assert max(b.at - a.at for a, b in zip(hits, hits[1:])) < 0.9
    assert "robotstxt/backoff_count" not in result["stats"]
    settings = {"ROBOTSTXT_OBEY": True, "ROBOTSTXT_BACKOFF_BASE": 10, "ROBOTSTXT_BACKOFF_MAX": 5}
    with pytest.raises(ValueError, match="ROBOTSTXT_BACKOFF_BASE"):
        RobotsTxtMiddleware(get_crawler(settings_dict=settings))
    chosen = {"ROBOTSTXT_OBEY": True, "ROBOTSTXT_BACKOFF_STATUSES": ["503", 429]}
    assert RobotsTxtMiddleware(get_crawler(settings_dict=chosen))._distress == {503, 429}


def test_a_browser_style_user_agent_obeys_the_group_of_the_bot_it_names():
    agent = "Mozilla/5.0 (X11; Linux x86_64) MyBot/2.1 (+https://mybot.example)"
    routes = {"/robots.txt": Reply(200, b"User-agent: MyBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n")}
    ours, theirs, result = both(routes, ["/", "/a"], USER_AGENT=agent)
    assert ours.paths() == ["/robots.txt"]
    assert theirs.paths() == ["/robots.txt"]  # Protego finds `MyBot` inside the string
    assert result["stats"]["robotstxt/forbidden"] == 2
    assert "robots.txt is obeyed as 'MyBot'" in result["log"]
    # Said once, as text (not again at a request whose header is bytes).
    assert result["log"].count("robots.txt is obeyed as") == 1, result["log"]
    assert "b'Mozilla" not in result["log"]
    # A token of the settings' own: said with the User-Agent actually sent.
    named = Server({"/robots.txt": Reply(200, b"User-agent: *\nDisallow: /private\n")})
    try:
        told = crawl(
            "ours",
            [named.base + "/", named.base + "/private/x"],
            USER_AGENT=agent,
            ROBOTSTXT_USER_AGENT="MyBot",
            LOG_LEVEL="DEBUG",
        )
    finally:
        named.close()
    assert f"ROBOTSTXT_USER_AGENT 'MyBot'; the User-Agent sent: {agent!r}" in told["log"], told["log"]
    # A refusal names the file that decided and its line.
    assert f"Forbidden by robots.txt ({named.base}/robots.txt) by line 2 (/private)" in told["log"], told["log"]
    # A browser's User-Agent alone is said at start-up, with a warning.
    browser = Server({"/robots.txt": Reply(200, b"User-agent: *\nAllow: /\n")})
    try:
        said = crawl("ours", [browser.base + "/"], USER_AGENT="Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0")
    finally:
        browser.close()
    assert "is a browser's" in said["log"]


def test_a_percent_encoded_path_is_judged_as_the_server_resolves_it():
    routes = {"/robots.txt": Reply(200, b"User-agent: *\nDisallow: /~user\n")}
    ours, theirs, result = both(routes, ["/%7Euser/", "/%7euser/page", "/ok"])
    assert pages(ours) == ["/ok"]
    assert result["stats"]["robotstxt/forbidden"] == 2
    # Protego, Scrapy's default parser, decodes paths too (Google's verdict on the URL as given
    # allows them: `RobotsTxt.check`).
    assert pages(theirs) == ["/ok"]


def test_a_served_path_meets_the_files_patterns_normalised():
    """Spec section 5: `/enc/%62%61%7A.html` is served as `/enc/baz.html`, which the file's
    `Allow: /enc/%62%61%7A`, normalised the same way, allows; `/enc/baz` and `/%7Euser/` are
    refused."""
    body = b"User-agent: *\nDisallow: /enc/\nAllow: /enc/%62%61%7A\nDisallow: /~user\n"
    server = Server({"/robots.txt": Reply(200, body)})
    try:
        result = crawl("ours", [server.base + p for p in ["/enc/%62%61%7A.html", "/enc/baz", "/%7Euser/"]])
    finally:
        server.close()
    assert pages(server) == ["/enc/%62%61%7A.html"]
    assert result["stats"]["robotstxt/forbidden"] == 2
    # The site's first refusal is said at INFO with its rule and file (one URL's crawl, as
    # `scrapy fetch` makes, says why it got nothing), the second at DEBUG (not in an INFO log).
    refusals = [line for line in result["log"].splitlines() if "Forbidden by robots.txt" in line]
    assert len(refusals) == 1 and "INFO" in refusals[0], result["log"]
    assert f"({server.base}/robots.txt) by line" in refusals[0], refusals
    # Summed up at the close, at INFO, with the robots.txt that decided.
    summary = f"robots.txt of {server.base} ({server.base}/robots.txt): 2 requests refused by its rules"
    assert any("INFO" in line and line.endswith(summary) for line in result["log"].splitlines()), result["log"]


def test_an_over_long_crawl_delay_is_refused_by_default():
    routes = {"/robots.txt": Reply(200, b"User-agent: *\nCrawl-delay: 45\n")}
    server, theirs = Server(routes), Server(routes)
    try:
        result = crawl("ours", [server.base + "/a"])
        clamped = crawl("ours", [server.base + "/b"], ROBOTSTXT_LONG_DELAY="clamp", ROBOTSTXT_MAX_DELAY=1)
        crawl("scrapy", [theirs.base + "/a"])
    finally:
        server.close()
        theirs.close()
    assert pages(server) == ["/b"]
    assert pages(theirs) == ["/a"]
    assert result["stats"]["robotstxt/refused/delay"] == 1
    assert "clamped to ROBOTSTXT_MAX_DELAY" in clamped["log"]


def test_the_wrong_wiring_is_said_loudly():
    server = Server({"/robots.txt": Reply(200, b"User-agent: *\nAllow: /\n")})
    try:
        both_on = crawl(
            "scrapy",
            [server.base + "/"],
            DOWNLOADER_MIDDLEWARES={"robots_core.scrapy.RobotsTxtMiddleware": 100},
            ROBOTSTXT_USER_AGENT="My Bot",
        )
    finally:
        server.close()
    assert "Scrapy's RobotsTxtMiddleware is enabled beside robots_core's" in both_on["log"]
    assert "has characters Google never matches" in both_on["log"]
    assert "it is obeyed as 'My'" in both_on["log"]


def test_the_robots_txt_kept_are_bounded_in_bytes():
    from robots_core import CachedRobots
    from robots_core.scrapy import RobotsTxtMiddleware
    from scrapy.utils.test import get_crawler

    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, "ROBOTSTXT_CACHE_BYTES": 4 << 20})
    middleware = RobotsTxtMiddleware(crawler)
    # 400 KB files of 16,000 rules each: a handful fills 4 MiB.
    body = b"User-agent: *\n" + b"".join(b"Disallow: /p%05d/x\n" % i for i in range(16_000))
    keys = []
    for port in range(8000, 8012):
        robots = CachedRobots(f"http://127.0.0.1:{port}/")
        retrieval = robots.retrieval()
        retrieval.answer(200, [], body)
        robots.update(retrieval, now=0.0)
        for _ in range(100):  # a deep crawl's checks: its view is compiled
            robots.check(f"http://127.0.0.1:{port}/p00001/x", "FooBot")
        key = ("http", "127.0.0.1", port)
        middleware._robots[key] = robots
        middleware._account(key, robots)
        keys.append(key)
        assert middleware._bytes <= 4 << 20 or len(middleware._robots) == 1
    assert robots.heap_bytes > len(body)
    kept = list(middleware._robots)
    assert 1 < len(kept) < len(keys) and kept == keys[-len(kept) :], kept
    assert middleware._bytes == sum(r.heap_bytes for r in middleware._robots.values())
    # A copy dropped while its request waited is not counted again when the request goes on.
    dropped = next(key for key in keys if key not in middleware._robots)
    before = middleware._bytes
    middleware._account(dropped, robots)
    assert middleware._bytes == before and dropped not in middleware._sizes


def test_a_robots_txt_that_never_ends_is_read_to_500_kib_and_obeyed():
    body = b"User-agent: *\nDisallow: /private\n"
    server = Server({"/robots.txt": Reply(200, body, endless=True)})
    try:
        started = time.monotonic()
        result = crawl("ours", [server.base + "/private/x", server.base + "/open"])
        took = time.monotonic() - started
    finally:
        server.close()
    assert pages(server) == ["/open"]
    assert result["stats"]["robotstxt/body_cut"] == 1
    assert result["stats"]["robotstxt/outcome/parsed"] == 1
    assert took < 30, took  # not Scrapy's download timeout (180 s)


def crawl_public(
    site_routes: Callable[[Server], dict[str, Any]], start: Callable[[Server, Server], list[str]], **settings: Any
) -> tuple[Server, Server, dict[str, Any]]:
    """A crawl of a site with an internal server beside it, both on this machine, where every
    `.example` name is public by its text and resolves to this machine (as a public name would
    resolve to its server). `site_routes` gets the internal server, `start` both."""
    internal = Server({})
    site = Server(site_routes(internal))
    try:
        result = crawl("ours", start(site, internal), DNS_RESOLVER="scrapy_crawl.LoopbackResolver", **settings)
    finally:
        site.close()
        internal.close()
    return site, internal, result


def test_a_redirect_from_a_public_site_into_an_internal_address_is_not_followed():
    site, internal, result = crawl_public(
        lambda internal: {"/go": Reply(302, b"", {"Location": f"{internal.base}/secret"})},
        lambda site, internal: [f"http://public.example:{site.port}/go", internal.base + "/given"],
    )
    # The redirect was answered and its target never requested; a start URL may be internal.
    assert "/go" in site.paths()
    assert "/secret" not in internal.paths() and "/given" in internal.paths(), internal.paths()
    assert result["stats"]["robotstxt/refused/address"] == 1


def test_a_public_name_that_resolves_to_an_internal_address_is_not_followed():
    # A redirect to another public name leads inside by its address (DNS rebinding), and is
    # refused; one to the page's own name is the same server, and followed.
    site, internal, result = crawl_public(
        lambda internal: {
            "/go": Reply(302, b"", {"Location": f"http://rebound.example:{internal.port}/secret"}),
            "/stay": Reply(302, b"", {"Location": "/here"}),
        },
        lambda site, _: [f"http://public.example:{site.port}/go", f"http://public.example:{site.port}/stay"],
    )
    assert "/secret" not in internal.paths(), internal.paths()
    assert {"/go", "/stay", "/here"} <= set(site.paths()), site.paths()
    assert result["stats"]["robotstxt/refused/address"] == 1


def test_a_robots_txt_redirect_to_a_name_resolving_inside_is_not_followed():
    # robots.txt itself moves to a public name that resolves inside: not requested, and
    # robots.txt is then unreachable (nothing allowed), as for a redirect refused by its text.
    site, internal, result = crawl_public(
        lambda internal: {
            "/robots.txt": Reply(301, b"", {"Location": f"http://rebound.example:{internal.port}/robots.txt"})
        },
        lambda site, _: [f"http://public.example:{site.port}/page"],
        ROBOTSTXT_UNREACHABLE_HOLD=0,
    )
    assert internal.paths() == []
    assert site.paths() == ["/robots.txt"]
    assert result["stats"]["robotstxt/refused/address"] == 1
    assert result["stats"]["robotstxt/outcome/unreachable"] == 1
    # No retry asked for: the page is given up at once, counted as refused, and said at INFO.
    assert result["stats"]["robotstxt/refused/unreachable"] == 1
    assert "is unreachable" in result["log"] and "the request is given up" in result["log"], result["log"]
    assert "robotstxt/deferred" not in result["stats"]
