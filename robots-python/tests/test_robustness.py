"""Whatever a site or a caller gives never crashes the interpreter: bytes that are not UTF-8,
NUL bytes, a 10 MB body, patterns built to be slow, strings Python allows but UTF-8 does not,
and arguments of the wrong type."""

from __future__ import annotations

import random

import pytest
from robots_core import MAX_BODY_BYTES, RobotsTxt


def test_bytes_that_are_not_utf8_are_read_as_bytes():
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /caf\xe9\nDisallow: /\xff\xfe\x80\n")
    assert not robots.can_fetch("https://e.example/caf%E9", "FooBot")
    assert robots.can_fetch("https://e.example/cafe", "FooBot")
    verdict = robots.check("https://e.example/caf%E9/x", "FooBot")
    assert verdict.rule.pattern == "/caf\ufffd"  # shown with U+FFFD, matched as bytes
    assert any(d.kind == "not_utf8" for d in robots.lint())


def test_nul_bytes_do_not_end_the_body():
    robots = RobotsTxt.parse(b"User-agent: *\x00\nDisallow: /a\x00b\nDisallow: /after\n")
    assert not robots.can_fetch("https://e.example/after", "FooBot")
    assert any(d.kind == "nul_byte" for d in robots.lint())


def test_a_10_mb_body_is_cut_at_the_limit():
    body = (b"User-agent: *\n" + b"Disallow: /x/*/y*z$\n" * 600_000)[:10_000_000]
    assert len(body) == 10_000_000
    robots = RobotsTxt.parse(body)
    assert not robots.can_fetch("https://e.example/x/a/yaz", "FooBot")
    assert robots.can_fetch("https://e.example/elsewhere", "FooBot")
    assert len(pickle_body(robots)) == MAX_BODY_BYTES + 1


def pickle_body(robots: RobotsTxt) -> bytes:
    _, (body,) = robots.__reduce__()
    return body


def test_a_10_mb_line_and_a_10_mb_url():
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /" + b"a" * 10_000_000)
    long_url = "https://e.example/" + "a" * 10_000_000
    assert robots.can_fetch(long_url, "FooBot") in (True, False)
    assert RobotsTxt.parse(b"User-agent: *\nDisallow: /a\n").can_fetch(long_url, "FooBot") is False


def test_patterns_built_to_be_slow_are_answered():
    stars = "/" + "*a" * 5_000 + "$"
    robots = RobotsTxt.parse(f"User-agent: *\nDisallow: {stars}\nAllow: /*b*b*b*b*b*b*b*b*b*b$\n")
    url = "https://e.example/" + "a" * 100_000 + "b"
    assert robots.check(url, "FooBot").allowed is True
    assert robots.can_fetch("https://e.example/" + "a" * 6_000, "FooBot") is False


def test_strings_with_lone_surrogates_are_read_with_replacement():
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /\ud800\n")
    assert robots.can_fetch("https://e.example/\udfff", "Foo\ud800Bot") in (True, False)
    assert robots.check("https://e.example/x", "\ud800").allowed is True


@pytest.mark.parametrize("value", [None, 1, 2.5, b"x".decode, [], {}, bytearray(b"/"), memoryview(b"/")])
def test_other_types_are_type_errors_everywhere(value):
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /x\n")
    calls = [
        lambda: RobotsTxt.parse(value),
        lambda: RobotsTxt(value),
        lambda: robots.can_fetch(value, "FooBot"),
        lambda: robots.can_fetch("https://e.example/", value),
        lambda: robots.check(value, "FooBot"),
        lambda: robots.usage("https://e.example/", value),
        lambda: robots.crawl_delay(value),
        lambda: robots.request_rate(value),
        lambda: robots.records(value) if value is not None else robots.records(b"x".decode),
    ]
    for call in calls:
        with pytest.raises(TypeError):
            call()


def test_random_bodies_urls_and_agents_never_raise():
    rng = random.Random(20261127)
    alphabet = b"User-agent:Disallow:Allow:*$/?#%\n\r\t \x00\xff\xc3\xa9aZ09-_"
    for _ in range(2_000):
        body = bytes(rng.choice(alphabet) for _ in range(rng.randrange(200)))
        url = "".join(chr(rng.choice(alphabet)) for _ in range(rng.randrange(40)))
        agent = "".join(chr(rng.choice(alphabet)) for _ in range(rng.randrange(12)))
        robots = RobotsTxt.parse(body)
        verdict = robots.check(url, agent)
        assert verdict.allowed == robots.can_fetch(url, agent)
        assert verdict.allowed == (verdict.rule is None or verdict.rule.kind == "allow")
        robots.lint()
        robots.usage(url, agent)
        robots.crawl_delay(agent)
