"""One Scrapy crawl, run as its own process (Twisted's reactor runs once per process): the
spider requests the start URLs it is given, and writes what it got and the crawl's stats as
JSON. ``python scrapy_crawl.py CONFIG OUT``, where CONFIG is a JSON file with ``start_urls``,
``settings`` and ``middleware`` (``"ours"`` or ``"scrapy"``)."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import scrapy
from robots_core.scrapy import GuardedResolver
from scrapy.crawler import CrawlerProcess
from twisted.internet import defer

OURS = {
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "robots_core.scrapy.RobotsTxtMiddleware": 100,
}


class LoopbackResolver(GuardedResolver):
    """Every `*.example` name resolves to 127.0.0.1 (the test's servers), as a public name
    would resolve to a public server: a site that is public by its URLs' text. Like an override
    (`--resolve`) it connects where it says; any other name is guarded."""

    def getHostByName(self, name: str, timeout: Any = ()) -> Any:  # noqa: N802 (Twisted's name)
        if name.rstrip(".").endswith(".example"):
            return defer.succeed("127.0.0.1")
        return super().getHostByName(name, timeout)


class StartSpider(scrapy.Spider):
    """Requests its start URLs (each once) and records each page it gets; with ``follow``, also
    requests every ``href`` of each page (links a server handed on)."""

    name = "start"

    def __init__(self, urls: list[str], follow: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.urls = urls
        self.follow = follow
        self.pages: list[str] = []

    async def start(self):  # type: ignore[no-untyped-def]
        for url in self.urls:
            yield scrapy.Request(url, callback=self.parse)

    def parse(self, response: Any) -> Any:
        self.pages.append(response.url)
        if self.follow:
            for href in re.findall(rb'href="([^"]+)"', response.body):
                yield response.follow(href.decode(), callback=self.parse)


def main() -> None:
    config = json.loads(open(sys.argv[1]).read())
    settings = {
        "ROBOTSTXT_OBEY": True,
        "LOG_LEVEL": "INFO",
        "TELNETCONSOLE_ENABLED": False,
        "COOKIES_ENABLED": False,
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
        **config["settings"],
    }
    if config["middleware"] == "ours":
        settings["DOWNLOADER_MIDDLEWARES"] = OURS
        # As the README installs it: start requests marked, the address rule at the connection.
        settings.setdefault("SPIDER_MIDDLEWARES", {"robots_core.scrapy.RobotsStartMiddleware": 50})
        if "DNS_RESOLVER" not in settings:
            modern = tuple(int(part) for part in scrapy.__version__.split(".")[:2]) >= (2, 13)
            setting = "TWISTED_DNS_RESOLVER" if modern else "DNS_RESOLVER"
            settings.setdefault(setting, "robots_core.scrapy.GuardedResolver")
    process = CrawlerProcess(settings=settings)
    crawler = process.create_crawler(StartSpider)
    process.crawl(crawler, urls=config["start_urls"], follow=config.get("follow", False))
    process.start()
    stats = {key: value for key, value in crawler.stats.get_stats().items() if isinstance(value, (int, float, str))}
    with open(sys.argv[2], "w") as out:
        json.dump({"pages": crawler.spider.pages, "stats": stats}, out)


if __name__ == "__main__":
    main()
