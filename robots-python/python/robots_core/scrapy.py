"""Scrapy made polite: a downloader middleware with Google's robots.txt rules and per-server
pacing, and a robots.txt parser for Scrapy's own middleware.

The middleware replaces Scrapy's ``RobotsTxtMiddleware``; in a project's settings::

    ROBOTSTXT_OBEY = True
    DOWNLOADER_MIDDLEWARES = {
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
        "robots_core.scrapy.RobotsTxtMiddleware": 100,
    }
    TWISTED_DNS_RESOLVER = "robots_core.scrapy.GuardedResolver"  # DNS_RESOLVER before Scrapy 2.13
    SPIDER_MIDDLEWARES = {"robots_core.scrapy.RobotsStartMiddleware": 50}

Only the parser, with Scrapy's middleware (Google's verdicts, none of the status rules or
pacing)::

    ROBOTSTXT_OBEY = True
    ROBOTSTXT_PARSER = "robots_core.scrapy.RobotParser"

Scrapy is not a dependency of this package: the classes work with it when it is installed.
"""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from ._address import (
    FROM,
    INTERNAL,
    START,
    AddressRefusedError,
    GuardedResolver,
    RobotsStartMiddleware,
    host_of,
    is_guarded,
    is_literal,
)
from ._robots_core import (
    DEFAULT_HOLD_UNREACHABLE,
    DISTRESS_STATUSES,
    MAX_BODY_BYTES,
    MOST_UNREACHABLE_TRIES,
    CachedRobots,
    RobotsTxt,
    backoff_pause,
    hop_allowed,
    server_pause,
    user_agent_token,
)

if TYPE_CHECKING:
    _Base = object
else:
    try:
        from scrapy.robotstxt import RobotParser as _Base
    except ImportError:  # Scrapy is optional; the class works without it.
        _Base = object

__all__ = [
    "AddressRefusedError",
    "GuardedResolver",
    "RobotParser",
    "RobotsStartMiddleware",
    "RobotsTxtMiddleware",
    "describe_agent",
]

# What a request of no known page is judged as handed on by: a public host.
_NO_PAGE = "http://no-page.invalid/"

logger = logging.getLogger(__name__)

# Longer than a copy of robots.txt lives: refused whatever the policy (spec section 8).
_LONGEST_INTERVAL = 24 * 3600.0
_POLICIES = ("refuse", "honour", "clamp")
_SLOT_KEYS = ("host", "origin", "domain", "ip")
_SCRAPYS_MIDDLEWARE = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
_START_MIDDLEWARE = "robots_core.scrapy.RobotsStartMiddleware"
# A robots.txt request's meta key: the body bytes received so far.
_BODY_BYTES_SEEN = "robots_core_body_bytes"


def _is_token(name: str) -> bool:
    return bool(name) and all(c.isascii() and (c.isalpha() or c in "-_") for c in name)


def describe_agent(user_agent: str | bytes) -> tuple[str, str | None]:
    """The product token robots.txt is obeyed for, and a warning when it is not a crawler's own.

    >>> describe_agent("Mozilla/5.0 (X11; Linux x86_64) MyBot/2.1 (+https://mybot.example)")
    ('MyBot', None)
    >>> token, warning = describe_agent("AB42bot/1.0")
    >>> token, warning.split(":")[0]
    ('AB', "the crawler's name 'AB42bot' is cut to 'AB' (Google matches letters, '-' and '_' only)")
    """
    agent = user_agent.decode("utf-8", "replace") if isinstance(user_agent, bytes) else user_agent
    token, lost = user_agent_token(agent)
    if lost is not None and token:
        return token, (
            f"the crawler's name {lost!r} is cut to {token!r} (Google matches letters, '-' and '_' only): "
            "set ROBOTSTXT_USER_AGENT to the token robots.txt files name you by"
        )
    if not token:
        return lost or agent, (
            f"the user agent {agent!r} has no product token, so only the '*' groups of robots.txt apply to it: "
            "set ROBOTSTXT_USER_AGENT to your crawler's token"
        )
    if token.lower() == "mozilla":
        return token, (
            f"the user agent {agent!r} is a browser's: no robots.txt names 'Mozilla', so only the '*' groups "
            "apply; set ROBOTSTXT_USER_AGENT to your crawler's token"
        )
    return token, None


def _as_text(value: str | bytes) -> str:
    """A header value as text (Scrapy keeps them as bytes): what a log line shows."""
    return value.decode("latin-1") if isinstance(value, bytes) else value


class _AgentLog:
    """Says once per agent which token robots.txt is obeyed for, and the User-Agent sent (they
    differ when ``ROBOTSTXT_USER_AGENT`` names the token), and warns when that is not a
    crawler's own token. ``str`` and ``bytes`` spellings of one agent are one."""

    def __init__(self) -> None:
        self._said: set[str] = set()

    def say(self, agent: str | bytes, sent: str | bytes | None = None) -> None:
        text = _as_text(agent)
        if text in self._said or len(self._said) >= 64:
            return
        self._said.add(text)
        token, warning = describe_agent(agent)
        sent_text = text if sent is None else _as_text(sent)
        if sent_text == text:
            logger.info("robots.txt is obeyed as %r (the User-Agent sent: %r)", token, text)
        else:
            logger.info(
                "robots.txt is obeyed as %r (ROBOTSTXT_USER_AGENT %r; the User-Agent sent: %r)", token, text, sent_text
            )
        if warning:
            logger.warning("robots.txt: %s", warning)


class RobotParser(_Base):
    """Scrapy's robots.txt parser interface over ``robots_core.RobotsTxt``.

    The body Scrapy downloaded is read as bytes (no decoding step can fail), its first
    500 KiB as Google's crawler does. ``allowed(url, user_agent)`` takes ``str`` or ``bytes``
    (Scrapy passes the request's ``User-Agent`` header as bytes) and reduces a full User-Agent
    to its product token: ``Scrapy/2.13 (+https://scrapy.org)`` is ``Scrapy``, and so is
    ``Mozilla/5.0 (X11; Linux x86_64) Scrapy/2.13 (+https://scrapy.org)``. A URL is refused when
    its path or the path the server resolves it to (``/%7Euser/`` is ``/~user/``) is
    disallowed. The token obeyed is logged once per user agent, with a warning when it is a
    browser's or cut short.

    Scrapy gives a parser only the body, so a robots.txt answered with an error (a 503: Google
    allows nothing) is parsed as its error page: ``RobotsTxtMiddleware`` applies the status
    rules.

    >>> parser = RobotParser(b"User-agent: *\\nDisallow: /private\\n")
    >>> parser.allowed("https://example.com/private", b"Scrapy/2.13 (+https://scrapy.org)")
    False
    """

    _agents = _AgentLog()

    def __init__(self, robotstxt_body: bytes | str, spider: Any = None) -> None:
        self.spider = spider
        self.robots = RobotsTxt.parse(robotstxt_body)

    @classmethod
    def from_crawler(cls, crawler: Any, robotstxt_body: bytes | str) -> RobotParser:
        """Scrapy's constructor: the crawler that fetched the file, and its body."""
        return cls(robotstxt_body, getattr(crawler, "spider", None))

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        """Whether ``user_agent`` may fetch ``url`` (or what the server resolves it to)."""
        self._agents.say(user_agent)
        return self.robots.check_resolved(url, user_agent).allowed

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        """The ``Crawl-delay`` for ``user_agent`` in seconds, or ``None``."""
        return self.robots.crawl_delay(user_agent)


@dataclass
class _SiteTally:
    """What robots.txt did to one site's requests (for the summary at the spider's close)."""

    forbidden: int = 0
    held: int = 0
    given_up: int = 0
    cause: str = ""
    source: str = ""


def _requests(count: int) -> str:
    return f"{count} request{'' if count == 1 else 's'}"


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


class RobotsTxtMiddleware:
    """A downloader middleware that replaces Scrapy's ``RobotsTxtMiddleware``: robots.txt as
    Google's crawler reads it (RFC 9309), fetched through Scrapy's downloader, and every server
    paced as its robots.txt asks.

    - **Status rules.** A 2xx is parsed (its first 500 KiB); redirects are followed up to 5
      hops, and the rules found belong to the original origin only; a 4xx allows everything;
      a 429, a 5xx or a network error allows nothing until robots.txt is had again (the last
      good copy goes on being used, and after 30 days with none, everything is allowed). The
      site's requests wait for robots.txt's next fetch while it comes within
      ``ROBOTSTXT_UNREACHABLE_HOLD`` (60 s) of the first failure, then are given up, the site
      named in a WARNING.
      Copies live their ``Cache-Control: max-age`` within 1 minute and 24 hours. Requests for
      one origin wait for its single fetch. The decisions are robots-fetch's, the Rust crate's.
    - **Pacing per server**, through Scrapy's download slots: the slot is the server's
      (``ROBOTSTXT_SLOT_KEY``: ``host``, the default, ``origin``, ``domain`` or ``ip``) and its
      delay is at least the ``Crawl-delay`` or ``Request-rate`` of the crawler's group and at
      least ``DOWNLOAD_DELAY``, without jitter below it. A delay over ``ROBOTSTXT_MAX_DELAY``
      (30 s) is refused by default (``ROBOTSTXT_LONG_DELAY``: ``refuse``, ``honour`` or
      ``clamp``); over 24 hours, always. A ``Retry-After`` on a 429 or 5xx, or rate-limit
      headers that say nothing is left, pause the slot (at most ``ROBOTSTXT_MAX_RETRY_AFTER``,
      600 s).
    - **Slower when the server struggles**: a page answered with 429, 500, 502, 503 or 504
      (``ROBOTSTXT_BACKOFF_STATUSES``), or whose download ended without an answer (a refused,
      reset or lost connection, a timeout; ``ROBOTSTXT_BACKOFF_NETWORK_ERRORS``), pauses its slot for an
      exponential back-off: ``ROBOTSTXT_BACKOFF_BASE`` (5 s) doubled per such answer in a row, at
      most ``ROBOTSTXT_BACKOFF_MAX`` (300 s), varied by ±10%; a ``Retry-After`` lengthens it,
      never shortens it. Any other answer ends the streak. The rule is the Rust pacers' own.
    - **What the server serves**: a URL is refused when its path or the path the server resolves
      it to (``/%7Euser/`` is ``/~user/``, dot segments removed) is disallowed.
    - **Nothing a server hands on leads inside**: a redirect's target or a link (any request
      but the spider's start requests, ``Referer`` or not) is refused when it goes from a public
      host into an internal address (loopback, private, link-local such as 169.254.169.254), by
      the URLs' text and by the address Scrapy's resolver gives the target's name (failing
      closed); :class:`GuardedResolver` judges each connection's address too. Start requests
      may be internal (``ROBOTSTXT_INTERNAL_ALLOWED`` names more).
    - **The agent**: ``ROBOTSTXT_USER_AGENT``, else the request's ``User-Agent``, reduced to its
      product token (also from a browser-style string carrying one:
      ``Mozilla/5.0 (X11; …) MyBot/2.1 (+https://…)``). The token is logged at start-up, with a
      warning when it is a browser's or cut short.

    Stats: ``robotstxt/request_count``, ``robotstxt/response_status_count/<status>``,
    ``robotstxt/outcome/<outcome>``, ``robotstxt/forbidden``, ``robotstxt/refused/unreachable``
    (requests given up while robots.txt stayed unreachable), ``robotstxt/deferred`` (requests
    held until robots.txt was due again, each time), ``robotstxt/refused/delay``,
    ``robotstxt/refused/address``, ``robotstxt/pause_count``, ``robotstxt/pause_max``,
    ``robotstxt/backoff_count``, ``robotstxt/delay_max``.
    """

    DOWNLOAD_PRIORITY: int = 1000

    def __init__(self, crawler: Any) -> None:
        from scrapy.exceptions import NotConfigured

        settings = crawler.settings
        if not settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured
        self.crawler = crawler
        self.stats = crawler.stats
        self._robots_agent: str | None = settings.get("ROBOTSTXT_USER_AGENT") or None
        self._default_agent: str = settings.get("USER_AGENT") or "Scrapy"
        self._slot_key: str = settings.get("ROBOTSTXT_SLOT_KEY", "host")
        self._policy: str = settings.get("ROBOTSTXT_LONG_DELAY", "refuse")
        if self._slot_key not in _SLOT_KEYS:
            raise ValueError(f"ROBOTSTXT_SLOT_KEY must be one of {_SLOT_KEYS}, not {self._slot_key!r}")
        if self._policy not in _POLICIES:
            raise ValueError(f"ROBOTSTXT_LONG_DELAY must be one of {_POLICIES}, not {self._policy!r}")
        self._max_delay = float(settings.getfloat("ROBOTSTXT_MAX_DELAY", 30.0))
        self._max_pause = float(settings.getfloat("ROBOTSTXT_MAX_RETRY_AFTER", 600.0))
        self._backoff_base = float(settings.getfloat("ROBOTSTXT_BACKOFF_BASE", 5.0))
        self._backoff_max = float(settings.getfloat("ROBOTSTXT_BACKOFF_MAX", 300.0))
        if not 0.0 <= self._backoff_base <= self._backoff_max < float("inf"):
            raise ValueError(
                "ROBOTSTXT_BACKOFF_BASE and ROBOTSTXT_BACKOFF_MAX must be seconds with 0 <= base <= max, "
                f"not {self._backoff_base!r} and {self._backoff_max!r}"
            )
        statuses = settings.getlist("ROBOTSTXT_BACKOFF_STATUSES", list(DISTRESS_STATUSES))
        self._distress = frozenset(int(status) for status in statuses)
        self._backoff_network = settings.getbool("ROBOTSTXT_BACKOFF_NETWORK_ERRORS", True)
        # Per slot: distress answers in a row.
        self._streaks: dict[str, int] = {}
        # Requests answered and not yet out of the downloader (by identity: they are alive).
        self._answered: set[int] = set()
        self._robots: dict[tuple[str, str, int], CachedRobots] = {}
        self._waiting: dict[tuple[str, str, int], list[Any]] = {}
        self._addresses: dict[str, str] = {}
        self._floors: dict[str, float] = {}
        self._paused_until: dict[str, float] = {}
        self._clamped: set[str] = set()
        self._max_origins = max(1, settings.getint("ROBOTSTXT_CACHE_ORIGINS", 10_000))
        self._max_bytes = max(1 << 20, settings.getint("ROBOTSTXT_CACHE_BYTES", 64 << 20))
        self._sizes: dict[tuple[str, str, int], int] = {}
        self._bytes = 0
        self._unreachable_hold = max(0.0, settings.getfloat("ROBOTSTXT_UNREACHABLE_HOLD", DEFAULT_HOLD_UNREACHABLE))
        for replaced in ("ROBOTSTXT_UNREACHABLE_RETRIES", "ROBOTSTXT_UNREACHABLE_WAIT"):
            if settings.get(replaced) is not None:
                logger.warning(
                    "robots.txt: %s is no longer read: ROBOTSTXT_UNREACHABLE_HOLD (%g s) bounds how long a site's "
                    "requests wait for an unreachable robots.txt",
                    replaced,
                    self._unreachable_hold,
                )
        # What robots.txt did to each site's requests, summed up at the close (bounded like
        # the cache: the oldest site goes first).
        self._sites: dict[str, _SiteTally] = {}
        self._deferred = 0
        self._agents = _AgentLog()
        self._agents.say(self._robots_agent or self._default_agent, sent=self._default_agent)
        if self._robots_agent and not _is_token(self._robots_agent):
            logger.warning(
                "robots.txt: ROBOTSTXT_USER_AGENT %r has characters Google never matches (letters, '-' and '_' "
                "only): it is obeyed as %r",
                self._robots_agent,
                describe_agent(self._robots_agent)[0],
            )
        scrapys = settings.getwithbase("DOWNLOADER_MIDDLEWARES").get(_SCRAPYS_MIDDLEWARE)
        if scrapys is not None:
            # Both would fetch robots.txt, and Scrapy's would let through what a 5xx hides.
            logger.warning(
                "Scrapy's RobotsTxtMiddleware is enabled beside robots_core's: set DOWNLOADER_MIDDLEWARES[%r] = None",
                _SCRAPYS_MIDDLEWARE,
            )
        INTERNAL.configure(settings.getlist("ROBOTSTXT_INTERNAL_ALLOWED", []))
        with warnings.catch_warnings():  # DNS_RESOLVER is deprecated from Scrapy 2.13 on, and warns.
            warnings.simplefilter("ignore")
            resolvers = (settings.get("TWISTED_DNS_RESOLVER"), settings.get("DNS_RESOLVER"))
        if not any(is_guarded(resolver) for resolver in resolvers):
            logger.error(
                "robots.txt: Scrapy's resolver is not robots_core's: the address rule is judged when a request "
                "enters the middleware only, not where Twisted connects, so a name that resolves again to an "
                'internal address is not refused. Set TWISTED_DNS_RESOLVER = "robots_core.scrapy.GuardedResolver" '
                "(DNS_RESOLVER before Scrapy 2.13)"
            )
        self._marks_start = _START_MIDDLEWARE in settings.getwithbase("SPIDER_MIDDLEWARES")
        if not self._marks_start:
            logger.warning(
                "robots.txt: %s is not in SPIDER_MIDDLEWARES: only start_urls are taken for the spider's own "
                "URLs; other requests without a known page are judged as links a public page handed on",
                _START_MIDDLEWARE,
            )
        from scrapy import signals

        crawler.signals.connect(self._response_downloaded, signal=signals.response_downloaded)
        crawler.signals.connect(self._request_left_downloader, signal=signals.request_left_downloader)
        crawler.signals.connect(self._spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(self._bytes_received, signal=signals.bytes_received)

    @classmethod
    def from_crawler(cls, crawler: Any) -> RobotsTxtMiddleware:
        return cls(crawler)

    async def process_request(self, request: Any, spider: Any = None) -> None:
        parts = urlsplit(request.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return
        slot = await self._slot_of(request.url)
        request.meta["download_slot"] = slot
        if request.meta.get("dont_obey_robotstxt"):
            return
        await self._check_address(request)
        robots = await self._robots_for(request.url)
        agent = self._agent(request)
        self._agents.say(agent, sent=request.headers.get(b"User-Agent") or self._default_agent)
        verdict = robots.check(request.url, agent)
        self._account(_origin_key(request.url), robots)  # a check may have compiled a view
        if not verdict.allowed:
            self._refuse(request, robots, verdict)
        interval = self._interval(robots, agent)
        if interval is not None:
            interval = self._allowed_interval(request, robots, interval)
        self._pace(request, slot, interval or 0.0)

    async def _check_address(self, request: Any) -> None:
        """The address rule at the door (the guard itself is :class:`GuardedResolver`, where
        Twisted connects). The spider's start requests are the caller's own. Any other request
        was handed on by a page: the one it was redirected from, the page whose callback yielded
        it (:class:`RobotsStartMiddleware`), or its ``Referer``; with none known, a public page.
        From a public page it may not lead into an internal address (loopback, private,
        link-local such as 169.254.169.254), by its text or by the address its name resolves to
        now; a name that does not resolve is refused too. What a page of a host the caller's word
        made internal-allowed hands on is allowed, and its names may connect inside."""
        from scrapy.exceptions import IgnoreRequest

        host = host_of(request.url)
        redirects = request.meta.get("redirect_urls")
        if not redirects and self._is_start(request):
            return
        given: str | bytes | None = (
            redirects[-1] if redirects else request.meta.get(FROM) or request.headers.get(b"Referer")
        )
        source = given.decode("utf-8", "replace") if isinstance(given, bytes) else given
        try:
            source_host = host_of(source) if source else ""
            allowed = hop_allowed(source or _NO_PAGE, request.url)
        except ValueError:  # A Referer that is no URL names no page.
            source, source_host = None, ""
            allowed = hop_allowed(_NO_PAGE, request.url)
        if source and INTERNAL.allows(source_host):
            INTERNAL.add(host)
            return
        if allowed and not is_literal(host) and host != source_host:
            # Judged by the address now, failing closed: a name that does not resolve now may
            # answer an internal address at the connection.
            address = await self._resolve(host)
            allowed = address is not None and hop_allowed(source or _NO_PAGE, request.url, [address])
        if not allowed:
            self.stats.inc_value("robotstxt/refused/address")
            by = f"handed on by {source}" if source else "handed on by no page the crawl knows"
            logger.info(
                "robots.txt: %s, %s, leads into an internal address: refused by the address rule", request.url, by
            )
            raise IgnoreRequest(f"{request.url}, {by}, leads into an internal address: refused")

    def _is_start(self, request: Any) -> bool:
        """Whether a request is one of the spider's start requests: marked so by
        :class:`RobotsStartMiddleware`, or, without it, one of ``start_urls``."""
        if request.meta.get(START):
            return True
        if self._marks_start or request.meta.get(FROM) or request.headers.get(b"Referer"):
            return False
        start_urls = getattr(self.crawler.spider, "start_urls", None) or ()
        return request.url in start_urls

    def process_exception(self, request: Any, exception: BaseException, spider: Any = None) -> None:
        """A connection :class:`GuardedResolver` refused: counted and said as the address rule's
        refusal, and the request ignored (not retried, not an error)."""
        from scrapy.exceptions import IgnoreRequest

        if isinstance(exception, AddressRefusedError):
            self.stats.inc_value("robotstxt/refused/address")
            logger.info("robots.txt: %s: %s", request.url, exception)
            raise IgnoreRequest(f"{request.url}: {exception}")

    def _agent(self, request: Any) -> str | bytes:
        if self._robots_agent:
            return self._robots_agent
        agent: str | bytes | None = request.headers.get(b"User-Agent")
        return agent or self._default_agent

    def _refuse(self, request: Any, robots: CachedRobots, verdict: Any) -> None:
        from scrapy.exceptions import IgnoreRequest

        if robots.rules == "disallow_all" and robots.outcome == "unreachable":
            reason = f"robots.txt of {robots.origin} is unreachable ({robots.error})"
            now = time.monotonic()
            wait = max((robots.refresh_at or now) - now, 0.0)
            tries = request.meta.get("robotstxt_unreachable_tries", 0)
            # The Rust crawl loop's rule: held while robots.txt's next try comes within the
            # hold of the outage's start; a robots.txt that flaps cannot hold it for ever.
            if robots.waits_for_robots(now, self._unreachable_hold) and tries < MOST_UNREACHABLE_TRIES:
                # Temporary: the request goes again once robots.txt is due again (counted as
                # deferred, not refused: it may yet be fetched).
                self._tally(robots).held += 1
                self._defer(request.replace(dont_filter=True), wait, tries + 1)
                reason += f": the request is tried again in {wait:.1f} s, when robots.txt is"
            else:
                self.stats.inc_value("robotstxt/refused/unreachable")
                self._give_up(robots, now)
                reason += ": the request is given up"
            # Said at INFO, not DEBUG: the site's pages are held or lost, which a rule's refusal
            # is not (a `scrapy shell` that got nothing then says why).
            logger.info("%s: %s", reason, request, extra={"spider": self.crawler.spider})
            raise IgnoreRequest(reason)
        else:
            self.stats.inc_value("robotstxt/forbidden")
            rule = f" by line {verdict.rule.line} ({verdict.rule.pattern})" if verdict.rule else ""
            resolved = f" (resolved to {verdict.resolved_path})" if verdict.resolved_path else ""
            # The file that decided: the origin's, or where its robots.txt was redirected.
            source = robots.redirected_to or f"{robots.origin}/robots.txt"
            reason = f"Forbidden by robots.txt ({source}){rule}{resolved}"
            tally = self._tally(robots)
            tally.forbidden += 1
            # A site's first refusal at INFO (a `scrapy shell` or `scrapy fetch` of one URL then
            # says why it got nothing), the others at DEBUG; the close sums them up.
            level = logging.INFO if tally.forbidden == 1 else logging.DEBUG
            logger.log(level, "%s: %s", reason, request, extra={"spider": self.crawler.spider})
            raise IgnoreRequest(reason)

    def _give_up(self, robots: CachedRobots, now: float) -> None:
        """Counts a request given up for its site's unreachable robots.txt; the first of a site
        is a WARNING naming it, the reason and the hold."""
        origin = robots.origin
        tally = self._tally(robots)
        if tally.given_up == 0:
            lasted = robots.unreachable_for(now) or 0.0
            logger.warning(
                "robots.txt of %s unreachable for %.0f s (%s): the site's requests are given up, not tried again "
                "(ROBOTSTXT_UNREACHABLE_HOLD = %g s)",
                origin,
                lasted,
                robots.error,
                self._unreachable_hold,
                extra={"spider": self.crawler.spider},
            )
        tally.given_up += 1
        tally.cause = robots.error or "unreachable"

    def _tally(self, robots: CachedRobots) -> _SiteTally:
        """The tally of robots.txt's doings for the site of `robots`."""
        tally = self._sites.get(robots.origin)
        if tally is None:
            if len(self._sites) >= self._max_origins:
                self._sites.pop(next(iter(self._sites)))
            tally = self._sites[robots.origin] = _SiteTally()
        tally.source = robots.redirected_to or f"{robots.origin}/robots.txt"
        return tally

    def _spider_closed(self, spider: Any = None, reason: str = "") -> None:
        """One line per site whose requests robots.txt refused, held or gave up: how many, why,
        and the robots.txt that decided (a WARNING for a site given up, INFO for the others)."""
        for origin, tally in self._sites.items():
            parts = []
            if tally.forbidden:
                parts.append(f"{_requests(tally.forbidden)} refused by its rules")
            if tally.held:
                parts.append(f"held {_times(tally.held)} while it was unreachable")
            if tally.given_up:
                parts.append(f"{_requests(tally.given_up)} given up ({tally.cause})")
            level = logging.WARNING if tally.given_up else logging.INFO
            logger.log(
                level, "robots.txt of %s (%s): %s", origin, tally.source, ", ".join(parts), extra={"spider": spider}
            )

    def _defer(self, request: Any, wait: float, tries: int) -> None:
        request.meta["robotstxt_unreachable_tries"] = tries
        self._deferred += 1
        self.stats.inc_value("robotstxt/deferred")

        def again() -> None:
            self._deferred -= 1
            engine = self.crawler.engine
            try:
                engine.crawl(request)
            except TypeError:  # Scrapy before 2.10 wants the spider too.
                engine.crawl(request, self.crawler.spider)

        _call_later(wait + 0.05, again)

    def _bytes_received(self, data: bytes, request: Any, spider: Any = None) -> None:
        """Stops a robots.txt download past the bytes read (500 KiB, as Google's crawler reads),
        keeping what came: a body that never ends costs that much, not Scrapy's 1 GiB limit."""
        counted = request.meta.get(_BODY_BYTES_SEEN)
        if counted is None:
            return
        counted += len(data)
        request.meta[_BODY_BYTES_SEEN] = counted
        if counted > MAX_BODY_BYTES:
            from scrapy.exceptions import StopDownload

            self.stats.inc_value("robotstxt/body_cut")
            raise StopDownload(fail=False)

    def _spider_idle(self, spider: Any = None) -> None:
        from scrapy.exceptions import DontCloseSpider

        if self._deferred > 0:
            raise DontCloseSpider

    def _interval(self, robots: CachedRobots, agent: str | bytes) -> float | None:
        parsed = robots.robots
        if parsed is None:
            return None
        delay = parsed.crawl_delay(agent)
        rate = parsed.request_rate(agent)
        asked = [value for value in (delay, rate.interval if rate else None) if value is not None]
        return max(asked) if asked else None

    def _allowed_interval(self, request: Any, robots: CachedRobots, interval: float) -> float:
        """The interval a site asked for, under the long-delay policy (spec section 8)."""
        from scrapy.exceptions import IgnoreRequest

        if interval <= self._max_delay:
            return interval
        if interval > _LONGEST_INTERVAL or self._policy == "refuse":
            self.stats.inc_value("robotstxt/refused/delay")
            raise IgnoreRequest(
                f"{robots.origin} asks for {interval:g} s between requests, above ROBOTSTXT_MAX_DELAY "
                f"({self._max_delay:g} s)"
                + (" and above 24 hours" if interval > _LONGEST_INTERVAL else "")
                + ": refused (ROBOTSTXT_LONG_DELAY = 'honour' or 'clamp' to crawl it)"
            )
        if self._policy == "clamp":
            if robots.origin not in self._clamped:
                self._clamped.add(robots.origin)
                logger.warning(
                    "%s asks for %g s between requests: clamped to ROBOTSTXT_MAX_DELAY (%g s)",
                    robots.origin,
                    interval,
                    self._max_delay,
                )
            return self._max_delay
        return interval

    # Slots: one per server group, paced at least as robots.txt asks.

    async def _slot_of(self, url: str) -> str:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if self._slot_key == "origin":
            port = parts.port or (443 if parts.scheme == "https" else 80)
            return f"{parts.scheme}://{host}:{port}"
        if self._slot_key == "domain":
            return _registrable_domain(host)
        if self._slot_key == "ip":
            return await self._address_of(host)
        return host

    async def _address_of(self, host: str) -> str:
        """The slot key of `host` under ``ROBOTSTXT_SLOT_KEY = "ip"``, kept per host (an
        unresolvable name fails at download; its name is its group)."""
        if host in self._addresses:
            return self._addresses[host]
        address = await self._resolve(host) or host
        if len(self._addresses) > 100_000:
            self._addresses.clear()
        self._addresses[host] = address
        return address

    async def _resolve(self, host: str) -> str | None:
        """The address Scrapy's resolver gives `host` now, the one its connection will use (it
        keeps its own cache), or None when it does not resolve. Not kept here: a copy kept
        longer than Scrapy's could judge a name by an address it no longer connects to."""
        from scrapy.utils.defer import maybe_deferred_to_future
        from twisted.internet import reactor

        try:
            return str(await maybe_deferred_to_future(cast(Any, reactor).resolve(host)))
        except Exception:
            return None

    def _pace(self, request: Any, key: str, interval: float) -> None:
        # At least a millisecond between a server's request starts: with no delay at all,
        # Scrapy's downloader (2.13 and later, on the asyncio reactor) hands out every request
        # queued for a slot in one turn, before any counts as in flight, so its concurrency
        # (CONCURRENT_REQUESTS_PER_DOMAIN) is not kept. With a delay it takes one a turn.
        floor = max(self._floors.get(key, 0.0), interval, _LEAST_DELAY)
        if len(self._floors) > 100_000:  # Forget the floors of slots Scrapy dropped.
            slots = self.crawler.engine.downloader.slots
            self._floors = {k: f for k, f in self._floors.items() if k in slots}
        self._floors[key] = floor
        slot = self._slot(request, key)
        if slot is not None and floor > 0:
            self._apply_floor(slot, floor)
        if interval > (self.stats.get_value("robotstxt/delay_max") or 0):
            self.stats.max_value("robotstxt/delay_max", interval)

    def _slot(self, request: Any, key: str) -> Any:
        downloader = self.crawler.engine.downloader
        slot = downloader.slots.get(key)
        if slot is None:
            try:
                _, slot = downloader._get_slot(request)
            except TypeError:  # Scrapy before 2.13 wants the spider too.
                _, slot = downloader._get_slot(request, self.crawler.spider)
        return slot

    def _apply_floor(self, slot: Any, floor: float) -> None:
        if slot.delay < floor:
            slot.delay = floor
        if slot.delay <= floor:
            # Jitter would start some requests sooner than the site asked.
            if hasattr(slot, "jitter"):
                slot.jitter = 0.0
            else:
                slot.randomize_delay = False

    def _response_downloaded(self, response: Any, request: Any, spider: Any = None) -> None:
        # Sent before the slot takes its next request, so a pause holds that one too.
        if len(self._answered) > 100_000:
            self._answered.clear()  # never more than the requests in flight, unless a signal was lost
        self._answered.add(id(request))  # until it leaves the downloader
        key = request.meta.get("download_slot")
        if key is None:
            return
        downloader = self.crawler.engine.downloader
        slot = downloader.slots.get(key)
        if slot is None:
            return
        floor = self._floors.get(key)
        if floor:
            self._apply_floor(slot, floor)  # AutoThrottle may have lowered it.
        asked = server_pause(response.status, response.headers)
        # A robots.txt answer has its own status rules; only its headers pause the server.
        is_page = _BODY_BYTES_SEEN not in request.meta
        if is_page and response.status in self._distress:
            self._back_off(downloader, slot, key, asked, f"answered {response.status}")
            return
        if is_page:
            self._streaks.pop(key, None)  # any other answer ends the streak
        if asked is not None and asked > 0:
            self._pause(downloader, slot, key, min(asked, self._max_pause))

    def _request_left_downloader(self, request: Any, spider: Any = None) -> None:
        """A page download that ended without an answer (a refused, reset or lost connection, a
        timeout, a name that does not resolve) backs its server off. Scrapy tells of the failure
        only here, after its slot has looked at its queue: a request already due then (the
        failure took longer than the slot's delay) starts before the pause, the next ones wait."""
        if id(request) in self._answered:
            self._answered.discard(id(request))
            return
        key = request.meta.get("download_slot")
        if key is None or not self._backoff_network or _BODY_BYTES_SEEN in request.meta:
            return
        downloader = self.crawler.engine.downloader
        slot = downloader.slots.get(key)
        if slot is not None:
            self._back_off(downloader, slot, key, None, "gave no answer")

    def _back_off(self, downloader: Any, slot: Any, key: str, asked: float | None, why: str) -> None:
        """One more distress answer in a row from the slot's server: the pause its streak calls
        for (robots-fetch's rule), lengthened by what it asked."""
        streak = self._streaks.get(key, 0) + 1
        if len(self._streaks) > 100_000:
            self._streaks.clear()  # forgets streaks, never a pause in effect
        self._streaks[key] = streak
        pause = backoff_pause(
            streak, asked, base=self._backoff_base, cap=self._backoff_max, max_retry_after=self._max_pause
        )
        self.stats.inc_value("robotstxt/backoff_count")
        logger.info("%s %s (%d in a row): backing off %.1f s", key, why, streak, pause)
        self._pause(downloader, slot, key, pause)

    def _pause(self, downloader: Any, slot: Any, key: str, pause: float) -> None:
        """Holds the slot's queue for ``pause`` seconds (longer pauses win)."""
        until = time.monotonic() + pause
        if self._paused_until.get(key, 0.0) >= until:
            return
        latercall = slot.latercall
        # Scrapy before 2.14 keeps a Twisted call it has made: cancelling it again would raise
        # (AlreadyCalled), and the pause be lost.
        if latercall is not None and getattr(latercall, "active", lambda: True)():
            latercall.cancel()
        resume = getattr(downloader, "_latercall", None)
        if resume is None:  # Scrapy before 2.14.

            def resume(slot: Any) -> None:
                slot.latercall = None
                downloader._process_queue(self.crawler.spider, slot)

        slot.latercall = _call_later(pause, resume, slot)
        if len(self._paused_until) > 100_000:
            now = time.monotonic()
            self._paused_until = {k: t for k, t in self._paused_until.items() if t > now}
        self._paused_until[key] = until
        self.stats.inc_value("robotstxt/pause_count")
        self.stats.max_value("robotstxt/pause_max", pause)
        logger.info("%s asked to pause: %.1f s", key, pause)

    # robots.txt per origin: fetched once at a time, through the downloader.

    async def _robots_for(self, url: str) -> CachedRobots:
        key = _origin_key(url)
        robots = self._robots.get(key)
        if robots is not None and robots.is_fresh(time.monotonic()):
            self._robots[key] = self._robots.pop(key)  # the most recently used go last
            return robots
        if key in self._waiting:
            from scrapy.utils.defer import maybe_deferred_to_future
            from twisted.internet.defer import Deferred

            waiter: Deferred[CachedRobots] = Deferred()
            self._waiting[key].append(waiter)
            result: CachedRobots = await maybe_deferred_to_future(waiter)
            return result
        if robots is None:
            robots = CachedRobots(url)
            self._robots[key] = robots
        self._waiting[key] = []
        try:
            await self._retrieve(robots)
        finally:
            for waiter in self._waiting.pop(key):
                waiter.callback(robots)
            self._account(key, robots)
        return robots

    def _account(self, key: tuple[str, str, int], robots: CachedRobots) -> None:
        """Counts what `robots` holds now (its copy, and the views compiled from it so far), then
        keeps at most ``ROBOTSTXT_CACHE_ORIGINS`` origins and ``ROBOTSTXT_CACHE_BYTES`` bytes,
        the oldest going first (never `key`, nor an origin being fetched). A copy no longer kept
        (dropped while its request waited) is not counted: its bytes go with the request."""
        if self._robots.get(key) is not robots:
            return
        size = robots.heap_bytes
        self._bytes += size - self._sizes.get(key, 0)
        self._sizes[key] = size
        while len(self._robots) > self._max_origins or self._bytes > self._max_bytes:
            oldest = next((k for k in self._robots if k != key and k not in self._waiting), None)
            if oldest is None:
                break
            del self._robots[oldest]
            self._bytes -= self._sizes.pop(oldest, 0)

    async def _retrieve(self, robots: CachedRobots) -> None:
        from scrapy import Request
        from scrapy.exceptions import IgnoreRequest

        retrieval = robots.retrieval()
        headers = dict(robots.request_headers()) if retrieval.conditional else {}
        next_url: str | None = retrieval.url
        while next_url is not None:
            request = Request(
                next_url,
                headers=headers,
                priority=self.DOWNLOAD_PRIORITY,
                dont_filter=True,
                meta={
                    "dont_obey_robotstxt": True,
                    "dont_redirect": True,
                    "dont_retry": True,
                    "handle_httpstatus_all": True,
                    "allow_offsite": True,
                    _BODY_BYTES_SEEN: 0,
                },
                callback=_no_callback(),
            )
            self.stats.inc_value("robotstxt/request_count")
            try:
                response = await self._download(request)
            except Exception as error:
                if not isinstance(error, IgnoreRequest):
                    self.stats.inc_value(f"robotstxt/exception_count/{type(error)}")
                retrieval.fail(error)
                break
            self.stats.inc_value("robotstxt/response_count")
            self.stats.inc_value(f"robotstxt/response_status_count/{response.status}")
            next_url = retrieval.answer(response.status, response.headers, response.body)
            if next_url is not None:
                # A redirect judged by its text above; now by the address it would connect to,
                # failing closed (a name that does not resolve now may answer an internal
                # address at the connection: judged as the unspecified address).
                host = host_of(next_url)
                if not is_literal(host):
                    address = await self._resolve(host)
                    if retrieval.refuse_hop_into([address or "0.0.0.0"]):
                        self.stats.inc_value("robotstxt/refused/address")
                        break
        robots.update(retrieval, time.monotonic())
        self.stats.inc_value(f"robotstxt/outcome/{robots.outcome}")
        if robots.outcome == "unreachable":
            logger.info("robots.txt of %s unreachable (%s): rules %s", robots.origin, robots.error, robots.rules)

    async def _download(self, request: Any) -> Any:
        engine = self.crawler.engine
        if hasattr(engine, "download_async"):
            return await engine.download_async(request)
        from scrapy.utils.defer import maybe_deferred_to_future

        return await maybe_deferred_to_future(engine.download(request))


def _origin_key(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return (parts.scheme, (parts.hostname or "").lower(), port)


# The least delay between two requests to one server (see `RobotsTxtMiddleware._pace`).
_LEAST_DELAY = 0.001


def _no_callback() -> Any:
    try:
        from scrapy.http.request import NO_CALLBACK

        return NO_CALLBACK
    except ImportError:  # Scrapy before 2.8.
        return None


def _call_later(delay: float, function: Any, *args: Any) -> Any:
    try:
        from scrapy.utils.asyncio import call_later

        return call_later(delay, function, *args)
    except ImportError:  # Scrapy before 2.14.
        from twisted.internet import reactor

        return cast(Any, reactor).callLater(delay, function, *args)


_extractor: Any = None


def _registrable_domain(host: str) -> str:
    """The registrable domain by the Public Suffix List (tldextract's bundled copy, never
    fetched), or the host itself for an IP address or a name with no public suffix."""
    global _extractor
    if not host or host.replace(".", "").isdigit() or ":" in host:
        return host
    if _extractor is None:
        import tldextract

        _extractor = tldextract.TLDExtract(suffix_list_urls=(), include_psl_private_domains=True)
    parts = _extractor(host)
    domain = getattr(parts, "top_domain_under_public_suffix", None) or parts.registered_domain
    return str(domain or host)
