"""Type stubs of the extension module (robots-core for Python)."""

from collections.abc import Iterator
from typing import Literal, TypeVar

_T = TypeVar("_T", bound="RobotsTxt")

MAX_BODY_BYTES: int
"""How much of a body is read: 512,000 bytes (500 KiB), as Google's crawler reads."""

__version__: str

def product_token(user_agent: str | bytes) -> str:
    """The product token a User-Agent is reduced to (``"Mozilla/5.0 (compatible; FooBot/2.1)"`` → ``"FooBot"``)."""

class Rule:
    """The rule that decided a verdict."""

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

    @property
    def allowed(self) -> bool:
        """Whether the crawler may fetch the URL."""
    @property
    def rule(self) -> Rule | None:
        """The deciding rule, or ``None`` when no rule matched."""

class Usage:
    """The crawl verdict and the AI usage preferences stated for a URL."""

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
    def __reduce__(self) -> tuple[type, tuple[bytes]]: ...
