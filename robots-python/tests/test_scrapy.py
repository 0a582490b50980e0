"""A real Scrapy crawl, in this process, of a site served on 127.0.0.1, with
``ROBOTSTXT_OBEY = True`` and ``ROBOTSTXT_PARSER = "robots_core.scrapy.RobotParser"``: the server
sees every allowed page requested and no disallowed one. The same crawl with Scrapy's default
parser (Protego) runs beside it, on a server of its own, to show that the site is one where the
two differ: the test would fail if the setting were ignored."""

from __future__ import annotations

import pytest

scrapy = pytest.importorskip("scrapy")

from demo_site import Site  # noqa: E402
from robots_core.scrapy import RobotParser  # noqa: E402

# Google reads Crawl-delay as no end of a group: Scrapy shares OtherBot's rules. Protego ends
# the group there, so Scrapy gets none. And `/%7Euser` is not `/~user` for Google (nothing is
# decoded), while Protego decodes it.
ROBOTS_TXT = b"""\
User-agent: Scrapy
Crawl-delay: 0
User-agent: OtherBot
Disallow: /private
Allow: /private/open
Disallow: /*?sort=
Disallow: /%7Euser
"""

LINKS = ["/a", "/private/x", "/private/open/y", "/list?sort=1", "/~user/page"]
ALLOWED = {"/robots.txt", "/", "/a", "/private/open/y", "/~user/page"}
DISALLOWED = {"/private/x", "/list?sort=1"}


class FollowSpider(scrapy.Spider):
    """Visits the home page and every page it links to."""

    name = "follow"

    def __init__(self, base: str, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.start_urls = [base + "/"]

    def parse(self, response):
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse_page)

    def parse_page(self, response):
        yield {"url": response.url}


class GoogleSpider(FollowSpider):
    name = "google"
    custom_settings = {"ROBOTSTXT_PARSER": "robots_core.scrapy.RobotParser"}


class ProtegoSpider(FollowSpider):
    name = "protego"
    custom_settings = {"ROBOTSTXT_PARSER": "scrapy.robotstxt.ProtegoRobotParser"}


def test_a_scrapy_crawl_obeys_robots_txt_as_google_reads_it():
    from scrapy.crawler import CrawlerProcess

    ours, theirs = Site(ROBOTS_TXT, LINKS), Site(ROBOTS_TXT, LINKS)
    try:
        process = CrawlerProcess(
            settings={
                "ROBOTSTXT_OBEY": True,
                "LOG_LEVEL": "ERROR",
                "TELNETCONSOLE_ENABLED": False,
                "RETRY_ENABLED": False,
                "COOKIES_ENABLED": False,
                "LOG_INSTALL_ROOT_HANDLER": False,
            },
        )
        google = process.create_crawler(GoogleSpider)
        protego = process.create_crawler(ProtegoSpider)
        process.crawl(google, base=ours.base)
        process.crawl(protego, base=theirs.base)
        process.start()
    finally:
        ours.close()
        theirs.close()

    requested = set(ours.requested)
    assert requested == ALLOWED, f"requested {sorted(requested)}"
    assert ours.requested.count("/robots.txt") == 1
    assert ours.requested[0] == "/robots.txt"
    assert google.stats.get_value("robotstxt/forbidden") == len(DISALLOWED)
    # Protego, on the same site, ends Scrapy's group at Crawl-delay and fetches everything.
    assert set(theirs.requested) == ALLOWED | DISALLOWED


def test_the_parser_takes_what_scrapy_passes():
    parser = RobotParser.from_crawler(None, ROBOTS_TXT)
    assert isinstance(parser, scrapy.robotstxt.RobotParser)
    # Scrapy passes the User-Agent header as bytes, and URLs as str.
    assert not parser.allowed("http://e.example/private/x", b"Scrapy/2.13 (+https://scrapy.org)")
    assert parser.allowed("http://e.example/private/open/y", "Scrapy/2.13 (+https://scrapy.org)")
    assert parser.allowed(b"http://e.example/a", b"Scrapy")
    assert parser.crawl_delay(b"Scrapy/2.13 (+https://scrapy.org)") == 0.0
    assert parser.crawl_delay("SomeoneElse") is None
    # A body that is not UTF-8 (Scrapy's own parsers give up on it) is read all the same.
    latin = RobotParser.from_crawler(None, b"User-agent: *\nDisallow: /caf\xe9\n")
    assert not latin.allowed("http://e.example/caf%E9", "Scrapy")
    assert latin.allowed("http://e.example/cafe", "Scrapy")
