"""The package's types hold: `mypy --strict` accepts the package, a program that uses all of it
and every Python example of the package README, and refuses a program that passes the wrong
types."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

mypy = pytest.importorskip("mypy.api")

PROGRAM = """
from robots_core import MAX_BODY_BYTES, Protego, RobotsTxt, product_token
from robots_core.protego import RequestRate as ProtegoRate, VisitTime
from robots_core.scrapy import RobotParser

robots = RobotsTxt.parse(b"User-agent: *\\nDisallow: /x\\n")
allowed: bool = robots.can_fetch("https://e.com/x", "FooBot")
verdict = robots.check(b"https://e.com/x", b"FooBot")
line: int | None = verdict.rule.line if verdict.rule else None
delay: float | None = robots.crawl_delay("FooBot")
rate = robots.request_rate("FooBot")
if rate is not None:
    requests, seconds = rate
    interval: float = rate.interval
usage = robots.usage("https://e.com/", "FooBot")
train: bool | None = usage.train_ai
sitemaps: list[str] = robots.sitemaps
kinds: list[str] = [d.kind for d in robots.lint()]
keys: list[str] = [r.key for r in robots.records("FooBot")]
protego = Protego.parse("User-agent: *\\n")
host: str | None = protego.preferred_host
window: VisitTime | None = protego.visit_time("FooBot")
protego_rate: ProtegoRate | None = protego.request_rate("FooBot")
token: str = product_token("FooBot/1.0")
parser = RobotParser(b"")
ok: bool = parser.allowed("https://e.com/", b"FooBot")
limit: int = MAX_BODY_BYTES
"""


def check(tmp_path: Path, *targets: str) -> tuple[str, int]:
    out, err, status = mypy.run(["--strict", "--cache-dir", str(tmp_path / "cache"), *targets])
    return out + err, status


def test_the_package_type_checks(tmp_path):
    report, status = check(tmp_path, "-p", "robots_core")
    assert status == 0, report


def test_a_program_using_it_type_checks(tmp_path):
    program = tmp_path / "program.py"
    program.write_text(PROGRAM)
    report, status = check(tmp_path, str(program))
    assert status == 0, report


def test_wrong_types_are_refused(tmp_path):
    program = tmp_path / "wrong.py"
    program.write_text(
        "from robots_core import RobotsTxt\n"
        "robots = RobotsTxt.parse(42)\n"
        "robots.can_fetch(1, 'FooBot')\n"
        "delay: int = robots.crawl_delay('FooBot')\n"
    )
    report, status = check(tmp_path, str(program))
    assert status == 1
    assert report.count("error:") == 3, report


def test_the_readme_examples_type_check(tmp_path):
    """What a user pastes from the README passes `mypy --strict` as it stands (Scrapy's own
    types included)."""
    readme = Path(__file__).resolve().parents[1] / "README.md"
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), re.DOTALL)
    assert len(blocks) >= 5, blocks
    files = []
    for number, block in enumerate(blocks):
        example = tmp_path / f"readme_example_{number}.py"
        example.write_text(block)
        files.append(str(example))
    report, status = check(tmp_path, *files)
    assert status == 0, report
