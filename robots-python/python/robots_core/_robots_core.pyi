"""Type stubs of the extension module (robots-core for Python)."""

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Literal, TypeVar

from typing_extensions import TypeAlias

_Text: TypeAlias = str | bytes
_HeaderValue: TypeAlias = _Text | Sequence[_Text]
# A mapping's keys are invariant: `dict[str, str]`, `dict[bytes, bytes]` and Scrapy's `Headers`
# each match one of these.
_Headers: TypeAlias = (
    Mapping[str, _HeaderValue]
    | Mapping[bytes, _HeaderValue]
    | Mapping[_Text, _HeaderValue]
    | Iterable[tuple[_Text, _Text]]
)

_T = TypeVar("_T", bound="RobotsTxt")

MAX_BODY_BYTES: int
"""How much of a body is read: 512,000 bytes (500 KiB), as Google's crawler reads."""

DISTRESS_STATUSES: tuple[int, ...]
"""The statuses that say a server is in distress: 429, 500, 502, 503 and 504."""

DEFAULT_HOLD_UNREACHABLE: float
"""How long a site's requests are held, in seconds, while its robots.txt cannot be had (60)."""

MOST_UNREACHABLE_TRIES: int
"""The most times one request waits for an unreachable robots.txt, whatever the hold (32)."""

__version__: str

def product_token(user_agent: str | bytes) -> str:
    """The product token a User-Agent is reduced to (``"Mozilla/5.0 (compatible; FooBot/2.1)"`` → ``"FooBot"``)."""

def user_agent_token(user_agent: str | bytes) -> tuple[str, str | None]:
    """The product token, and the crawler's name as written when the token cuts it short."""

def hop_allowed(from_url: str | bytes, to_url: str | bytes, to_addresses: Sequence[str] | None = None) -> bool:
    """Whether a URL a server handed on may be followed from its page (never public → internal,
    by the URLs' text and by the addresses the target's name resolves to when given)."""

def is_internal_address(address: str) -> bool:
    """Whether an IP address is loopback, private, link-local, shared or unspecified (IPv4-mapped forms too)."""

def normal_host(host: str) -> str:
    """A host name in IDNA form, lowercase, without a trailing dot (``"Evil.Test."`` → ``"evil.test"``)."""

def server_pause(status: int, headers: _Headers) -> float | None:
    """Seconds a response asks its server's client to stop (``Retry-After``, rate-limit headers), or ``None``."""

def backoff_pause(
    streak: int,
    retry_after: float | None = None,
    *,
    base: float = 5.0,
    cap: float = 300.0,
    max_retry_after: float = 600.0,
) -> float:
    """Seconds to leave a server alone after the ``streak``-th distress answer in a row."""

class Rule:
    """The rule that decided a verdict."""

    def __new__(cls, line: int, kind: Literal["allow", "disallow"], pattern: str) -> Rule: ...
    @property
    def line(self) -> int:
        """The rule's line number (1-based)."""
    @property
    def kind(self) -> Literal["allow", "disallow"]:
        """Allow or disallow."""
    @property
    def pattern(self) -> str:
        """The pattern as written."""

class Verdict:
    """Whether a crawler may fetch a URL, and the rule that decided."""

    def __new__(cls, allowed: bool, rule: Rule | None = None, resolved_path: str | None = None) -> Verdict: ...
    @property
    def resolved_path(self) -> str | None:
        """The resolved path that was refused (``check_resolved``), or ``None``."""
    @property
    def allowed(self) -> bool:
        """Whether the crawler may fetch the URL."""
    @property
    def rule(self) -> Rule | None:
        """The deciding rule, or ``None`` when no rule matched."""

class Usage:
    """The crawl verdict and the AI usage preferences stated for a URL."""

    def __new__(
        cls,
        allowed: bool,
        rule: Rule | None = None,
        train_ai: bool | None = None,
        search: bool | None = None,
        ai_input: bool | None = None,
    ) -> Usage: ...
    @property
    def allowed(self) -> bool:
        """Whether the crawler may fetch the URL."""
    @property
    def rule(self) -> Rule | None:
        """The rule that decided the crawl verdict, or ``None``."""
    @property
    def train_ai(self) -> bool | None:
        """May the content train AI models (``None``: not stated)."""
    @property
    def search(self) -> bool | None:
        """May the content be used for search (``None``: not stated)."""
    @property
    def ai_input(self) -> bool | None:
        """May the content be given to AI models as input (``None``: not stated)."""

class RequestRate:
    """A ``Request-rate`` record; unpacks as ``requests, seconds``."""

    def __new__(cls, requests: int, seconds: float, line: int = 0) -> RequestRate: ...
    @property
    def requests(self) -> int:
        """How many requests…"""
    @property
    def seconds(self) -> float:
        """…per this many seconds."""
    @property
    def line(self) -> int:
        """The record's line."""
    @property
    def interval(self) -> float:
        """Seconds between request starts (``seconds / requests``)."""
    def __iter__(self) -> Iterator[int | float]: ...

class Diagnostic:
    """One lint finding."""

    def __new__(cls, line: int, kind: str, severity: str, message: str, fix: str) -> Diagnostic: ...
    @property
    def line(self) -> int:
        """Line number (1-based)."""
    @property
    def kind(self) -> str:
        """What it is about (``"missing_colon"``)."""
    @property
    def severity(self) -> Literal["error", "warning", "info"]:
        """How much it matters."""
    @property
    def message(self) -> str:
        """A sentence for people."""
    @property
    def fix(self) -> str:
        """How to fix this kind of finding."""

class Record:
    """A record other than a rule, user-agent or sitemap, as written."""

    def __new__(cls, line: int, key: str, value: str) -> Record: ...
    @property
    def line(self) -> int:
        """Line number (1-based)."""
    @property
    def key(self) -> str:
        """The key as written."""
    @property
    def value(self) -> str:
        """The value as written."""

class RobotsTxt:
    """A robots.txt, parsed once and checked for any crawler as Google's library checks it."""

    def __new__(cls: type[_T], body: bytes | str) -> _T: ...
    @classmethod
    def parse(cls: type[_T], body: bytes | str) -> _T:
        """Parses a body (``bytes`` or ``str``; the first 512,000 bytes are read)."""
    def can_fetch(self, url: str | bytes, user_agent: str | bytes) -> bool:
        """Whether ``user_agent`` may fetch ``url``."""
    def check(self, url: str | bytes, user_agent: str | bytes) -> Verdict:
        """The verdict with the rule that decided it."""
    def check_resolved(self, url: str | bytes, user_agent: str | bytes) -> Verdict:
        """The verdict for ``url`` and for every path a server resolves it to (a polite crawler's)."""
    def usage(self, url: str | bytes, user_agent: str | bytes) -> Usage:
        """The verdict and the AI usage preferences for ``url``."""
    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        """The ``Crawl-delay`` in seconds, or ``None``."""
    def request_rate(self, user_agent: str | bytes) -> RequestRate | None:
        """The ``Request-rate``, or ``None``."""
    @property
    def sitemaps(self) -> list[str]:
        """The ``Sitemap`` URLs, in file order."""
    def records(self, user_agent: str | bytes | None = None) -> list[Record]:
        """Records other than rules, user-agents and sitemaps (all, or those for ``user_agent``)."""
    def lint(self) -> list[Diagnostic]:
        """The file's lint diagnostics."""
    @property
    def line_count(self) -> int:
        """The number of lines in the body read."""
    @property
    def heap_bytes(self) -> int:
        """Heap bytes held: the body, its parse and the views compiled so far."""
    def __reduce__(self) -> tuple[type, tuple[bytes]]: ...

class Retrieval:
    """One retrieval of an origin's robots.txt, without I/O."""

    @property
    def url(self) -> str:
        """The URL to request now."""
    @property
    def conditional(self) -> bool:
        """Whether the request carries the kept copy's validators."""
    def answer(self, status: int, headers: _Headers, body: bytes | str | None = None) -> str | None:
        """Gives the response; returns the next URL to request, or ``None`` when over."""
    def refuse_hop_into(self, addresses: Sequence[str]) -> bool:
        """Judges the redirect just returned by its target's addresses; whether it was refused."""
    def fail(self, error: object) -> None:
        """The request failed below HTTP."""
    @property
    def outcome(self) -> Literal["parsed", "not_modified", "unavailable", "unreachable"] | None:
        """The outcome once over, else ``None``."""
    @property
    def status(self) -> int | None:
        """The last status answered."""
    @property
    def error(self) -> str | None:
        """Why robots.txt was unreachable, or ``None``."""

class CachedRobots:
    """What a client holds for one origin's robots.txt between retrievals."""

    def __new__(cls, url: str | bytes, *, auth_errors_disallow: bool = False) -> CachedRobots: ...
    @property
    def origin(self) -> str:
        """The origin."""
    def retrieval(self) -> Retrieval:
        """A new retrieval of this origin's robots.txt."""
    def request_headers(self) -> list[tuple[str, str]]:
        """The validators a conditional refresh sends."""
    def update(self, retrieval: Retrieval, now: float) -> None:
        """Takes a finished retrieval's outcome at time ``now``."""
    @property
    def rules(self) -> Literal["none", "parsed", "allow_all", "disallow_all"]:
        """Whose rules apply."""
    @property
    def robots(self) -> RobotsTxt | None:
        """The parsed robots.txt whose rules apply, or ``None``."""
    @property
    def refresh_at(self) -> float | None:
        """When to retrieve robots.txt again, on the caller's clock."""
    def is_fresh(self, now: float) -> bool:
        """Whether the rules held are still to be used at ``now``."""
    def unreachable_for(self, now: float) -> float | None:
        """How long robots.txt has been unreachable at ``now``, in seconds, from the first
        failure of this outage; ``None`` when the last retrieval had an answer."""
    def waits_for_robots(self, now: float, hold: float) -> bool:
        """Whether a request refused at ``now`` because robots.txt is unreachable waits for its
        next retrieval (``True``) or is given up: it waits when that retrieval comes within
        ``hold`` seconds of the outage's start (the Rust crawl loop's rule)."""
    @property
    def heap_bytes(self) -> int:
        """Heap bytes held: the parsed copy with its views, and the validators."""
    @property
    def failures(self) -> int:
        """Unreachable retrievals in a row."""
    @property
    def outcome(self) -> Literal["parsed", "not_modified", "unavailable", "unreachable"] | None:
        """The last retrieval's outcome."""
    @property
    def status(self) -> int | None:
        """The last retrieval's final status."""
    @property
    def retry_after(self) -> float | None:
        """The ``Retry-After`` the last unreachable answer asked for."""
    @property
    def redirected_to(self) -> str | None:
        """Where the parsed file was found after redirects."""
    @property
    def error(self) -> str | None:
        """Why the last retrieval found robots.txt unreachable."""
    def check(self, url: str | bytes, user_agent: str | bytes) -> Verdict:
        """The verdict a polite crawler acts on for ``url``."""
