"""Type stubs of the package (its `Protego` is imported lazily at run time). Every name is
re-exported by its `X as X` import."""

from ._robots_core import (
    DEFAULT_HOLD_UNREACHABLE as DEFAULT_HOLD_UNREACHABLE,
    DISTRESS_STATUSES as DISTRESS_STATUSES,
    MAX_BODY_BYTES as MAX_BODY_BYTES,
    MOST_UNREACHABLE_TRIES as MOST_UNREACHABLE_TRIES,
    CachedRobots as CachedRobots,
    Diagnostic as Diagnostic,
    Record as Record,
    RequestRate as RequestRate,
    Retrieval as Retrieval,
    RobotsTxt as RobotsTxt,
    Rule as Rule,
    Usage as Usage,
    Verdict as Verdict,
    __version__ as __version__,
    backoff_pause as backoff_pause,
    hop_allowed as hop_allowed,
    is_internal_address as is_internal_address,
    normal_host as normal_host,
    product_token as product_token,
    server_pause as server_pause,
    user_agent_token as user_agent_token,
)
from .protego import Protego as Protego
