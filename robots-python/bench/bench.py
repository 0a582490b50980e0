"""Speed of robots_core against Protego and urllib.robotparser, in one run, on the corpus.

    ROBOTS_CORPUS=../shared/corpus/robots python bench/bench.py [--rounds 5]

(run from robots-python/, in an environment with robots_core and protego installed, such as
the one `run-tests` makes: ../target/python/test/bin/python). Every corpus file is cut at
512,000 bytes, as a crawler reads it. Rounds are interleaved (round 1 of every parser, then
round 2…) so that load on the machine hits all alike; each figure is the median of the rounds
with the smallest and largest, and each ratio is computed per round, then summarised the same
way; a first round, not counted, warms up.

- parse: every file parsed once; MB/s of bodies. robots_core takes the bytes as fetched;
  Protego and urllib.robotparser take `str`, decoded beforehand (decoding not timed for them).
- first check: one `can_fetch` per file for a crawler that has not asked yet, which robots_core
  answers by a scan of the file's rules (Protego picks and memoises the crawler's group then);
  µs per file.
- can_fetch: then URLs made from each file's own rules (as the differential test makes them,
  up to 15 a file) checked for that crawler, full URLs, the Python call included (robots_core
  compiles the crawler's view at the first of them); ns per call.
  Two crawlers: a product token, and a full User-Agent as Scrapy sends it.
- broad crawl: what a crawl of many sites asks of each robots.txt: the file parsed, then 8 of its
  URLs checked for 2 crawlers (a product token and a full User-Agent), first checks included,
  as `RobotsTxt.parse` and `can_fetch` are called by a crawler that meets each site once;
  µs a file, and ns a `can_fetch` (the parse apart).
- hostile: files built so that no rule matches and every one must be tried, the very files of
  the Rust core benchmark (`adversarial`: 15,000 rules `/*a*Y*X*Y*X*Y*z$` against a path of
  runs of every letter; `runs`: 2,400 rules of 96 `*a` segments against 2,000 `a`s), and a
  10 MB body: parse (ms), first check (ms) and a later check (µs), robots_core and Protego
  (urllib.robotparser reads no wildcards).
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import statistics
import sys
import time
import urllib.robotparser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import protego  # noqa: E402
import robots_core  # noqa: E402
from corpus import corpus_dir, corpus_files  # noqa: E402
from test_differential import urls_for as rule_urls  # noqa: E402  (the differential test's URLs)

URLS_PER_FILE = 15
AGENTS = {"token": "FooBot", "full User-Agent": "Scrapy/2.13 (+https://scrapy.org)"}


def urls_for(body: bytes) -> list[str]:
    return rule_urls(body)[:URLS_PER_FILE]


def parse_all(name: str, bodies: list[bytes], texts: list[str]) -> tuple[float, list]:
    start = time.perf_counter()
    if name == "robots_core":
        parsed = [robots_core.RobotsTxt.parse(body) for body in bodies]
    elif name == "Protego":
        parsed = [protego.Protego.parse(text) for text in texts]
    else:
        parsed = []
        for text in texts:
            parser = urllib.robotparser.RobotFileParser()
            parser.parse(text.splitlines())
            parsed.append(parser)
    return time.perf_counter() - start, parsed


def first_checks(name: str, parsed: list, agent: str) -> float:
    start = time.perf_counter()
    if name == "urllib.robotparser":
        for parser in parsed:
            parser.can_fetch(agent, "https://site.example/")
    else:
        for parser in parsed:
            parser.can_fetch("https://site.example/", agent)
    return time.perf_counter() - start


def check_all(name: str, parsed: list, urls: list[list[str]], agent: str) -> tuple[float, int]:
    calls = 0
    start = time.perf_counter()
    if name == "urllib.robotparser":
        for parser, file_urls in zip(parsed, urls):
            can_fetch = parser.can_fetch
            for url in file_urls:
                can_fetch(agent, url)
            calls += len(file_urls)
    else:
        for parser, file_urls in zip(parsed, urls):
            can_fetch = parser.can_fetch
            for url in file_urls:
                can_fetch(url, agent)
            calls += len(file_urls)
    return time.perf_counter() - start, calls


BROAD_URLS = 8


def broad_crawl(name: str, bodies: list[bytes], texts: list[str], urls: list[list[str]]) -> tuple[float, float]:
    """Seconds to parse every file, and seconds of `can_fetch` on them, for 8 URLs x 2 crawlers
    a file on freshly parsed files (each crawler's first check included)."""
    agents = list(AGENTS.values())
    parsing = checking = 0.0
    for body, text, file_urls in zip(bodies, texts, urls):
        start = time.perf_counter()
        if name == "robots_core":
            parser = robots_core.RobotsTxt.parse(body)
        else:
            parser = protego.Protego.parse(text)
        parsed = time.perf_counter()
        can_fetch = parser.can_fetch
        for agent in agents:
            for url in file_urls[:BROAD_URLS]:
                can_fetch(url, agent)
        done = time.perf_counter()
        parsing += parsed - start
        checking += done - parsed
    return parsing, checking


class XorShift:
    """The Rust benchmark's generator (xorshift64, same seed), so that the hostile files are
    the very ones it times."""

    def __init__(self, seed: int) -> None:
        self.state = seed

    def letter(self, first: str, count: int) -> str:
        mask = (1 << 64) - 1
        self.state ^= (self.state << 13) & mask
        self.state ^= self.state >> 7
        self.state ^= (self.state << 17) & mask
        return chr(ord(first) + self.state % count)


def hostile_inputs() -> list[tuple[str, bytes, str]]:
    """(name, body, URL) of the hostile cases, as the Rust core benchmark builds them (its
    `random` file is generated first only to advance the generator alike), and a 10 MB body."""
    rng = XorShift(0x2545F4914F6CDD1D)
    for _ in range(15_000 * 7 + 2_000):
        rng.letter("a", 26)
    adversarial = "User-agent: *\n"
    for _ in range(15_000):
        x, y = rng.letter("a", 12), rng.letter("m", 12)
        adversarial += f"Disallow: /*a*{y}*{x}*{y}*{x}*{y}*z$\n"
    path = "/" + "".join(chr(c) * 80 for c in range(ord("a"), ord("y") + 1))
    late = path + "abcdefghijklmnopqrstuvwxy" + "z"
    runs = "User-agent: *\n"
    for _ in range(2_400):
        x, y = rng.letter("n", 13), rng.letter("b", 12)
        runs += f"Disallow: /*{x}{'*a' * 96}*{y}*{x}*a$\n"
    head = "".join(map(chr, range(ord("b"), ord("z") + 1)))
    runs_late = f"/{head}{'a' * 2000}{head[::-1]}a"
    ten_mb = ("User-agent: *\n" + "Disallow: /x/*/y*z$\n" * 600_000)[:10_000_000]
    return [
        ("adversarial-late", adversarial.encode(), "https://example.com" + late),
        ("runs-late", runs.encode(), "https://example.com" + runs_late),
        ("10 MB body", ten_mb.encode(), "https://example.com/x/" + "a" * 2000),
    ]


def hostile_rows() -> list[str]:
    """Each hostile input parsed, checked once (robots_core compiles the view then) and checked
    again, by robots_core and by Protego: the median of 5 parses and first checks, and of up to
    200 later checks (3 for Protego's slowest)."""
    rows = []
    for name, body, url in hostile_inputs():
        cells = []
        for parse, repeats in [
            (robots_core.RobotsTxt.parse, 200),
            (lambda b: protego.Protego.parse(b.decode()), 3),
        ]:
            parses, firsts = [], []
            for _ in range(5 if repeats > 3 else 1):
                start = time.perf_counter()
                robots = parse(body)
                parsed = time.perf_counter()
                robots.can_fetch(url, "FooBot")
                parses.append((parsed - start) * 1e3)
                firsts.append((time.perf_counter() - parsed) * 1e3)
            checks = []
            for _ in range(repeats):
                start = time.perf_counter()
                robots.can_fetch(url, "FooBot")
                checks.append((time.perf_counter() - start) * 1e6)
            cells.append(
                f"{statistics.median(parses):,.2f} ms / {statistics.median(firsts):,.2f} ms / "
                f"{statistics.median(checks):,.1f} µs"
            )
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


def summary(values: list[float], digits: int = 1) -> str:
    return f"{statistics.median(values):,.{digits}f} ({min(values):,.{digits}f}–{max(values):,.{digits}f})"


def main() -> None:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("--rounds", type=int, default=5)
    arguments.add_argument("--corpus", help="the corpus folder (default: ROBOTS_CORPUS)")
    options = arguments.parse_args()
    folder = corpus_dir(options.corpus)
    if folder is None:
        sys.exit("give the corpus: ROBOTS_CORPUS=../shared/corpus/robots or --corpus FOLDER")
    files = corpus_files(folder)
    bodies = [body for _, body in files]
    texts = [body.decode("utf-8", "replace") for body in bodies]
    urls = [urls_for(body) for body in bodies]
    megabytes = sum(map(len, bodies)) / 1e6
    names = ["robots_core", "Protego", "urllib.robotparser"]
    print(
        f"{len(files)} files, {megabytes:.1f} MB, {sum(map(len, urls)):,} URLs; "
        f"Python {sys.version.split()[0]}, robots_core {robots_core.__version__}, "
        f"Protego {importlib.metadata.version('protego')}; {options.rounds} rounds",
        flush=True,
    )

    speed = {name: [] for name in names}
    broad_file = {name: [] for name in names[:2]}
    broad_call = {name: [] for name in names[:2]}
    broad_calls = sum(min(len(u), BROAD_URLS) for u in urls) * len(AGENTS)
    per_call = {(name, agent): [] for name in names for agent in AGENTS}
    first = {(name, agent): [] for name in names for agent in AGENTS}
    # As timeit does: no garbage collection inside the timed loops (it would land on whichever
    # parser happens to allocate when a threshold is crossed).
    gc.disable()
    # Round 0 warms caches and allocators up and is not counted.
    for round_number in range(options.rounds + 1):
        for name in names:
            seconds, parsed = parse_all(name, bodies, texts)
            firsts, calls_ns = {}, {}
            for label, agent in AGENTS.items():
                firsts[label] = first_checks(name, parsed, agent) / len(parsed) * 1e6
                seconds_checking, calls = check_all(name, parsed, urls, agent)
                calls_ns[label] = seconds_checking / calls * 1e9
            del parsed
            gc.collect()
            if round_number == 0:
                continue
            speed[name].append(megabytes / seconds)
            if name in broad_file:
                parsing, checking = broad_crawl(name, bodies, texts, urls)
                broad_file[name].append((parsing + checking) / len(bodies) * 1e6)
                broad_call[name].append(checking / broad_calls * 1e9)
            for label in AGENTS:
                first[(name, label)].append(firsts[label])
                per_call[(name, label)].append(calls_ns[label])
        print(f"round {round_number} done", file=sys.stderr, flush=True)
    gc.enable()

    print()
    print("| | robots_core | Protego | urllib.robotparser | robots_core vs Protego | vs urllib.robotparser |")
    print("|---|---|---|---|---|---|")
    print(row("parse, MB/s", [speed[name] for name in names], 1, higher_is_faster=True))
    for label in AGENTS:
        print(row(f"first check ({label}), µs a file", [first[(name, label)] for name in names], 1))
    for label in AGENTS:
        print(row(f"can_fetch ({label}), ns a call", [per_call[(name, label)] for name in names], 0))
    # (urllib.robotparser is left out of the broad crawl: it reads neither wildcards nor `$`.)
    print(row("broad crawl: parse + 8 URLs × 2 crawlers, µs a file", list(broad_file.values()), 1, gap=True))
    print(row("broad crawl: can_fetch, first checks included, ns a call", list(broad_call.values()), 0, gap=True))
    print()
    print("| hostile input | robots_core: parse / first check / check | Protego: parse / first check / check |")
    print("|---|---|---|")
    for line in hostile_rows():
        print(line)


def row(title: str, figures: list[list[float]], digits: int, higher_is_faster: bool = False, gap: bool = False) -> str:
    """A table row: robots_core's figures, then each peer's, then how many times faster we are
    than each peer (per round, summarised). `gap`: Protego alone, urllib.robotparser's cells
    empty."""
    ours, *peers = figures
    cells = [summary(values, digits) for values in figures]
    ratios = []
    for theirs in peers:
        per_round = [(o / t if higher_is_faster else t / o) for o, t in zip(ours, theirs)]
        ratios.append(summary(per_round) + "×")
    if gap:
        cells, ratios = cells + ["–"], ratios + ["–"]
    return f"| {title} | " + " | ".join(cells + ratios) + " |"


if __name__ == "__main__":
    main()
