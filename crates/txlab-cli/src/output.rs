//! The output directory: checked before anything runs, never overwritten silently.
//!
//! [`prepare`] refuses (exit 2, naming `--out`) a path that is a file, a directory that cannot
//! be created or written, and a directory that already holds results unless `--overwrite` was
//! given; it creates the directory and writes and removes a probe file, so a run never measures
//! for minutes and then fails to save. Default directories carry the UTC time and, if that name
//! is taken, a `-2`, `-3`, ... suffix.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use txlab_core::Error;

/// The files whose presence marks a directory as holding results.
const RESULT_FILES: [&str; 3] = ["results.json", "results.csv", "summary.csv"];

/// Checks and creates `dir` for writing results (module docs).
pub fn prepare(dir: &Path, overwrite: bool) -> Result<(), Error> {
    let refuse = |accepted: String| Error::invalid("--out", dir.display(), accepted);
    if dir.exists() && !dir.is_dir() {
        return Err(refuse(
            "a directory (this path is a file; choose another --out)".into(),
        ));
    }
    if !overwrite && RESULT_FILES.iter().any(|f| dir.join(f).exists()) {
        return Err(refuse(
            "a directory without earlier results: it holds results.json/results.csv of an \
             earlier run; pass --overwrite to replace them or choose another --out"
                .into(),
        ));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| refuse(format!("a directory that can be created ({e})")))?;
    let probe = dir.join(".txlab-write-test");
    std::fs::write(&probe, b"").map_err(|e| refuse(format!("a writable directory ({e})")))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// `results/<prefix>-YYYYmmdd-HHMMSS` (UTC), with a numeric suffix if that name is taken.
pub fn default_dir(prefix: &str) -> PathBuf {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let base = Path::new("results").join(format!("{prefix}-{}", crate::utc_timestamp(now)));
    let mut dir = base.clone();
    let mut n = 2;
    while dir.exists() {
        dir = PathBuf::from(format!("{}-{n}", base.display()));
        n += 1;
    }
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_earlier_results_and_unwritable_places_are_refused() {
        let root = std::env::temp_dir().join(format!("txlab-out-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let file = root.join("f");
        std::fs::write(&file, b"x").unwrap();
        let e = prepare(&file, false).unwrap_err().to_string();
        assert!(e.contains("--out") && e.contains("is a file"), "{e}");
        let under_file = file.join("sub");
        let e = prepare(&under_file, true).unwrap_err().to_string();
        assert!(
            e.contains("--out") && e.contains("cannot be created") || e.contains("can be created"),
            "{e}"
        );
        let dir = root.join("d");
        prepare(&dir, false).unwrap();
        prepare(&dir, false).unwrap();
        std::fs::write(dir.join("results.json"), b"{}").unwrap();
        let e = prepare(&dir, false).unwrap_err().to_string();
        assert!(e.contains("--overwrite"), "{e}");
        prepare(&dir, true).unwrap();
        assert!(!dir.join(".txlab-write-test").exists());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
