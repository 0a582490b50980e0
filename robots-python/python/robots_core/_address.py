"""The address rule for Scrapy (spec section 8): judged where Twisted connects, on the address it
connects to, by a resolver for Scrapy's ``TWISTED_DNS_RESOLVER`` setting; and at the door, by the
downloader middleware, with start requests told from links by a spider middleware that marks
them as they leave the spider. Public through ``robots_core.scrapy``."""

from __future__ import annotations

import ipaddress
import logging
import threading
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from ._robots_core import is_internal_address, normal_host

if TYPE_CHECKING:
    _Resolver = object
    _LookupError = Exception
else:
    try:
        from scrapy.resolver import CachingThreadedResolver as _Resolver
        from twisted.internet.error import DNSLookupError as _LookupError
    except ImportError:  # Scrapy is optional; the classes work without it.
        _Resolver = object
        _LookupError = Exception

logger = logging.getLogger("robots_core.scrapy")

# A request's meta keys: it is one of the spider's start requests; the page whose callback
# yielded it.
START = "robotstxt_start"
FROM = "robotstxt_from"
# The names a process may hold as allowed while crawling (bounded: past it a name is not
# allowed, and its connections to internal addresses are refused).
_MOST_HANDED = 10_000


def host_of(url: str) -> str:
    """A URL's host in its normal form (IDNA, lowercase, no trailing dot); "" without one."""
    host = urlsplit(url).hostname or ""
    return normal_host(host) if host else ""


def is_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def internal_by_text(host: str) -> bool:
    """Internal by the host's text alone: an internal address literal, ``localhost`` and
    ``*.localhost``."""
    if is_literal(host):
        return is_internal_address(host.strip("[]"))
    return host == "localhost" or host.endswith(".localhost")


class InternalAllowed:
    """The names whose connections may reach internal addresses: the caller's word alone. The
    names of ``ROBOTSTXT_INTERNAL_ALLOWED`` (``"*"``: every name), names internal by their text,
    and names a page of such a host handed on (added while crawling, bounded). One per process:
    the resolver Scrapy builds is the process's, and shares it with the middleware."""

    def __init__(self) -> None:
        self._given: set[str] = set()
        self._everywhere = False
        self._handed: set[str] = set()
        self._lock = threading.Lock()

    def configure(self, names: Iterable[str]) -> None:
        for name in names:
            if name == "*":
                self._everywhere = True
            elif name:
                self._given.add(normal_host(name))

    def allows(self, host: str) -> bool:
        """Whether `host` (normal form) may connect to internal addresses, and its pages hand on
        URLs into them."""
        if self._everywhere or internal_by_text(host) or host in self._given:
            return True
        with self._lock:
            return host in self._handed

    def add(self, host: str) -> None:
        """Allows `host`, handed on by a page of an allowed host."""
        if not host or is_literal(host) or self.allows(host):
            return
        with self._lock:
            if len(self._handed) < _MOST_HANDED:
                self._handed.add(host)


INTERNAL = InternalAllowed()


class AddressRefusedError(_LookupError):
    """A connection the address rule refused: `name` resolved to the internal `address`, and no
    word of the caller's lets it be internal. Raised by :class:`GuardedResolver` where Twisted
    connects; the download fails with it."""

    def __init__(self, name: str, address: str) -> None:
        super().__init__(
            f"{name} resolves to the internal address {address}, and no word of the caller's lets it be internal: "
            "the address rule refuses the connection (a name of your own network: ROBOTSTXT_INTERNAL_ALLOWED)"
        )
        self.name = name
        self.address = address


class GuardedResolver(_Resolver):
    """Scrapy's caching resolver with the address rule applied where Twisted connects: every
    lookup a connection makes (a cached answer included, so a name that rebinds is judged again
    at each connection, with ``DNSCACHE_ENABLED`` on or off) is refused when the name resolves to
    an internal address (loopback, private, link-local such as 169.254.169.254) and the caller's
    word did not make it internal-allowed. The connection uses only the address judged. In the
    settings::

        TWISTED_DNS_RESOLVER = "robots_core.scrapy.GuardedResolver"  # Scrapy 2.13 and later
        DNS_RESOLVER = "robots_core.scrapy.GuardedResolver"  # earlier versions
    """

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> Any:
        INTERNAL.configure(crawler.settings.getlist("ROBOTSTXT_INTERNAL_ALLOWED", []))
        return cast(Any, super()).from_crawler(crawler, reactor)

    def getHostByName(self, name: str, timeout: Any = ()) -> Any:  # noqa: N802 (Twisted's name)
        deferred = self.lookup(name, timeout)
        deferred.addCallback(self.judge, name)
        return deferred

    def lookup(self, name: str, timeout: Any = ()) -> Any:
        """The address of `name`, as Scrapy's resolver gives it (its cache, then the system's)."""
        return cast(Any, super()).getHostByName(name, timeout)

    def judge(self, address: str, name: str) -> str:
        host = normal_host(name)
        if is_internal_address(address) and not INTERNAL.allows(host):
            logger.info("connection to %s (%s) refused by the address rule", name, address)
            raise AddressRefusedError(name, address)
        return address


def is_guarded(path: Any) -> bool:
    """Whether a resolver setting names :class:`GuardedResolver` (or a subclass)."""
    if not path:
        return False
    try:
        from scrapy.utils.misc import load_object

        resolver = path if isinstance(path, type) else load_object(path)
        return isinstance(resolver, type) and issubclass(resolver, GuardedResolver)
    except Exception:
        return False


class RobotsStartMiddleware:
    """A spider middleware that says where each request came from, so that the address rule
    knows the caller's own URLs from the links a server handed on: the requests the spider's
    start yields (``start_urls``, ``start_requests``, ``start``) are marked as the caller's; each
    request a callback yields is marked with the page it came from, whatever the referrer policy
    sends. In the settings::

        SPIDER_MIDDLEWARES = {"robots_core.scrapy.RobotsStartMiddleware": 50}
    """

    @classmethod
    def from_crawler(cls, crawler: Any) -> RobotsStartMiddleware:
        return cls()

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for item in start:
            yield _mark_start(item)

    def process_start_requests(self, start_requests: Iterable[Any], spider: Any) -> Iterable[Any]:
        for item in start_requests:
            yield _mark_start(item)

    def process_spider_output(self, response: Any, result: Iterable[Any], spider: Any = None) -> Iterable[Any]:
        for item in result:
            yield _mark_from(item, response)

    async def process_spider_output_async(
        self, response: Any, result: AsyncIterator[Any], spider: Any = None
    ) -> AsyncIterator[Any]:
        async for item in result:
            yield _mark_from(item, response)


def _is_request(item: Any) -> bool:
    return hasattr(item, "meta") and hasattr(item, "url") and hasattr(item, "headers")


def _mark_start(item: Any) -> Any:
    if _is_request(item):
        item.meta.setdefault(START, True)
    return item


def _mark_from(item: Any, response: Any) -> Any:
    # A page's request is never the caller's, even with the start request's meta copied on.
    if _is_request(item):
        item.meta.pop(START, None)
        item.meta[FROM] = response.url
    return item
