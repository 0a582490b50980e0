"""A robots.txt parser for Scrapy with Google's verdicts.

In a Scrapy project's settings::

    ROBOTSTXT_OBEY = True
    ROBOTSTXT_PARSER = "robots_core.scrapy.RobotParser"

Scrapy is not a dependency of this package: the class subclasses
``scrapy.robotstxt.RobotParser`` when Scrapy is installed, and is a plain class otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._robots_core import RobotsTxt

if TYPE_CHECKING:
    _Base = object
else:
    try:
        from scrapy.robotstxt import RobotParser as _Base
    except ImportError:  # Scrapy is optional; the class works without it.
        _Base = object

__all__ = ["RobotParser"]


class RobotParser(_Base):
    """Scrapy's robots.txt parser interface over ``robots_core.RobotsTxt``.

    The body Scrapy downloaded is read as bytes (no decoding step can fail), its first
    500 KiB as Google's crawler does. ``allowed(url, user_agent)`` takes ``str`` or ``bytes``
    (Scrapy passes the request's ``User-Agent`` header as bytes) and reduces a full User-Agent
    to its product token: ``Scrapy/2.13 (+https://scrapy.org)`` is ``Scrapy``.

    >>> parser = RobotParser(b"User-agent: *\\nDisallow: /private\\n")
    >>> parser.allowed("https://example.com/private", b"Scrapy/2.13 (+https://scrapy.org)")
    False
    """

    def __init__(self, robotstxt_body: bytes | str, spider: Any = None) -> None:
        self.spider = spider
        self.robots = RobotsTxt.parse(robotstxt_body)

    @classmethod
    def from_crawler(cls, crawler: Any, robotstxt_body: bytes | str) -> RobotParser:
        """Scrapy's constructor: the crawler that fetched the file, and its body."""
        return cls(robotstxt_body, getattr(crawler, "spider", None))

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        """Whether ``user_agent`` may fetch ``url``."""
        return self.robots.can_fetch(url, user_agent)

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        """The ``Crawl-delay`` for ``user_agent`` in seconds, or ``None``."""
        return self.robots.crawl_delay(user_agent)
