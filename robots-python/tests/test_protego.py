"""``robots_core.Protego``: Protego's public names and signatures, Google's verdicts. The
differences the package README lists are run here against both, row by row, so the list stays
true."""

from __future__ import annotations

import inspect
import pickle
import re
from datetime import time
from pathlib import Path

import pytest
from robots_core import Protego, RobotsTxt
from robots_core.protego import RequestRate, VisitTime

protego = pytest.importorskip("protego")

README = Path(__file__).resolve().parents[1] / "README.md"

BODY = """\
Host: mirror.example
User-agent: *
Disallow: /private
Allow: /private/open
Crawl-delay: 2
Crawl-delay: 7
Request-rate: 3/1m 0600-0845
Visit-time: 0100-0445
Visit-time: 2200-2300

Sitemap: https://e.example/a.xml
Sitemap: https://e.example/b.xml
Host: other.example
"""


def readme_differences() -> list[tuple[str, str, str, str, bool, bool]]:
    """The rows of the README's table of differences from Protego."""
    text = README.read_text()
    section = text.split("### Where it differs from Protego", 1)[1]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 6 or cells[0] in ("Difference", "---"):
            continue
        what, body, url, agent, theirs, ours = cells
        unquote = lambda cell: re.fullmatch(r"`(.*)`", cell).group(1)  # noqa: E731
        rows.append(
            (
                what,
                unquote(body).replace("\\n", "\n"),
                unquote(url),
                unquote(agent),
                theirs == "allowed",
                ours == "allowed",
            )
        )
    return rows


def test_the_readme_lists_differences():
    assert len(readme_differences()) >= 8


@pytest.mark.parametrize("row", readme_differences(), ids=lambda row: row[0])
def test_each_listed_difference_is_real(row):
    what, body, url, agent, theirs, ours = row
    assert protego.Protego.parse(body).can_fetch(url, agent) is theirs, f"Protego: {what}"
    assert Protego.parse(body).can_fetch(url, agent) is ours, f"robots_core: {what}"
    assert RobotsTxt.parse(body.encode()).can_fetch(url, agent) is ours


def test_protego_s_public_names_and_signatures_are_all_here():
    public = {name for name in vars(protego.Protego) if not name.startswith("_")}
    assert public <= set(dir(Protego)), public - set(dir(Protego))
    for name in public:
        theirs = getattr(protego.Protego, name)
        if isinstance(theirs, property):
            assert isinstance(inspect.getattr_static(Protego, name), property), name
            continue
        expected = [p for p in inspect.signature(theirs).parameters if p != "self"]
        given = [p for p in inspect.signature(getattr(Protego, name)).parameters if p != "self"]
        assert given == expected, name


def test_where_protego_agrees_the_answers_are_the_same():
    ours, theirs = Protego.parse(BODY), protego.Protego.parse(BODY)
    for url in [
        "https://e.example/",
        "https://e.example/private",
        "https://e.example/private/open/x",
        "https://e.example/public?q=1",
        "https://e.example/privateer",
    ]:
        for agent in ["FooBot", "Mozilla/5.0 (compatible; FooBot/2.1; +https://foo.example)"]:
            assert ours.can_fetch(url, agent) == theirs.can_fetch(url, agent), (url, agent)
    assert list(ours.sitemaps) == list(theirs.sitemaps)
    assert ours.request_rate("FooBot") == theirs.request_rate("FooBot")


def test_records_take_the_first_valid_value():
    robots = Protego.parse(BODY)
    assert robots.crawl_delay("FooBot") == 2.0
    assert robots.request_rate("FooBot") == RequestRate(3, 60, time(6, 0), time(8, 45))
    assert robots.visit_time("FooBot") == VisitTime(time(1, 0), time(4, 45))
    assert robots.preferred_host == "mirror.example"
    sitemaps = robots.sitemaps
    assert iter(sitemaps) is sitemaps
    assert list(sitemaps) == ["https://e.example/a.xml", "https://e.example/b.xml"]


def test_records_protego_cannot_read_are_none():
    robots = Protego.parse("User-agent: *\nRequest-rate: 1/10s 9999-0000\nVisit-time: soon\nVisit-time: 25:00-26:00\n")
    assert robots.request_rate("FooBot") == RequestRate(1, 10, None, None)
    assert robots.visit_time("FooBot") is None
    assert Protego.parse("User-agent: *\nVisit-time: 0600 0845\n").visit_time("x") == VisitTime(time(6, 0), time(8, 45))
    empty = Protego.parse("")
    assert (empty.request_rate("x"), empty.visit_time("x"), empty.preferred_host, list(empty.sitemaps)) == (
        None,
        None,
        None,
        [],
    )


def test_a_protego_is_a_robots_txt():
    robots = Protego.parse(BODY.encode())
    assert isinstance(robots, RobotsTxt)
    assert robots.check("https://e.example/private", "FooBot").rule.line == 3
    copy = pickle.loads(pickle.dumps(robots))
    assert type(copy) is Protego and copy.preferred_host == "mirror.example"
    with pytest.raises(TypeError):
        Protego.parse(None)  # type: ignore[arg-type]
