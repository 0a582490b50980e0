"""Makes the source distribution that `maturin sdist` wrote build from the crates it needs:
maturin copies the workspace crates' manifests whole, and `cargo metadata` (which a build runs
first) downloads every crate they name, whether the build uses it or not: 239 crates for the 64
the extension compiles. What no build from the sdist uses goes:

- each `[dev-dependencies]` table, and the unpublished test-support crate (tests do not run from
  an sdist);
- the optional dependencies (the cache and its HTTP client, Redis, signing keys: robots-fetch's
  features, which the extension does not enable), and what features enable of them (the
  features stay, so that the crates' code still names them; the extension's own, its stable
  ABI, are kept whole).

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
    dependencies, and without what its features enable of those (`dep:name`, `name`,
    `name/feature`, `name?/feature`)."""
    lines = manifest.splitlines(keepends=True)
    removed = {line.split("=", 1)[0].strip() for table, line in _tabled(lines) if _is_optional(table, line)}
    kept: list[str] = []
    for table, line in _tabled(lines):
        if table == "dev-dependencies" or table.endswith(".dev-dependencies") or _is_optional(table, line):
            continue
        feature = re.match(r"(\s*[A-Za-z0-9_-]+\s*=\s*)\[(.*)\]\s*$", line)
        if table == "features" and feature:
            entries = re.findall(r'"([^"]*)"', feature.group(2))
            enabled = [e for e in entries if re.split(r"[?/]", e.removeprefix("dep:"))[0] not in removed]
            line = feature.group(1) + "[" + ", ".join(f'"{e}"' for e in enabled) + "]\n"
        kept.append(line)
    return "".join(kept)


def _tabled(lines: list[str]) -> list[tuple[str, str]]:
    """Each line with the name of the table it is in."""
    tabled: list[tuple[str, str]] = []
    table = ""
    for line in lines:
        header = re.match(r"\s*\[([^\[\]]+)\]\s*$", line)
        if header:
            table = header.group(1).strip()
        tabled.append((table, line))
    return tabled


def _is_optional(table: str, line: str) -> bool:
    """Whether `line` of `table` names an optional dependency."""
    return table.endswith("dependencies") and re.search(r"\boptional\s*=\s*true\b", line) is not None


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
