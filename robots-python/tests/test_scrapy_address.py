"""Issue 69: a real Scrapy crawl never reaches the user's network, judged from the servers'
logs inside a network namespace the test makes (``unshare -mn``, as root, as CI runs): a public
page links to internal addresses, to a public name with an internal address, to a name with a
trailing dot, and to a name that answers public and then internal; every setting that loses the
``Referer`` or the DNS cache is tried."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent

CASES: list[dict[str, Any]] = [
    {"name": "default settings"},
    {"name": "REFERRER_POLICY same-origin", "settings": {"REFERRER_POLICY": "same-origin"}},
    {"name": "REFERER_ENABLED off", "settings": {"REFERER_ENABLED": False}},
    # The door resolves the name (public), Twisted resolves it again at the connection
    # (internal): only the guarded resolver sees that.
    {
        "name": "DNSCACHE_ENABLED off",
        "settings": {"DNSCACHE_ENABLED": False, "ROBOTSTXT_UNREACHABLE_HOLD": 0},
        "cdn_public_answers": 3,
    },
    # Without the spider middleware that marks start requests, and without a Referer: a request
    # of no known page is judged as a public page's link.
    {"name": "no start marks", "settings": {"REFERER_ENABLED": False, "SPIDER_MIDDLEWARES": {}}},
]


def run_world() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as folder:
        cases, out = Path(folder, "cases.json"), Path(folder, "out.json")
        cases.write_text(json.dumps(CASES))
        run = subprocess.run(
            ["unshare", "--mount", "--net", "--", sys.executable, str(HERE / "netns_world.py"), str(cases), str(out)],
            capture_output=True,
            text=True,
            timeout=900,
            cwd=HERE,
        )
        assert run.returncode == 0, (
            f"the namespace's run failed (these tests run as root, as CI does):\n{run.stderr[-4000:]}"
        )
        results: list[dict[str, Any]] = json.loads(out.read_text())
        return results


def test_no_scrapy_crawl_reaches_an_internal_server() -> None:
    results = run_world()
    assert len(results) == len(CASES)
    for result in results:
        name = result["case"]["name"]
        assert result["returncode"] == 0, f"{name}: {result['log']}"
        assert result["internal"] == [], f"{name}: {result['internal']}\n{result['log']}"
        assert "/" in result["public"], f"{name}: {result['public']}"
        # The three literals, the public name with an internal address and the trailing dot at
        # the least (the CDN's pages, refused once it rebinds, come on top).
        refused = result["stats"].get("robotstxt/refused/address", 0)
        assert refused >= 5, f"{name}: {refused}\n{result['log']}"
    rebound = next(r for r in results if r["case"]["name"] == "DNSCACHE_ENABLED off")
    assert "AddressRefused" in rebound["log"] or "address rule" in rebound["log"], rebound["log"]
