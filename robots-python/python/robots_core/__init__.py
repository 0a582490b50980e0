"""robots.txt read exactly as Google reads it.

``robots_core`` is the Python face of the Rust crate robots-core: the parser and matcher whose
verdicts are those of Google's open-source robots.txt library on every input, at many times the
speed of pure-Python parsers.

>>> from robots_core import RobotsTxt
>>> robots = RobotsTxt.parse(b"User-agent: *\\nDisallow: /private\\nAllow: /private/ok\\n")
>>> robots.can_fetch("https://example.com/private/x", "FooBot/2.1")
False
>>> robots.check("https://example.com/private/ok.html", "FooBot")
Verdict(allowed=True, rule=Rule(line=3, kind='allow', pattern='/private/ok'))

For Protego users, ``robots_core.Protego`` has Protego's names and signatures. For Scrapy,
``robots_core.scrapy.RobotsTxtMiddleware`` replaces Scrapy's robots.txt middleware with Google's
status rules and per-server pacing. ``CachedRobots`` and ``Retrieval`` are the same rules for any
other Python client: it moves the bytes, they decide.
"""

from ._robots_core import (
    DEFAULT_HOLD_UNREACHABLE,
    DISTRESS_STATUSES,
    MAX_BODY_BYTES,
    MOST_UNREACHABLE_TRIES,
    CachedRobots,
    Diagnostic,
    Record,
    RequestRate,
    Retrieval,
    RobotsTxt,
    Rule,
    Usage,
    Verdict,
    __version__,
    backoff_pause,
    hop_allowed,
    is_internal_address,
    normal_host,
    product_token,
    server_pause,
    user_agent_token,
)

__all__ = [
    "DEFAULT_HOLD_UNREACHABLE",
    "DISTRESS_STATUSES",
    "MAX_BODY_BYTES",
    "MOST_UNREACHABLE_TRIES",
    "CachedRobots",
    "Diagnostic",
    "Protego",
    "Record",
    "RequestRate",
    "Retrieval",
    "RobotsTxt",
    "Rule",
    "Usage",
    "Verdict",
    "__version__",
    "backoff_pause",
    "hop_allowed",
    "is_internal_address",
    "normal_host",
    "product_token",
    "server_pause",
    "user_agent_token",
]


def __getattr__(name: str) -> object:
    # `Protego` is imported on first use: its module needs `typing` (NamedTuple), which would
    # make `import robots_core` several times slower for everyone.
    if name == "Protego":
        from .protego import Protego

        return Protego
    raise AttributeError(f"module 'robots_core' has no attribute {name!r}")
