"""Fixtures shared by the suite: the corpus folder and the ``robots`` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from corpus import corpus_dir, workspace_root  # noqa: E402


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The corpus folder; the test is skipped (and says why) when ``ROBOTS_CORPUS`` is unset."""
    folder = corpus_dir()
    if folder is None:
        pytest.skip("ROBOTS_CORPUS is not set (e.g. ROBOTS_CORPUS=../shared/corpus/robots)")
    return folder


@pytest.fixture(scope="session")
def robots_bin() -> Path:
    """The ``robots`` command of this workspace: ``ROBOTS_BIN``, or built with cargo."""
    given = os.environ.get("ROBOTS_BIN")
    if given:
        return Path(given)
    root = workspace_root()
    subprocess.run(
        ["cargo", "build", "--quiet", "-p", "robots-cli", "--bin", "robots"],
        cwd=root,
        check=True,
    )
    metadata = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    )
    return Path(json.loads(metadata.stdout)["target_directory"]) / "debug" / "robots"
