//! Files still being written (CONTRACT §11). Warehouses often write a file in place, and an
//! FTP or SFTP upload shows its final name while the bytes arrive, so a shipment or stock
//! file is taken only once two looks at least `file_settle_secs` apart saw the same size and
//! modification time. [`Sightings`] remembers, across passes, what the last look saw of each
//! file and since when it has looked that way. Names a writer uses while writing are never
//! taken at all.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::Facts;

/// Endings of the names upload tools and editors give a file until it is complete.
const PARTIAL_SUFFIXES: [&str; 4] = [".tmp", ".part", ".filepart", ".partial"];

/// Whether a file in a shipments or inventory folder may be read at all: its name is not one a
/// writer uses while writing (a leading `.`, as orderbridge writes its own files, or a
/// partial-upload ending). Which of those a warehouse reads is its format's to say (a CSV
/// layout's `file_pattern`, `*.csv` by default; every name for X12).
pub fn is_taken_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    !name.starts_with('.') && !PARTIAL_SUFFIXES.iter().any(|suffix| lower.ends_with(suffix))
}

/// What one look saw of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stamp {
    /// The size and modification time the server reports.
    Facts(Facts),
    /// For a server that reports neither (an FTP server without MLSD, SIZE and MDTM): the
    /// length and a digest of the bytes themselves.
    Content { len: u64, digest: u64 },
}

impl Stamp {
    pub fn of_content(bytes: &[u8]) -> Stamp {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        bytes.hash(&mut hasher);
        Stamp::Content { len: bytes.len() as u64, digest: hasher.finish() }
    }
}

/// What a look concluded about one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// Unchanged for at least the settle time: it may be read.
    Settled,
    /// New or changed lately; if nothing changes, it settles at this instant.
    Unsettled { settles_at: Instant },
}

struct Sighting {
    stamp: Stamp,
    /// When a look first saw the file as `stamp` shows it.
    since: Instant,
}

/// The looks of every warehouse file seen, keyed by the files' place (a warehouse's location,
/// without its password) and the path in it: the same files seen through two warehouses
/// settle once. Shared by every pass of an engine; clones share the same memory. A std
/// mutex, never held across an await.
#[derive(Clone, Default)]
pub struct Sightings(Arc<Mutex<HashMap<(String, String), Sighting>>>);

impl Sightings {
    /// Records a look at `path` in the files at `place` that saw `stamp` at `now`.
    pub fn look(&self, place: &str, path: &str, stamp: Stamp, now: Instant, settle: Duration) -> Look {
        let mut seen = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let key = (place.to_string(), path.to_string());
        let since = match seen.get(&key) {
            Some(sighting) if sighting.stamp == stamp => sighting.since,
            _ => {
                seen.insert(key, Sighting { stamp, since: now });
                now
            }
        };
        let settles_at = since + settle;
        if now >= settles_at { Look::Settled } else { Look::Unsettled { settles_at } }
    }

    /// Forgets the files of `place` in `dir` (directly) that are not among `present`: moved
    /// away, or gone. A file that comes back under the same name is then seen anew.
    pub fn keep_only(&self, place: &str, dir: &str, present: &[String]) {
        let mut seen = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        seen.retain(|(at, path), _| {
            at != place || parent(path) != dir || present.iter().any(|name| path_name(path) == name)
        });
    }

    /// Forgets one file (it was read and moved).
    pub fn forget(&self, place: &str, path: &str) {
        let mut seen = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        seen.remove(&(place.to_string(), path.to_string()));
    }
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

fn path_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(size: u64, modified: &str) -> Stamp {
        Stamp::Facts(Facts { size: Some(size), modified: Some(modified.to_string()) })
    }

    const SETTLE: Duration = Duration::from_secs(10);

    #[test]
    fn a_file_settles_only_when_two_looks_settle_apart_saw_it_unchanged() {
        let seen = Sightings::default();
        let t0 = Instant::now();
        let at = |secs: u64| t0 + Duration::from_secs(secs);
        let look = |secs, s| seen.look("ftp://w@h:21", "in/a.csv", s, at(secs), SETTLE);
        assert_eq!(look(0, stamp(10, "1")), Look::Unsettled { settles_at: at(10) }, "first sight");
        assert_eq!(look(9, stamp(10, "1")), Look::Unsettled { settles_at: at(10) }, "too soon");
        assert_eq!(look(10, stamp(10, "1")), Look::Settled);
        // It grows: the clock starts again from the look that saw the change.
        assert_eq!(look(12, stamp(30, "2")), Look::Unsettled { settles_at: at(22) });
        assert_eq!(look(20, stamp(30, "3")), Look::Unsettled { settles_at: at(30) }, "touched, same size");
        assert_eq!(look(30, stamp(30, "3")), Look::Settled);
    }

    #[test]
    fn files_are_told_apart_by_place_and_path_and_forgotten_when_gone() {
        let seen = Sightings::default();
        let t0 = Instant::now();
        let later = t0 + SETTLE;
        seen.look("a", "in/x.csv", stamp(1, "1"), t0, SETTLE);
        seen.look("a", "in/y.csv", stamp(1, "1"), t0, SETTLE);
        seen.look("a", "other/x.csv", stamp(1, "1"), t0, SETTLE);
        assert!(matches!(seen.look("b", "in/x.csv", stamp(1, "1"), later, SETTLE), Look::Unsettled { .. }));
        seen.keep_only("a", "in", &["y.csv".to_string()]);
        assert!(matches!(seen.look("a", "in/x.csv", stamp(1, "1"), later, SETTLE), Look::Unsettled { .. }));
        assert_eq!(seen.look("a", "in/y.csv", stamp(1, "1"), later, SETTLE), Look::Settled);
        assert_eq!(seen.look("a", "other/x.csv", stamp(1, "1"), later, SETTLE), Look::Settled);
        seen.forget("a", "in/y.csv");
        assert!(matches!(seen.look("a", "in/y.csv", stamp(1, "1"), later, SETTLE), Look::Unsettled { .. }));
    }

    #[test]
    fn no_settle_time_takes_a_file_at_first_sight() {
        let seen = Sightings::default();
        assert_eq!(seen.look("a", "x.csv", stamp(1, "1"), Instant::now(), Duration::ZERO), Look::Settled);
    }

    #[test]
    fn content_stamps_change_with_the_bytes() {
        assert_eq!(Stamp::of_content(b"a,b\n"), Stamp::of_content(b"a,b\n"));
        assert_ne!(Stamp::of_content(b"a,b\n"), Stamp::of_content(b"a,c\n"));
    }

    #[test]
    fn names_a_writer_uses_while_writing_are_never_taken() {
        for taken in ["ship.csv", "SHIP.CSV", "a.part.csv", "x y.csv", "945.edi", "x.txt"] {
            assert!(is_taken_name(taken), "{taken}");
        }
        for never in [".x.csv", "x.csv.part", "x.csv.tmp", "x.csv.filepart", "x.csv.PARTIAL", ".csv"] {
            assert!(!is_taken_name(never), "{never}");
        }
    }
}
