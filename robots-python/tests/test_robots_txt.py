"""RobotsTxt as a Python user calls it: Google's verdicts, the deciding rule, the records, lint,
and what Python objects look like (types, equality, pickling, repr)."""

from __future__ import annotations

import pickle

import pytest
import robots_core
from robots_core import Diagnostic, RequestRate, RobotsTxt, Rule, Verdict, product_token, user_agent_token

SHOP = b"""\
# A shop's robots.txt
User-agent: *
Disallow: /cart
Disallow: /*?sort=
Allow: /cart/help
Crawl-delay: 4
Request-rate: 3/1m

User-agent: ShopBot
User-agent: PriceBot
Disallow: /prices$

Sitemap: https://shop.example/sitemap.xml
Sitemap: /relative.xml
"""


@pytest.fixture
def shop() -> RobotsTxt:
    return RobotsTxt.parse(SHOP)


def test_bytes_and_str_bodies_parse_alike():
    as_bytes = RobotsTxt.parse(SHOP)
    as_str = RobotsTxt.parse(SHOP.decode())
    for url in ["https://shop.example/cart/1", "https://shop.example/cart/help", "https://shop.example/"]:
        assert as_bytes.check(url, "FooBot") == as_str.check(url, "FooBot")
    assert RobotsTxt(SHOP).sitemaps == as_bytes.sitemaps


@pytest.mark.parametrize("body", [None, 42, 1.5, ["User-agent: *"], bytearray(b"x"), memoryview(b"x"), object()])
def test_a_body_that_is_neither_bytes_nor_str_is_a_type_error(body):
    with pytest.raises(TypeError, match="body must be bytes or str"):
        RobotsTxt.parse(body)


def test_the_longest_rule_decides_and_an_allow_wins_a_tie(shop):
    assert not shop.can_fetch("https://shop.example/cart/42", "FooBot")
    assert shop.can_fetch("https://shop.example/cart/help/returns", "FooBot")
    tie = RobotsTxt.parse(b"User-agent: *\nDisallow: /page\nAllow: /page\n")
    assert tie.can_fetch("https://e.example/page", "FooBot")
    assert tie.check("https://e.example/page", "FooBot").rule.line == 3


def test_check_names_the_deciding_rule(shop):
    verdict = shop.check("https://shop.example/shoes?sort=price", "FooBot")
    assert verdict.allowed is False
    assert (verdict.rule.line, verdict.rule.kind, verdict.rule.pattern) == (4, "disallow", "/*?sort=")
    allowed = shop.check("https://shop.example/cart/help", "FooBot")
    assert (allowed.allowed, allowed.rule.line, allowed.rule.kind) == (True, 5, "allow")
    nothing = shop.check("https://shop.example/shoes", "FooBot")
    assert nothing.allowed is True and nothing.rule is None


def test_a_named_group_replaces_the_star_group(shop):
    # ShopBot's group says nothing about /cart, and the * group no longer applies to it.
    assert shop.can_fetch("https://shop.example/cart/1", "ShopBot")
    assert not shop.can_fetch("https://shop.example/prices", "PriceBot")
    # `$` anchors the end: /prices/old is not /prices.
    assert shop.can_fetch("https://shop.example/prices/old", "PriceBot")


def test_agents_match_as_google_matches_them(shop):
    # Case-insensitive product tokens; a full User-Agent is reduced to its token.
    for agent in [
        "shopbot",
        "SHOPBOT",
        "ShopBot/3.1 (+https://shop.example/bot)",
        "Mozilla/5.0 (compatible; ShopBot/3.1; +https://shop.example/bot)",
        b"ShopBot/3.1",
    ]:
        assert shop.check("https://shop.example/cart/1", agent).allowed, agent
    # No substring matching: Shop is not ShopBot, ShopBotX is not ShopBot.
    for agent in ["Shop", "ShopBotX", "MyShopBot"]:
        assert not shop.can_fetch("https://shop.example/cart/1", agent), agent


def test_product_token_reduces_a_user_agent_as_the_cli_does():
    assert robots_core.product_token("FooBot") == "FooBot"
    assert robots_core.product_token("FooBot/2.1 (+https://foo.example/bot)") == "FooBot"
    assert robots_core.product_token("Mozilla/5.0 (compatible; FooBot/2.1; +https://foo.example)") == "FooBot"
    assert robots_core.product_token(b"Googlebot-Image/1.0") == "Googlebot-Image"
    assert robots_core.product_token("AB42bot/1.0") == "AB"
    assert robots_core.product_token("") == ""
    with pytest.raises(TypeError, match="user_agent must be str or bytes"):
        robots_core.product_token(7)


def test_urls_are_taken_as_given():
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /private\nDisallow: /%7Euser\nDisallow: /?\n")
    # Dot segments are not removed, and percent-encoding is not decoded (Google's library).
    assert robots.can_fetch("https://e.example/a/../private", "FooBot")
    assert robots.can_fetch("https://e.example/~user", "FooBot")
    assert not robots.can_fetch("https://e.example/%7Euser/x", "FooBot")
    # A URL without a path is `/`, and its query follows it.
    assert not robots.can_fetch("https://e.example?q", "FooBot")
    assert robots.can_fetch("https://e.example", "FooBot")


def test_robots_txt_itself_is_checked_like_any_path():
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /\n")
    assert not robots.can_fetch("https://e.example/robots.txt", "FooBot")


def test_an_empty_or_missing_file_allows_everything():
    for body in [b"", "", b"\n\n# only a comment\n", b"User-agent: *\nDisallow:\n"]:
        robots = RobotsTxt.parse(body)
        assert robots.can_fetch("https://e.example/anything", "FooBot")
        assert robots.check("https://e.example/anything", "FooBot").rule is None


def test_first_checks_compile_nothing_and_a_deep_crawl_compiles_the_view_once():
    robots = RobotsTxt.parse(SHOP)
    before = robots.heap_bytes
    first = robots.check("https://shop.example/cart/x", "FooBot")
    # What the crawler's groups say besides rules needs no compiled view either.
    scanned = (robots.crawl_delay("FooBot"), robots.request_rate("FooBot"), robots.records("FooBot"))
    after_first = robots.heap_bytes
    # The first check keeps the crawler's choice of groups (a few dozen bytes), and so do the
    # next ones, for another string of the same token too (one more entry).
    assert after_first - before < 200
    second = robots.check("https://shop.example/cart/x", "FooBot/2.1")
    assert first == second and not first.allowed and first.rule == Rule(3, "disallow", "/cart")
    scanning = robots.heap_bytes
    for _ in range(10):
        assert robots.check("https://shop.example/cart/x", "FooBot") == first
    assert robots.heap_bytes == scanning, "scans keep nothing"
    # A deep crawl's checks compile the view, once: it holds the rules.
    grown = []
    for _ in range(100):
        assert robots.check("https://shop.example/cart/x", "FooBot") == first
        grown.append(robots.heap_bytes - scanning)
    compiled = [g for g in grown if g > 0]
    assert compiled and compiled[0] > len("/cart/*?sort=/cart/help") and len(set(compiled)) == 1, grown
    assert (robots.crawl_delay("FooBot"), robots.request_rate("FooBot"), robots.records("FooBot")) == scanned
    assert scanned[0] == 4.0 and scanned[1] is not None and scanned[1].requests == 3
    # Every check after gives the first one's verdicts.
    for url in ["https://shop.example/cart/help", "https://shop.example/a?sort=1", "https://shop.example/"]:
        assert robots.check(url, "FooBot") == RobotsTxt.parse(SHOP).check(url, "FooBot")


def test_crawl_delay_and_request_rate_come_from_the_selected_group(shop):
    assert shop.crawl_delay("FooBot") == 4.0
    assert shop.crawl_delay("ShopBot") is None
    rate = shop.request_rate("FooBot")
    assert isinstance(rate, RequestRate)
    assert (rate.requests, rate.seconds, rate.line, rate.interval) == (3, 60.0, 7, 20.0)
    requests, seconds = rate
    assert (requests, seconds) == (3, 60.0)
    assert shop.request_rate("PriceBot") is None
    first_valid = RobotsTxt.parse(b"User-agent: *\nCrawl-delay: soon\nCrawl-delay: 0.5\nCrawl-delay: 9\n")
    assert first_valid.crawl_delay("FooBot") == 0.5


def test_sitemaps_are_every_sitemap_line_as_written(shop):
    assert shop.sitemaps == ["https://shop.example/sitemap.xml", "/relative.xml"]


def test_records_are_kept_as_written():
    robots = RobotsTxt.parse(
        b"Host: shop.example\nUser-agent: a\nVisit-time: 0600-0845\nDisallow: /a\nUser-agent: *\nClean-param: ref /\n"
    )
    assert [(r.line, r.key, r.value) for r in robots.records()] == [
        (1, "Host", "shop.example"),
        (3, "Visit-time", "0600-0845"),
        (6, "Clean-param", "ref /"),
    ]
    # For a crawler: the records before any group and those of its own groups.
    assert [r.line for r in robots.records("a")] == [1, 3]
    assert [r.line for r in robots.records("FooBot")] == [1, 6]
    # Records never end a group (Google): `b` shares `a`'s group here.
    shared = RobotsTxt.parse(b"User-agent: a\nVisit-time: 0600-0845\nUser-agent: b\nDisallow: /\n")
    assert not shared.can_fetch("https://e.example/", "a")


def test_usage_preferences_apply_to_what_may_be_fetched():
    robots = RobotsTxt.parse(
        b"User-agent: *\nDisallow: /private\nContent-Usage: train-ai=n\nContent-Usage: /open/ train-ai=y\n"
        b"Content-Signal: search=yes, ai-input=no\n"
    )
    open_data = robots.usage("https://e.example/open/data.csv", "FooBot")
    assert (open_data.allowed, open_data.train_ai, open_data.search, open_data.ai_input) == (True, True, True, False)
    other = robots.usage("https://e.example/blog", "FooBot")
    assert other.train_ai is False
    private = robots.usage("https://e.example/private/x", "FooBot")
    assert private.allowed is False and private.rule.pattern == "/private"
    assert (private.train_ai, private.search, private.ai_input) == (None, None, None)
    silent = RobotsTxt.parse(b"User-agent: *\nDisallow: /x\n").usage("https://e.example/", "FooBot")
    assert (silent.train_ai, silent.search, silent.ai_input) == (None, None, None)


def test_lint_gives_each_finding_with_its_line_and_severity():
    robots = RobotsTxt.parse(b"Disallow: /early\nUser-agent: *\nDisalow: /typo\nDisallow private\nCrawl-delay: soon\n")
    found = {(d.line, d.kind, d.severity) for d in robots.lint()}
    assert (1, "rule_before_user_agent", "error") in found
    assert (3, "typo_key", "warning") in found
    assert any(line == 5 and kind == "invalid_crawl_delay" for line, kind, _ in found)
    for diagnostic in robots.lint():
        assert isinstance(diagnostic, Diagnostic)
        assert diagnostic.severity in ("error", "warning", "info")
        assert diagnostic.message and diagnostic.fix
        assert str(diagnostic).startswith(f"line {diagnostic.line}: {diagnostic.severity}: {diagnostic.kind}: ")
    assert RobotsTxt.parse(b"User-agent: *\nDisallow: /x\n").lint() == []


def test_only_the_first_512000_bytes_are_read():
    assert robots_core.MAX_BODY_BYTES == 512_000
    head = b"User-agent: *\nDisallow: /early\n"
    filler = b"#" * (robots_core.MAX_BODY_BYTES - len(head) - 1) + b"\n"
    robots = RobotsTxt.parse(head + filler + b"Disallow: /late\n")
    assert not robots.can_fetch("https://e.example/early", "FooBot")
    assert robots.can_fetch("https://e.example/late", "FooBot")
    # lint says where reading stopped; a body of exactly the limit is whole.
    over = [d for d in robots.lint() if d.kind == "body_too_large"]
    assert [(d.line, d.severity) for d in over] == [(4, "error")]  # the line cut off
    assert not [d for d in RobotsTxt.parse(head + filler).lint() if d.kind == "body_too_large"]


def test_results_are_values():
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /x\n")
    first = robots.check("https://e.example/x", "FooBot")
    again = robots.check("https://e.example/x", "OtherBot")
    assert first == again and hash(first) == hash(again)
    assert isinstance(first.rule, Rule)
    assert repr(first) == "Verdict(allowed=False, rule=Rule(line=2, kind='disallow', pattern='/x'))"
    with pytest.raises(AttributeError):
        first.allowed = True  # type: ignore[misc]


def test_a_robots_txt_pickles_and_reprs():
    robots = RobotsTxt.parse(SHOP)
    copy = pickle.loads(pickle.dumps(robots))
    assert type(copy) is RobotsTxt
    assert copy.check("https://shop.example/cart/1", "FooBot") == robots.check("https://shop.example/cart/1", "FooBot")
    assert repr(robots) == f"<RobotsTxt {len(SHOP)} bytes, 15 lines, 2 groups>"


@pytest.mark.parametrize("method", ["can_fetch", "check", "usage"])
def test_arguments_of_other_types_are_type_errors(shop, method):
    call = getattr(shop, method)
    with pytest.raises(TypeError, match="url must be str or bytes, not int"):
        call(1, "FooBot")
    with pytest.raises(TypeError, match="user_agent must be str or bytes, not NoneType"):
        call("https://shop.example/", None)
    with pytest.raises(TypeError):
        call("https://shop.example/")  # type: ignore[call-arg]
    assert call(url="https://shop.example/cart", user_agent="FooBot") is not None


def test_every_result_object_pickles_and_copies():
    import copy

    robots = RobotsTxt.parse(
        b"User-agent: *\nDisallow: /~user\nCrawl-delay: 2\nRequest-rate: 1/5s\nContent-Usage: train-ai=n\nDisalow: /x\n"
    )
    verdict = robots.check("https://e.example/~user/a", "FooBot")
    objects = [
        verdict,
        verdict.rule,
        robots.check_resolved("https://e.example/%7Euser/", "FooBot"),
        robots.usage("https://e.example/a", "FooBot"),
        robots.request_rate("FooBot"),
        robots.records()[0],
        robots.lint()[0],
    ]
    for value in objects:
        assert value is not None
        for again in (pickle.loads(pickle.dumps(value)), copy.deepcopy(value), copy.copy(value)):
            assert type(again) is type(value) and repr(again) == repr(value), value
            if not isinstance(value, RequestRate):  # (compared by value, and not hashable: a float)
                assert again == value and hash(again) == hash(value)
    with pytest.raises(ValueError, match="'allow' or 'disallow'"):
        Rule(1, "maybe", "/x")  # type: ignore[arg-type]


@pytest.mark.parametrize("method", ["can_fetch", "check", "check_resolved", "usage"])
def test_urllibs_argument_order_is_a_type_error_that_says_the_right_one(shop, method):
    call = getattr(shop, method)
    with pytest.raises(TypeError, match=rf"call {method}\(\"https://shop.example/cart\", \"FooBot\"\)"):
        call("FooBot", "https://shop.example/cart")
    # A bare path is a URL, and an agent with a URL inside is an agent.
    call("/cart", "Mozilla/5.0 (compatible; FooBot/2.1; +https://foo.example/bot)")
    call("https://shop.example/cart", "FooBot/2.1 (+https://foo.example/bot)")


def test_an_agent_without_a_product_token_matches_no_named_group():
    # Protego's test_1996rfc_examples: `3bot` is not a name Google can match, so the `*` group
    # applies (its empty token would otherwise match `User-agent: 3bot`, whose token is empty too).
    robots = RobotsTxt.parse(b"User-agent: 3bot\nDisallow: /\n\nUser-agent: *\nAllow: /\n")
    assert robots.can_fetch("https://e.example/a%3cd.html", "3bot")
    assert robots.can_fetch("https://e.example/a", "4bot/1.0")
    assert not RobotsTxt.parse(b"User-agent: *\nDisallow: /\n").can_fetch("https://e.example/", "3bot")


def test_check_resolved_matches_served_paths_against_normalised_patterns():
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /enc/\nAllow: /enc/%62%61%7A\n")
    assert robots.check_resolved("https://e.example/enc/%62%61%7A.html", "FooBot").allowed
    assert robots.can_fetch("https://e.example/enc/%62%61%7A.html", "FooBot")
    verdict = robots.check_resolved("https://e.example/enc/baz", "FooBot")
    assert not verdict.allowed and verdict.resolved_path is None


def test_check_resolved_judges_what_the_server_serves():
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /~user\nDisallow: /private\n")
    for url, resolved in [
        ("https://e.example/%7Euser/", "/~user/"),
        ("https://e.example/%7euser/page", "/~user/page"),
        ("https://e.example/public/../private/x", "/private/x"),
        ("https://e.example/public/%2e%2e/private?q=1", "/private?q=1"),
    ]:
        assert robots.check(url, "FooBot").allowed, url  # Google's verdict on the URL as given
        verdict = robots.check_resolved(url, "FooBot")
        assert (verdict.allowed, verdict.resolved_path) == (False, resolved), url
    assert robots.check_resolved("https://e.example/~user/", "FooBot") == Verdict(
        False, Rule(2, "disallow", "/~user"), None
    )
    assert robots.check_resolved("https://e.example/open%20page", "FooBot") == Verdict(True)


def test_a_browser_style_user_agent_gives_the_bot_it_carries():
    robots = RobotsTxt.parse(b"User-agent: MyBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n")
    agent = "Mozilla/5.0 (X11; Linux x86_64) MyBot/2.1 (+https://mybot.example)"
    assert product_token(agent) == "MyBot"
    assert not robots.can_fetch("https://e.example/", agent)
    assert user_agent_token("AB42bot/1.0") == ("AB", "AB42bot")
    assert user_agent_token("Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0") == ("Mozilla", None)
