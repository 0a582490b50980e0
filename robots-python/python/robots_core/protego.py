"""``Protego``: Protego's public names and signatures, with Google's verdicts.

Replace ``from protego import Protego`` with ``from robots_core import Protego`` and the calls
stay the same: ``Protego.parse(content)``, ``can_fetch(url, user_agent)``,
``crawl_delay(user_agent)``, ``request_rate(user_agent)``, ``visit_time(user_agent)``,
``sitemaps`` and ``preferred_host``. The answers are robots-core's, which are Google's; where
they differ from Protego's, the package's README lists how.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import time
from typing import NamedTuple

from ._robots_core import RobotsTxt

__all__ = ["Protego", "RequestRate", "VisitTime"]


class RequestRate(NamedTuple):
    """A ``Request-rate`` record as Protego gives it: ``requests`` per ``seconds``, and the
    time of day it applies in (``1/10s 0600-0845``), or ``None`` for all day."""

    requests: int
    seconds: int
    start_time: time | None
    end_time: time | None


class VisitTime(NamedTuple):
    """A ``Visit-time`` record (``0600-0845``): the time of day the site asks to be crawled in."""

    start_time: time
    end_time: time


class Protego(RobotsTxt):
    """A robots.txt parsed once, answering with Protego's methods and Google's verdicts.

    >>> robots = Protego.parse("User-agent: *\\nDisallow: /private\\nCrawl-delay: 2\\n")
    >>> robots.can_fetch("https://example.com/private", "mybot")
    False
    >>> robots.crawl_delay("mybot")
    2.0

    ``can_fetch(url, user_agent)`` and ``crawl_delay(user_agent)`` are ``RobotsTxt``'s own;
    everything else of ``RobotsTxt`` (``check``, ``usage``, ``lint``) is here too.
    """

    @classmethod
    def parse(cls, content: str | bytes) -> Protego:
        """Parses a robots.txt body (``str``, as Protego takes it, or ``bytes``)."""
        return cls(content)

    def request_rate(self, user_agent: str | bytes) -> RequestRate | None:  # type: ignore[override]
        """The ``Request-rate`` of the crawler's group as
        ``RequestRate(requests, seconds, start_time, end_time)``, or ``None``."""
        rate = super().request_rate(user_agent)
        if rate is None:
            return None
        start = end = None
        for record in self.records(user_agent):
            if record.line == rate.line:
                window = record.value.split(None, 1)[1:]
                if window:
                    start, end = _time_period(window[0], "-") or (None, None)
                break
        return RequestRate(rate.requests, int(rate.seconds), start, end)

    def visit_time(self, user_agent: str | bytes) -> VisitTime | None:
        """The first valid ``Visit-time`` of the crawler's group as
        ``VisitTime(start_time, end_time)``, or ``None``."""
        for record in self.records(user_agent):
            if record.key.strip().lower() in ("visit-time", "visit time"):
                period = _time_period(record.value, "-") or _time_period(record.value, " ")
                if period is not None:
                    return VisitTime(*period)
        return None

    @property
    def sitemaps(self) -> Iterator[str]:  # type: ignore[override]
        """An iterator over the ``Sitemap`` URLs, in file order."""
        return iter(super().sitemaps)

    @property
    def preferred_host(self) -> str | None:
        """The value of the first ``Host`` record (Yandex's preferred mirror), or ``None``."""
        for record in self.records():
            if record.key.strip().lower() == "host" and record.value.strip():
                return record.value.strip()
        return None


def _time_period(value: str, separator: str) -> tuple[time, time] | None:
    """``0600-0845`` (or ``600 845``) as two times of day; ``None`` if it is not one."""
    parts = value.strip().split(separator)
    if len(parts) != 2:
        return None
    start, end = (_time_of_day(part) for part in parts)
    if start is None or end is None:
        return None
    return start, end


def _time_of_day(value: str) -> time | None:
    value = value.strip()
    if not (3 <= len(value) <= 4 and value.isascii() and value.isdigit()):
        return None
    hours, minutes = int(value[:-2]), int(value[-2:])
    if hours > 23 or minutes > 59:
        return None
    return time(hours, minutes)
