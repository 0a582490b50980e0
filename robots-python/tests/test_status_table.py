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
