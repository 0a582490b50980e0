"""Makes the source distribution that `maturin sdist` wrote build from the crates it needs:
maturin copies the workspace crates' manifests whole, and `cargo metadata` (which a build runs
first) downloads every crate they name, whether the build uses it or not: 239 crates for the 94
the extension compiles. What no build from the sdist uses goes:

- each `[dev-dependencies]` table, and the unpublished test-support crate (tests do not run from
  an sdist);
- the optional dependencies (an HTTP client, Redis, signing keys: robots-fetch's features, which
  the extension does not enable), their features kept as empty lists so that the crates' code
  still names them.

Crates for other platforms (Windows, macOS, WebAssembly) stay named, as an sdist builds there
too. `python tools/trim_sdist.py DIST.tar.gz` rewrites it in place.
"""

from __future__ import annotations

import io
import re
import sys
import tarfile
from pathlib import Path

UNUSED_MEMBER = "test-support"


def trimmed_manifest(manifest: str) -> str:
    """The manifest without its `[dev-dependencies]` tables (plain or per target) and optional
    dependencies, each feature an empty list."""
    kept: list[str] = []
    table = ""
    for line in manifest.splitlines(keepends=True):
        header = re.match(r"\s*\[([^\[\]]+)\]\s*$", line)
        if header:
            table = header.group(1).strip()
        if table == "dev-dependencies" or table.endswith(".dev-dependencies"):
            continue
        if table.endswith("dependencies") and re.search(r"\boptional\s*=\s*true\b", line):
            continue
        feature = re.match(r"(\s*[A-Za-z0-9_-]+\s*=\s*)\[.*\]\s*$", line)
        if table == "features" and feature:
            line = feature.group(1) + "[]\n"
        kept.append(line)
    return "".join(kept)


def without_member(workspace: str, member: str) -> str:
    """The workspace manifest without `member` in its `members` list."""
    return re.sub(rf',?\s*"{re.escape(member)}"', "", workspace, count=1).replace("[, ", "[")


def trim(path: Path) -> list[str]:
    """Rewrites the sdist at `path`; returns what it changed."""
    changed: list[str] = []
    with tarfile.open(path, "r:gz") as source:
        members = [(info, source.extractfile(info).read() if info.isfile() else None) for info in source]  # type: ignore[union-attr]
    root = members[0][0].name.split("/", 1)[0]
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as target:
        for info, data in members:
            relative = info.name.split("/", 1)[1] if "/" in info.name else ""
            if relative == UNUSED_MEMBER or relative.startswith(UNUSED_MEMBER + "/"):
                changed.append(f"removed {relative}")
                continue
            if data is not None and relative.endswith("Cargo.toml"):
                text = data.decode()
                new = trimmed_manifest(text)
                if relative == "Cargo.toml":
                    new = without_member(new, UNUSED_MEMBER)
                if new != text:
                    changed.append(f"trimmed {relative}")
                    data = new.encode()
                    info.size = len(data)
            target.addfile(info, io.BytesIO(data) if data is not None else None)
    if not any(line.startswith("trimmed") for line in changed):
        raise SystemExit(f"{path}: nothing to trim under {root}/ (has maturin's layout changed?)")
    path.write_bytes(out.getvalue())
    return changed


if __name__ == "__main__":
    for argument in sys.argv[1:]:
        for change in trim(Path(argument)):
            print(f"{argument}: {change}")
