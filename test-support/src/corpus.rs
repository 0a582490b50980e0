//! Where the robots.txt corpus is: the folder `ROBOTS_CORPUS` names, a relative path resolved
//! against the workspace root (so `ROBOTS_CORPUS=../shared/corpus/robots` means the same from
//! every package). Set but unreadable is an error, loudly; unset skips with a message written
//! straight to stderr, which the test harness does not capture. Shared by the tests and
//! benchmarks of every package.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The workspace root: the nearest folder above `manifest_dir` whose Cargo.toml has
/// `[workspace]`.
pub fn workspace_root(manifest_dir: &str) -> PathBuf {
    Path::new(manifest_dir)
        .ancestors()
        .find(|dir| {
            std::fs::read_to_string(dir.join("Cargo.toml"))
                .is_ok_and(|toml| toml.lines().any(|l| l.trim() == "[workspace]"))
        })
        .unwrap_or(Path::new(manifest_dir))
        .to_path_buf()
}

/// The corpus folder, or `None` (said on stderr) when `ROBOTS_CORPUS` is unset. Panics when it
/// is set but the folder cannot be read.
pub fn corpus_dir(manifest_dir: &str, what: &str) -> Option<PathBuf> {
    let Some(value) = std::env::var_os("ROBOTS_CORPUS") else {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {what}: ROBOTS_CORPUS is not set (e.g. ROBOTS_CORPUS=../shared/corpus/robots)"
        );
        return None;
    };
    let path = PathBuf::from(&value);
    let dir = if path.is_relative() {
        workspace_root(manifest_dir).join(path)
    } else {
        path
    };
    match std::fs::read_dir(&dir) {
        Ok(_) => Some(dir),
        Err(e) => panic!(
            "ROBOTS_CORPUS={} resolves to {}, which cannot be read: {e}",
            value.to_string_lossy(),
            dir.display()
        ),
    }
}

/// Every `.txt` file of the corpus, sorted by name, each cut at `limit` bytes. Panics on a file
/// that cannot be read.
pub fn corpus_files(dir: &Path, limit: usize) -> Vec<(String, Vec<u8>)> {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
            .path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !name.ends_with(".txt") {
            continue;
        }
        let mut body =
            std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        body.truncate(limit);
        files.push((name, body));
    }
    files.sort();
    files
}
