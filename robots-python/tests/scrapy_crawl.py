"""One Scrapy crawl, run as its own process (Twisted's reactor runs once per process): the
spider requests the start URLs it is given, and writes what it got and the crawl's stats as
JSON. ``python scrapy_crawl.py CONFIG OUT``, where CONFIG is a JSON file with ``start_urls``,
``settings`` and ``middleware`` (``"ours"`` or ``"scrapy"``)."""

from __future__ import annotations

import json
import sys
from typing import Any

import scrapy
from scrapy.crawler import CrawlerProcess
from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer

OURS = {
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "robots_core.scrapy.RobotsTxtMiddleware": 100,
}


class LoopbackResolver(CachingThreadedResolver):
    """Every `*.example` name resolves to 127.0.0.1 (the test's servers), as a public name
    would resolve to a public server: a site that is public by its URLs' text."""

    def getHostByName(self, name: str, timeout: Any = ()) -> Any:  # noqa: N802 (Twisted's name)
        if name.endswith(".example"):
            return defer.succeed("127.0.0.1")
        return super().getHostByName(name, timeout)


class StartSpider(scrapy.Spider):
    """Requests its start URLs (each once) and records each page it gets."""

    name = "start"

    def __init__(self, urls: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.urls = urls
        self.pages: list[str] = []

    async def start(self):  # type: ignore[no-untyped-def]
        for url in self.urls:
            yield scrapy.Request(url, callback=self.parse)

    def parse(self, response: Any) -> None:
        self.pages.append(response.url)


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
    process = CrawlerProcess(settings=settings)
    crawler = process.create_crawler(StartSpider)
    process.crawl(crawler, urls=config["start_urls"])
    process.start()
    stats = {key: value for key, value in crawler.stats.get_stats().items() if isinstance(value, (int, float, str))}
    with open(sys.argv[2], "w") as out:
        json.dump({"pages": crawler.spider.pages, "stats": stats}, out)


if __name__ == "__main__":
    main()
