"""What the documentation shows works: every docstring example (those of the Rust-made classes
too), every Python snippet of the package README (its Scrapy spider run as a user runs it,
against a local site), and the package's typing files."""

from __future__ import annotations

import doctest
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest
import robots_core
from demo_site import Site
from robots_core import protego, scrapy as scrapy_parser

PACKAGE_README = Path(__file__).resolve().parents[1] / "README.md"


def docstrings() -> list[tuple[str, str]]:
    """(name, docstring) of the package, its modules, and everything public in them."""
    found = []
    for module in (robots_core, robots_core._robots_core, protego, scrapy_parser):
        found.append((module.__name__, module.__doc__ or ""))
        for name in getattr(module, "__all__", dir(module)):
            value = getattr(module, name)
            if inspect.isclass(value) or callable(value):
                found.append((f"{module.__name__}.{name}", value.__doc__ or ""))
            if inspect.isclass(value):
                for attr, member in vars(value).items():
                    if not attr.startswith("_"):
                        found.append((f"{module.__name__}.{name}.{attr}", getattr(member, "__doc__", "") or ""))
    return [(name, doc) for name, doc in found if ">>>" in doc]


@pytest.mark.parametrize("name,doc", docstrings(), ids=[name for name, _ in docstrings()])
def test_docstring_examples_run(name, doc):
    globs = {name: getattr(robots_core, name) for name in robots_core.__all__}
    globs.update({name: getattr(scrapy_parser, name) for name in scrapy_parser.__all__})
    test = doctest.DocTestParser().get_doctest(doc, globs, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0, f"{name}: {runner.failures} example(s) failed (see output above)"


def test_the_examples_cover_the_api():
    documented = {name.rsplit(".", 1)[-1] for name, _ in docstrings()}
    for method in [
        "parse",
        "can_fetch",
        "check",
        "usage",
        "crawl_delay",
        "request_rate",
        "sitemaps",
        "records",
        "lint",
        "product_token",
        "user_agent_token",
        "server_pause",
        "check_resolved",
        "CachedRobots",
        "Retrieval",
        "describe_agent",
        "Protego",
        "RobotParser",
    ]:
        assert method in documented, f"{method} has no example in its docstring"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.DOTALL)


def test_the_package_readme_snippets_run(capsys):
    blocks = [b for b in python_blocks(PACKAGE_README.read_text()) if "CrawlerProcess" not in b]
    assert len(blocks) >= 3
    for block in blocks:
        exec(compile(block, str(PACKAGE_README), "exec"), {})
    out = capsys.readouterr().out
    assert "False 2 disallow /cart" in out
    assert "disallow_all 1 120\nFalse" in out


def test_the_readme_scrapy_spider_crawls_politely(tmp_path):
    pytest.importorskip("scrapy")
    spiders = [b for b in python_blocks(PACKAGE_README.read_text()) if "CrawlerProcess" in b]
    assert len(spiders) == 1
    site = Site(b"User-agent: *\nDisallow: /private\n", ["/about", "/private/x", "/private"])
    try:
        program = tmp_path / "spider.py"
        start = re.search(r'start_urls = \["(https://[^"]+)"\]', spiders[0]).group(1)
        program.write_text(spiders[0].replace(start, site.base + "/"))
        run = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=120, check=False)
        assert run.returncode == 0, run.stderr[-3000:]
    finally:
        site.close()
    assert site.requested[0] == "/robots.txt"
    assert set(site.requested) == {"/robots.txt", "/", "/about"}, site.requested


def test_the_package_is_typed():
    folder = Path(robots_core.__file__).parent
    assert (folder / "py.typed").is_file()
    assert (folder / "_robots_core.pyi").is_file()
    stubbed = (folder / "_robots_core.pyi").read_text()
    for name in robots_core._robots_core.__dict__:
        if not name.startswith("_"):
            assert re.search(rf"^(class |def ){name}\b|^{name}:", stubbed, re.MULTILINE), f"{name} has no stub"
    assert robots_core.__version__ == re.search(
        r'^version = "(.+)"', (Path(__file__).resolve().parents[1] / "Cargo.toml").read_text(), re.MULTILINE
    ).group(1)


def test_importing_the_package_is_light():
    # Protego's module (and `typing`, which it needs) load on first use of robots_core.Protego.
    probe = (
        "import sys, robots_core; loaded = sorted(m for m in ('typing', 'robots_core.protego') if m in sys.modules);"
        "robots_core.Protego; print(loaded, 'robots_core.protego' in sys.modules)"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["[]", "True"], run.stdout
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        robots_core.Nope  # noqa: B018
    assert (Path(robots_core.__file__).parent / "__init__.pyi").is_file()
