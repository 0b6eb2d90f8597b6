//! A small filesystem of a test's own (tmpfs), which the test fills up: a disk that runs out
//! of space under a server, then gets it back.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs mounted under the test's temporary folder; unmounted when dropped.
pub struct SmallDisk {
    path: PathBuf,
}

impl SmallDisk {
    /// A tmpfs of `size` (`mount`'s form: `8m`) named `name`, or `None` where this process may
    /// not mount one (it needs root, and a machine that lets it): the test says so and skips.
    pub fn mount_or_skip(name: &str, size: &str) -> Option<SmallDisk> {
        let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("{name}-{}", std::process::id()));
        std::fs::create_dir_all(&path).expect("a directory");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .output();
        match mounted {
            Ok(out) if out.status.success() => Some(SmallDisk { path }),
            Ok(out) => {
                eprintln!(
                    "SKIPPED: a small filesystem cannot be mounted here: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("SKIPPED: `mount` cannot run here: {e}");
                None
            }
        }
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Fills what space is left with a file (`filler`), until the filesystem says it is full.
    pub fn fill(&self) {
        use std::io::Write;
        let mut file = std::fs::File::create(self.path.join("filler")).expect("the filler");
        let chunk = vec![0u8; 64 * 1024];
        while file.write_all(&chunk).is_ok() {}
        // The last bytes that fit.
        while file.write_all(&chunk[..512]).is_ok() {}
        let _ = file.sync_all();
    }

    /// Gives the space back (the filler removed).
    pub fn free(&self) {
        std::fs::remove_file(self.path.join("filler")).expect("the filler is removed");
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}
