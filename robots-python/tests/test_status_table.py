"""Spec section 7's table (robots-fetch/tests/data/status-table.tsv), row by row, through the
binding of robots-fetch's sans-I/O steps that the Scrapy middleware drives: the same rows the
Rust test runs, so both sides apply one table."""

from __future__ import annotations

from pathlib import Path

import pytest
from robots_core import CachedRobots

TABLE = Path(__file__).parents[2] / "robots-fetch" / "tests" / "data" / "status-table.tsv"


def rows() -> list[list[str]]:
    if not TABLE.exists():  # The table is the workspace's; a copy of the tests alone skips.
        pytest.skip(f"{TABLE} is not here (the tests run from the workspace)")
    lines = [line for line in TABLE.read_text().splitlines() if line and not line.startswith("#")]
    return [line.split("\t") for line in lines[1:]]


def retrieve(robots: CachedRobots, text: str, now: float) -> None:
    """One retrieval: ``network``, or responses separated by ``>``."""
    retrieval = robots.retrieval()
    if text == "network":
        retrieval.fail(ConnectionRefusedError("connection refused"))
    else:
        for response in text.split(">"):
            status, *headers = response.split(";")
            pairs = [tuple(header.split("=", 1)) for header in headers]
            assert retrieval.url, "ended early"
            following = retrieval.answer(int(status), pairs, b"")
            if following is None:
                break
        assert retrieval.outcome is not None, f"`{text}` ends on a redirect"
    robots.update(retrieval, now)


def test_every_row_of_the_status_table_holds():
    table = rows()
    assert len(table) >= 30
    for row in table:
        before, answer, rules, lives, failures = row
        robots = CachedRobots("https://example.com")
        now = 1_000.0
        for earlier in before.split():
            retrieve(robots, earlier, now)
            assert robots.refresh_at is not None
            now = robots.refresh_at
        kept = robots.rules
        retrieve(robots, answer, now)
        # `kept`: the rules held before this retrieval go on (a parsed copy, or a 4xx's allow all).
        expected = kept if rules == "kept" else rules
        assert kept != "none" or rules != "kept", row
        assert robots.rules == expected, row
        assert robots.refresh_at is not None
        assert (robots.refresh_at - now, robots.failures) == (float(lives), int(failures)), row


def test_an_unreachable_robots_txt_holds_its_requests_for_the_hold_then_not():
    """The Rust crawl loop's rule, as the Scrapy middleware asks it: a request waits for
    robots.txt's next try only when it comes within the hold of the outage's start."""
    robots = CachedRobots("https://example.com")
    retrieve(robots, "200", 0.0)
    assert robots.unreachable_for(10.0) is None
    assert not robots.waits_for_robots(10.0, 60.0)
    # A 503 at 100 s: tried again at 110 s, within the minute.
    retrieve(robots, "503", 100.0)
    assert robots.unreachable_for(104.0) == 4.0
    assert robots.waits_for_robots(104.0, 60.0)
    # Down again at 110 s: the next try, at 170 s, is 70 s after the outage began.
    retrieve(robots, "503", 110.0)
    assert robots.refresh_at == 170.0
    assert robots.unreachable_for(110.0) == 10.0
    assert not robots.waits_for_robots(110.0, 60.0)
    assert robots.waits_for_robots(110.0, 3600.0)
    assert robots.waits_for_robots(110.0, float("inf"))
    # An answer ends the outage.
    retrieve(robots, "200", 170.0)
    assert robots.unreachable_for(171.0) is None
    with pytest.raises(ValueError):
        robots.waits_for_robots(171.0, float("nan"))
