"""Where the robots.txt corpus is, as the Rust tests find it: the folder ``ROBOTS_CORPUS``
names, a relative path resolved against the workspace root. Shared by the differential test
and the benchmark script."""

from __future__ import annotations

import os
from pathlib import Path

MAX_BODY_BYTES = 512_000


def workspace_root() -> Path:
    """The nearest folder above this file whose Cargo.toml has ``[workspace]``."""
    here = Path(__file__).resolve()
    for folder in here.parents:
        manifest = folder / "Cargo.toml"
        if manifest.is_file() and "[workspace]" in manifest.read_text().splitlines():
            return folder
    raise RuntimeError(f"no Cargo workspace above {here}")


def corpus_dir(value: str | None = None) -> Path | None:
    """The corpus folder (``value``, else ``ROBOTS_CORPUS``), or ``None`` when neither is
    given. A folder named but not readable is an error, not a skip."""
    value = value if value is not None else os.environ.get("ROBOTS_CORPUS")
    if not value:
        return None
    path = Path(value)
    if not path.is_absolute():
        path = workspace_root() / path
    if not path.is_dir():
        raise RuntimeError(f"ROBOTS_CORPUS={value} resolves to {path}, which is not a folder")
    return path


def corpus_files(folder: Path) -> list[tuple[str, bytes]]:
    """Every ``.txt`` file of the corpus, sorted by name, each cut at 512,000 bytes."""
    files = []
    for path in sorted(folder.glob("*.txt")):
        files.append((path.name, path.read_bytes()[:MAX_BODY_BYTES]))
    return files
