"""The source distribution's trim (tools/trim_sdist.py): what no build from it uses goes, and what
the extension builds with (its stable ABI features) stays."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

TOOL = Path(__file__).resolve().parents[1] / "tools" / "trim_sdist.py"


def trim_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("trim_sdist", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MANIFEST = """\
[package]
name = "demo"

[features]
default = ["abi3-py39"]
abi3-py39 = ["pyo3/abi3-py39"]
redis = ["dep:redis", "signing"]
signing = ["dep:ed25519", "base64?/alloc"]

[dependencies]
pyo3 = "0.30"
redis = { workspace = true, optional = true }
ed25519 = { version = "2", optional = true }
base64 = { version = "0.22", optional = true }

[dev-dependencies]
wiremock = "0.6"

[target.'cfg(unix)'.dev-dependencies]
libc = "0.2"
"""


def test_optional_dependencies_go_with_what_features_enable_of_them() -> None:
    trimmed = trim_tool().trimmed_manifest(MANIFEST)
    # The extension's features, which name a dependency it keeps, are kept whole.
    assert 'default = ["abi3-py39"]\n' in trimmed
    assert 'abi3-py39 = ["pyo3/abi3-py39"]\n' in trimmed
    # Features stay (code names them); what they enable of removed dependencies goes, and a
    # feature they enable stays.
    assert 'redis = ["signing"]\n' in trimmed
    assert "signing = []\n" in trimmed
    assert 'pyo3 = "0.30"' in trimmed
    for gone in ("optional", "wiremock", "libc", "dev-dependencies"):
        assert gone not in trimmed, gone
