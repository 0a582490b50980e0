"""The Python package against the Rust crate on the shared corpus: for every file, crawler and
URL, ``RobotsTxt.check`` gives the verdict and deciding rule that ``robots check`` (the
workspace's conformance command, robots-core underneath) gives. Zero differences allowed.

The URLs are made from each file's own rules (the paths they name, a step deeper, with a query)
and a fixed set every crawler meets; the crawlers are a product token, a full User-Agent in the
`compatible` form, and a name no file has (its `*` group)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from corpus import corpus_files
from robots_core import RobotsTxt

AGENTS = [
    "Googlebot",
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    "FooBot/1.0 (+https://foo.example/bot)",
]
ORIGIN = "https://site.example"
FIXED_PATHS = [
    "/",
    "/index.html",
    "/robots.txt",
    "/search?q=robots",
    "/%7Euser/",
    "/~user/",
    "/a/../admin/",
    "/wp-admin/admin-ajax.php",
    "/?s=x",
    "/cart;jsessionid=1",
    "/caf\u00e9",
    "/%E2%82%AC/",
    "/images/logo.png",
    "/api/v1/items?page=2&sort=asc",
]
RULE = re.compile(rb"^[ \t]*(?:dis)?allow[ \t]*:?[ \t]*(\S+)", re.IGNORECASE | re.MULTILINE)
RULES_PER_FILE = 40


def urls_for(body: bytes) -> list[str]:
    paths = list(FIXED_PATHS)
    for match in list(RULE.finditer(body))[:RULES_PER_FILE]:
        pattern = match.group(1).decode("utf-8", "replace")
        base = pattern.replace("*", "x").rstrip("$")
        if not base.startswith("/"):
            base = "/" + base
        paths += [base, base + "x", base.rstrip("/") + "/deeper?q=1"]
    urls = []
    for path in dict.fromkeys(paths):
        # `robots check` reads one URL a line, trimmed.
        if not any(c.isspace() or ord(c) < 32 for c in path):
            urls.append(ORIGIN + path)
    return urls


def rust_verdicts(robots_bin: Path, file: Path, agent: str, urls: list[str]) -> dict[str, tuple]:
    run = subprocess.run(
        [str(robots_bin), "check", "--robots", str(file), "--user-agent", agent, "--format", "json"],
        input="\n".join(urls).encode(),
        capture_output=True,
        check=False,
    )
    assert run.returncode in (0, 1), f"{file.name}: robots check failed: {run.stderr.decode(errors='replace')}"
    verdicts = {}
    for line in run.stdout.decode().splitlines():
        answer = json.loads(line)
        rule = answer["rule"]
        verdicts[answer["url"]] = (
            answer["allowed"],
            None if rule is None else (rule["line"], rule["kind"], rule["pattern"]),
        )
    return verdicts


def test_python_and_rust_agree_on_the_corpus(corpus: Path, robots_bin: Path):
    files = corpus_files(corpus)
    assert len(files) > 1_000, f"only {len(files)} files in {corpus}"

    def compare(item: tuple[str, bytes]) -> tuple[int, list[str]]:
        name, body = item
        robots = RobotsTxt.parse(body)
        urls = urls_for(body)
        compared, differences = 0, []
        for agent in AGENTS:
            rust = rust_verdicts(robots_bin, corpus / name, agent, urls)
            assert len(rust) == len(urls), f"{name}: robots check answered {len(rust)} of {len(urls)} URLs"
            for url in urls:
                verdict = robots.check(url, agent)
                ours = (
                    verdict.allowed,
                    None if verdict.rule is None else (verdict.rule.line, verdict.rule.kind, verdict.rule.pattern),
                )
                if ours != rust[url]:
                    differences.append(f"{name} {agent!r} {url}: Python {ours}, Rust {rust[url]}")
                if robots.can_fetch(url, agent) != verdict.allowed:
                    differences.append(f"{name} {agent!r} {url}: can_fetch disagrees with check")
                # A file's first check for a crawler is answered by a scan, the later ones by
                # the compiled view: a fresh copy's first check is the scan's verdict.
                if RobotsTxt.parse(body).check(url, agent) != verdict:
                    differences.append(f"{name} {agent!r} {url}: a first check (scan) disagrees")
                compared += 1
        return compared, differences

    compared, differences = 0, []
    with ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as pool:
        for count, found in pool.map(compare, files):
            compared += count
            differences += found
    assert not differences, f"{len(differences)} differences, first: " + "\n".join(differences[:20])
    assert compared > 100_000, f"only {compared} verdicts compared"
    print(f"{compared} verdicts on {len(files)} files, 0 differences")
