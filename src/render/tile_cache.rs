//! The persistent basemap tile cache.
//!
//! - **Keys**: a file is named by a 128-bit FNV-1a hash of the tile URL
//!   (`<32 hex digits>.tile`), so no URL can name a path outside the cache
//!   directory. The URL is also stored in the file and checked on read, so a
//!   hash collision is a miss, never a wrong tile.
//! - **Expiry**: each entry keeps the time it expires, from the tile server's
//!   `Cache-Control: max-age` (preferred) or `Expires`; [`DEFAULT_MAX_AGE`]
//!   (30 days) when the server says neither. `no-store` answers are not kept.
//! - **Revalidation**: an entry also keeps the server's `ETag` and
//!   `Last-Modified`; an expired entry is asked for again with
//!   `If-None-Match` / `If-Modified-Since`, and a `304 Not Modified` only
//!   renews its expiry ([`TileCache::refresh`]), with no new download.
//! - **Size bound**: [`DEFAULT_MAX_BYTES`] (256 MiB). [`TileCache::evict`]
//!   removes least recently used entries (a hit refreshes the file's
//!   modification time) until the cache is under 90 % of the bound. Only
//!   files the cache wrote are ever removed (exact entry and temporary-file
//!   names, and an entry's magic line): the directory may be shared with
//!   anything else.
//! - **Concurrency**: entries are written to a temporary file in the same
//!   directory and renamed into place, so readers in other threads or
//!   processes see a whole old entry or a whole new one. Symbolic links are
//!   never followed: an entry that is a link is a miss and is replaced.

use crate::error::io_error;
use crate::Result;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Where basemap tiles are kept between calls.
#[derive(Debug, Clone, PartialEq)]
pub enum TileCacheMode {
    /// A persistent cache directory (created when missing).
    Dir(PathBuf),
    /// `cache_data = FALSE`: nothing persistent is written or read.
    Off,
}

impl TileCacheMode {
    /// The context's tile cache: its directory, or off when the `tile_cache` option is off.
    pub fn of(config: &crate::config::Config) -> TileCacheMode {
        if config.tile_cache {
            TileCacheMode::Dir(config.tile_cache_dir.clone())
        } else {
            TileCacheMode::Off
        }
    }
}

/// Lifetime of a tile whose server gave no `Cache-Control` / `Expires`.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(30 * 24 * 3600);

/// Size bound of the cache directory, bytes.
pub const DEFAULT_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// The first line of every entry: [`MAGIC_PREFIX`] and the format version.
/// Version 2 added the `ETag` and `Last-Modified` lines; a version 1 entry
/// is a miss (and evictable), replaced by the next fetch.
const MAGIC: &str = "hydroplot-tile 2";
/// What the magic line of every format version starts with.
const MAGIC_PREFIX: &str = "hydroplot-tile ";
const SUFFIX: &str = ".tile";
const TEMP_SUFFIX: &str = ".tmp";

/// One cached tile.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Unix seconds from which the entry must be revalidated before use.
    pub expires: u64,
    /// The server's `ETag`, sent back as `If-None-Match`.
    pub etag: Option<String>,
    /// The server's `Last-Modified`, sent back as `If-Modified-Since`.
    pub last_modified: Option<String>,
    /// The tile image as the server sent it.
    pub body: Vec<u8>,
}

impl Entry {
    /// True until the entry expires.
    pub fn is_fresh(&self) -> bool {
        unix_now() < self.expires
    }

    /// The conditional request headers that revalidate this entry (none
    /// when the server gave no validator): `If-None-Match` and
    /// `If-Modified-Since`.
    pub fn validators(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if let Some(etag) = &self.etag {
            out.push(("If-None-Match", etag.clone()));
        }
        if let Some(date) = &self.last_modified {
            out.push(("If-Modified-Since", date.clone()));
        }
        out
    }
}

/// A tile cache directory.
#[derive(Debug, Clone)]
pub struct TileCache {
    dir: PathBuf,
    max_bytes: u64,
}

impl TileCache {
    /// Opens (creating when missing) the cache directory `dir`.
    pub fn open(dir: &Path, max_bytes: u64) -> Result<TileCache> {
        fs::create_dir_all(dir)
            .map_err(|e| io_error(dir, e).context("the tile cache directory cannot be created"))?;
        Ok(TileCache {
            dir: dir.to_path_buf(),
            max_bytes,
        })
    }

    /// The path of the entry for `url`: always a direct child of the cache directory.
    pub fn path_for(&self, url: &str) -> PathBuf {
        self.dir
            .join(format!("{:032x}{SUFFIX}", fnv1a_128(url.as_bytes())))
    }

    /// The cached bytes of `url`, when present, fresh and not a symbolic link.
    /// A hit marks the entry as recently used.
    pub fn get(&self, url: &str) -> Option<Vec<u8>> {
        self.lookup(url)
            .filter(Entry::is_fresh)
            .map(|entry| entry.body)
    }

    /// The entry of `url`, fresh or expired (an expired one may be
    /// revalidated with [`Entry::validators`]), when present, of the current
    /// format, for this URL and not a symbolic link. Marks it as recently used.
    pub fn lookup(&self, url: &str) -> Option<Entry> {
        let path = self.path_for(url);
        let mut file = open_no_follow(&path).ok()?;
        let mut data = Vec::new();
        file.read_to_end(&mut data).ok()?;
        let (stored_url, entry) = parse_entry(&data)?;
        if stored_url != url {
            return None;
        }
        let _ = file.set_modified(SystemTime::now());
        Some(entry)
    }

    /// Stores `body` for `url`, expiring as `headers` (lower-case names) say,
    /// with the server's `ETag` and `Last-Modified` for revalidation.
    /// Returns without writing when the server said `no-store`.
    pub fn put(&self, url: &str, headers: &[(String, String)], body: &[u8]) -> Result<()> {
        let Some(max_age) = max_age(headers, unix_now()) else {
            return Ok(());
        };
        let entry = Entry {
            expires: unix_now().saturating_add(max_age.as_secs()),
            etag: header_line(headers, "etag"),
            last_modified: header_line(headers, "last-modified"),
            body: body.to_vec(),
        };
        self.write(url, &entry)
    }

    /// Records that the server answered `304 Not Modified` (with `headers`)
    /// to a revalidation of `entry`: the same body, a new expiry, and the
    /// validators the answer updates. A `no-store` answer leaves the entry
    /// as it was (expired).
    pub fn refresh(&self, url: &str, headers: &[(String, String)], entry: Entry) -> Result<()> {
        let Some(max_age) = max_age(headers, unix_now()) else {
            return Ok(());
        };
        let refreshed = Entry {
            expires: unix_now().saturating_add(max_age.as_secs()),
            etag: header_line(headers, "etag").or(entry.etag),
            last_modified: header_line(headers, "last-modified").or(entry.last_modified),
            body: entry.body,
        };
        self.write(url, &refreshed)
    }

    /// Writes `entry` for `url` to a temporary file and renames it into place.
    fn write(&self, url: &str, entry: &Entry) -> Result<()> {
        let path = self.path_for(url);
        let tmp = self.temp_path(&path);
        let write = || -> std::io::Result<()> {
            let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
            let head = format!(
                "{MAGIC}\n{}\n{url}\n{}\n{}\n",
                entry.expires,
                entry.etag.as_deref().unwrap_or(""),
                entry.last_modified.as_deref().unwrap_or("")
            );
            f.write_all(head.as_bytes())?;
            f.write_all(&entry.body)?;
            f.sync_data().ok();
            drop(f);
            fs::rename(&tmp, &path)
        };
        write().map_err(|e| {
            let _ = fs::remove_file(&tmp);
            io_error(&path, e).context("a basemap tile could not be cached")
        })
    }

    /// Removes least recently used entries (and temporary files older than a
    /// day) until the cache holds at most 90 % of its bound. Returns the bytes
    /// removed. Only files this cache wrote are ever removed: regular files
    /// named exactly as [`TileCache::path_for`] names them whose content
    /// starts with an entry's magic line, and regular files named exactly as
    /// `put` names its temporary files. Anything else in the directory (user
    /// files, links, subdirectories) is left alone and not counted.
    pub fn evict(&self) -> u64 {
        let Ok(dir) = fs::read_dir(&self.dir) else {
            return 0;
        };
        let mut entries: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        let mut removed = 0;
        let day_ago = SystemTime::now() - Duration::from_secs(24 * 3600);
        for e in dir.flatten() {
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            // `DirEntry::metadata` does not follow links: a link is not a file.
            let Ok(meta) = e.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            let modified = meta.modified().unwrap_or(UNIX_EPOCH);
            if is_temp_name(name) && modified < day_ago {
                removed += remove(&e.path(), meta.len());
            } else if is_entry_name(name) {
                entries.push((modified, meta.len(), e.path()));
            }
        }
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        if total <= self.max_bytes {
            return removed;
        }
        entries.sort();
        let target = self.max_bytes / 10 * 9;
        for (_, len, path) in entries {
            if total <= target {
                break;
            }
            // The content is checked only now, for the few files removed.
            total -= len;
            if has_entry_magic(&path) {
                removed += remove(&path, len);
            }
        }
        removed
    }

    /// The name of a temporary file for the entry at `path`, unique in this
    /// process; [`is_temp_name`] recognizes exactly these names.
    fn temp_path(&self, path: &Path) -> PathBuf {
        let entry = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        self.dir.join(format!(
            ".{entry}.{}.{}{TEMP_SUFFIX}",
            std::process::id(),
            next_counter()
        ))
    }
}

/// `<32 lowercase hex digits>.tile`: the names [`TileCache::path_for`] gives.
fn is_entry_name(name: &str) -> bool {
    name.strip_suffix(SUFFIX).is_some_and(|hash| {
        hash.len() == 32
            && hash
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// `.<entry name>.<pid>.<counter>.tmp`: the names [`TileCache::temp_path`] gives.
fn is_temp_name(name: &str) -> bool {
    let Some(inner) = name
        .strip_prefix('.')
        .and_then(|n| n.strip_suffix(TEMP_SUFFIX))
    else {
        return false;
    };
    let mut parts = inner.rsplitn(3, '.');
    let digits =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let (counter, pid) = (parts.next(), parts.next());
    digits(counter) && digits(pid) && parts.next().is_some_and(is_entry_name)
}

/// True when the file at `path` (not a link) starts with the magic line of
/// an entry of any format this library has written.
fn has_entry_magic(path: &Path) -> bool {
    let mut head = [0u8; MAGIC_PREFIX.len() + 4];
    let Ok(mut f) = open_no_follow(path) else {
        return false;
    };
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    let Some(version) = head[..n].strip_prefix(MAGIC_PREFIX.as_bytes()) else {
        return false;
    };
    let digits = version.iter().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && version.get(digits) == Some(&b'\n')
}

fn remove(path: &Path, len: u64) -> u64 {
    fs::remove_file(path).map_or(0, |_| len)
}

fn next_counter() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    COUNTER.fetch_add(1, Ordering::Relaxed)
}

/// Opens a regular file for reading, refusing symbolic links.
fn open_no_follow(path: &Path) -> std::io::Result<File> {
    if !fs::symlink_metadata(path)?.file_type().is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path)
}

/// Splits an entry of the current format into (url, entry); entries of
/// older formats (without validators) are `None`, a miss.
fn parse_entry(data: &[u8]) -> Option<(&str, Entry)> {
    let mut rest = data;
    let mut line = || -> Option<&str> {
        let end = rest.iter().position(|b| *b == b'\n')?;
        let l = std::str::from_utf8(&rest[..end]).ok();
        rest = &rest[end + 1..];
        l
    };
    if line()? != MAGIC {
        return None;
    }
    let expires = line()?.parse().ok()?;
    let url = line()?;
    let optional = |l: &str| (!l.is_empty()).then(|| l.to_string());
    let etag = optional(line()?);
    let last_modified = optional(line()?);
    let entry = Entry {
        expires,
        etag,
        last_modified,
        body: rest.to_vec(),
    };
    Some((url, entry))
}

/// The header `name` as one stored line: `None` when absent, empty, or
/// holding a line break.
fn header_line(headers: &[(String, String)], name: &str) -> Option<String> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty() && !v.contains(['\r', '\n']))
        .map(str::to_string)
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// How long a response may be kept: `Cache-Control` `no-store` gives `None`;
/// `max-age` (or `no-cache`, as 0) wins over `Expires`; else [`DEFAULT_MAX_AGE`].
pub fn max_age(headers: &[(String, String)], now: u64) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    if let Some(cc) = header("cache-control") {
        let mut age = None;
        for directive in cc.split(',').map(|d| d.trim().to_ascii_lowercase()) {
            if directive == "no-store" {
                return None;
            }
            if directive == "no-cache" {
                age = Some(0);
            } else if let Some(v) = directive.strip_prefix("max-age=") {
                age = age.or(v.trim_matches('"').parse::<u64>().ok());
            }
        }
        if let Some(secs) = age {
            return Some(Duration::from_secs(secs));
        }
    }
    if let Some(expires) = header("expires") {
        // An unparsable Expires (such as "0") means already expired.
        let at = parse_http_date(expires).unwrap_or(0);
        return Some(Duration::from_secs(at.saturating_sub(now)));
    }
    Some(DEFAULT_MAX_AGE)
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) to Unix seconds.
pub fn parse_http_date(s: &str) -> Option<u64> {
    let parts: Vec<&str> = s.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| m == month)? as i64 + 1;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let hms: Vec<i64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, sec] = hms.as_slice() else {
        return None;
    };
    if !(1..=31).contains(&day) || *h > 23 || *m > 59 || *sec > 60 {
        return None;
    }
    // Days from civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + h * 3600 + m * 60 + sec).ok()
}

/// 128-bit FNV-1a: a stable, dependency-free hash for file names.
fn fnv1a_128(bytes: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    bytes
        .iter()
        .fold(OFFSET, |h, b| (h ^ u128::from(*b)).wrapping_mul(PRIME))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "hydroplot-tile-cache-{name}-{}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&d);
        d
    }

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn keys_stay_inside_the_directory() {
        let dir = temp_dir("keys");
        let c = TileCache::open(&dir, DEFAULT_MAX_BYTES).unwrap();
        for url in ["../../etc/passwd", "http://x/../../a", "/abs/path", "a\0b"] {
            let p = c.path_for(url);
            assert_eq!(p.parent(), Some(dir.as_path()));
            assert_eq!(p.file_name().unwrap().len(), 32 + SUFFIX.len());
        }
        assert_ne!(c.path_for("http://t/1/0/0"), c.path_for("http://t/1/0/1"));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn put_get_expiry_and_no_store() {
        let dir = temp_dir("rw");
        let c = TileCache::open(&dir, DEFAULT_MAX_BYTES).unwrap();
        c.put("http://t/a", &[], b"\x89PNG-a").unwrap();
        assert_eq!(c.get("http://t/a").as_deref(), Some(&b"\x89PNG-a"[..]));
        assert_eq!(c.get("http://t/b"), None);
        c.put(
            "http://t/stale",
            &h(&[("cache-control", "public, max-age=0")]),
            b"x",
        )
        .unwrap();
        assert_eq!(c.get("http://t/stale"), None);
        c.put(
            "http://t/private",
            &h(&[("cache-control", "no-store")]),
            b"x",
        )
        .unwrap();
        assert!(!c.path_for("http://t/private").exists());
        // A corrupt entry is a miss, and is replaced by the next put.
        fs::write(c.path_for("http://t/a"), b"garbage").unwrap();
        assert_eq!(c.get("http://t/a"), None);
        c.put("http://t/a", &[], b"new").unwrap();
        assert_eq!(c.get("http://t/a").as_deref(), Some(&b"new"[..]));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn entries_keep_the_validators_and_older_formats_are_misses() {
        let dir = temp_dir("validators");
        let c = TileCache::open(&dir, 10).unwrap();
        let headers = h(&[
            ("etag", "\"abc\""),
            ("last-modified", "Sun, 06 Nov 1994 08:49:37 GMT"),
            ("cache-control", "max-age=0"),
        ]);
        c.put("http://t/v", &headers, b"tile").unwrap();
        let e = c.lookup("http://t/v").unwrap();
        assert!(!e.is_fresh());
        assert_eq!(
            e.validators(),
            [
                ("If-None-Match", "\"abc\"".to_string()),
                (
                    "If-Modified-Since",
                    "Sun, 06 Nov 1994 08:49:37 GMT".to_string()
                )
            ]
        );
        // A 304 with a new ETag and no date: renewed, the date kept.
        c.refresh("http://t/v", &h(&[("etag", "\"def\"")]), e)
            .unwrap();
        let e = c.lookup("http://t/v").unwrap();
        assert!(e.is_fresh());
        assert_eq!(e.etag.as_deref(), Some("\"def\""));
        assert_eq!(
            e.last_modified.as_deref(),
            Some("Sun, 06 Nov 1994 08:49:37 GMT")
        );
        assert_eq!(c.get("http://t/v").as_deref(), Some(&b"tile"[..]));
        // A validator with a line break is not stored.
        c.put("http://t/w", &h(&[("etag", "a\nb")]), b"w").unwrap();
        assert_eq!(c.lookup("http://t/w").unwrap().validators(), []);
        // A format 1 entry (no validator lines) is a miss, and evictable.
        let old = c.path_for("http://t/old");
        fs::write(
            &old,
            format!("hydroplot-tile 1\n{}\nhttp://t/old\ntile", u64::MAX),
        )
        .unwrap();
        assert_eq!(c.lookup("http://t/old"), None);
        assert!(has_entry_magic(&old));
        c.evict();
        assert!(!old.exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_never_followed() {
        let dir = temp_dir("link");
        let c = TileCache::open(&dir, DEFAULT_MAX_BYTES).unwrap();
        let outside = dir.with_extension("outside");
        fs::write(
            &outside,
            format!("{MAGIC}\n{}\nhttp://t/x\n\n\nsecret", u64::MAX),
        )
        .unwrap();
        std::os::unix::fs::symlink(&outside, c.path_for("http://t/x")).unwrap();
        assert_eq!(c.get("http://t/x"), None);
        c.put("http://t/x", &[], b"tile").unwrap();
        assert!(
            fs::read_to_string(&outside).unwrap().ends_with("secret"),
            "target untouched"
        );
        assert_eq!(c.get("http://t/x").as_deref(), Some(&b"tile"[..]));
        fs::remove_file(&outside).unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn eviction_removes_least_recently_used_first() {
        let dir = temp_dir("evict");
        let c = TileCache::open(&dir, 3_000).unwrap();
        let body = vec![7u8; 900];
        for (i, url) in ["http://t/0", "http://t/1", "http://t/2", "http://t/3"]
            .iter()
            .enumerate()
        {
            c.put(url, &[], &body).unwrap();
            let f = File::options().write(true).open(c.path_for(url)).unwrap();
            f.set_modified(UNIX_EPOCH + Duration::from_secs(1_000_000 + i as u64))
                .unwrap();
        }
        // Using entry 0 makes it the most recent.
        assert!(c.get("http://t/0").is_some());
        assert!(c.evict() > 0);
        assert!(c.get("http://t/1").is_none() && c.get("http://t/2").is_none());
        assert!(c.get("http://t/0").is_some() && c.get("http://t/3").is_some());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn eviction_never_touches_files_the_cache_did_not_write() {
        let dir = temp_dir("foreign");
        let c = TileCache::open(&dir, 10_000).unwrap();
        let old = UNIX_EPOCH + Duration::from_secs(1_000);
        let set_mtime = |p: &Path| {
            File::options()
                .write(true)
                .open(p)
                .unwrap()
                .set_modified(old)
                .unwrap()
        };
        // User files, all older than every entry (first in line for LRU eviction).
        let valid_name = format!("{}{SUFFIX}", "0".repeat(32));
        let foreign: Vec<(String, Vec<u8>)> = vec![
            ("notes.tile".into(), b"my notes".to_vec()),
            ("ABC.tile".into(), vec![1; 3000]),
            (".x.tmp".into(), b"x".to_vec()),
            (format!(".{valid_name}.tmp"), b"y".to_vec()),
            (format!(".{valid_name}.1.x.tmp"), b"z".to_vec()),
            (format!("{}{SUFFIX}", "A".repeat(32)), vec![2; 3000]),
            (valid_name.clone(), vec![3; 3000]),
            ("hydroplot-tile 1".into(), b"a user's file".to_vec()),
        ];
        for (name, bytes) in &foreign {
            fs::write(dir.join(name), bytes).unwrap();
            set_mtime(&dir.join(name));
        }
        fs::create_dir(dir.join("sub.tile")).unwrap();
        fs::write(dir.join("sub.tile/inner.tile"), b"inner").unwrap();
        // A stale temporary file the cache wrote is removed.
        let stale = c.temp_path(&c.path_for("http://t/crashed"));
        fs::write(&stale, b"partial").unwrap();
        set_mtime(&stale);
        // 20 real entries of 1,000+ bytes: twice the bound.
        let urls: Vec<String> = (0..20).map(|i| format!("http://t/{i}")).collect();
        for (i, url) in urls.iter().enumerate() {
            c.put(url, &[], &[7u8; 1000]).unwrap();
            File::options()
                .write(true)
                .open(c.path_for(url))
                .unwrap()
                .set_modified(old + Duration::from_secs(1 + i as u64))
                .unwrap();
        }
        assert!(c.evict() > 0);
        for (name, bytes) in &foreign {
            assert_eq!(&fs::read(dir.join(name)).unwrap(), bytes, "{name}");
        }
        assert_eq!(fs::read(dir.join("sub.tile/inner.tile")).unwrap(), b"inner");
        assert!(!stale.exists());
        // The oldest real entries went, until the real ones fit in 90 % of the bound.
        let kept: Vec<bool> = urls.iter().map(|u| c.path_for(u).exists()).collect();
        let first_kept = kept.iter().position(|k| *k).unwrap();
        assert!(first_kept > 0 && kept[first_kept..].iter().all(|k| *k));
        let kept_bytes: u64 = urls[first_kept..]
            .iter()
            .map(|u| fs::metadata(c.path_for(u)).unwrap().len())
            .sum();
        assert!(kept_bytes <= 9_000, "{kept_bytes}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn entry_and_temp_names() {
        let c = TileCache::open(&temp_dir("names"), DEFAULT_MAX_BYTES).unwrap();
        let entry = c.path_for("http://t/1/2/3");
        let name = entry.file_name().unwrap().to_str().unwrap();
        assert!(is_entry_name(name));
        let tmp = c.temp_path(&entry);
        assert!(is_temp_name(tmp.file_name().unwrap().to_str().unwrap()));
        for not_ours in [
            "notes.tile",
            "ABC.tile",
            ".x.tmp",
            "x.tile",
            &name.to_uppercase(),
        ] {
            assert!(
                !is_entry_name(not_ours) && !is_temp_name(not_ours),
                "{not_ours}"
            );
        }
        let _ = fs::remove_dir_all(&c.dir);
    }

    #[test]
    fn cache_headers() {
        let now = 784_111_777; // Sun, 06 Nov 1994 08:49:37 GMT
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(now));
        assert_eq!(parse_http_date("yesterday"), None);
        assert_eq!(max_age(&[], now), Some(DEFAULT_MAX_AGE));
        assert_eq!(
            max_age(&h(&[("cache-control", "max-age=3600")]), now),
            Some(Duration::from_secs(3600))
        );
        let exp = h(&[("expires", "Sun, 06 Nov 1994 09:49:37 GMT")]);
        assert_eq!(max_age(&exp, now), Some(Duration::from_secs(3600)));
        let both = h(&[
            ("cache-control", "max-age=60"),
            ("expires", "Sun, 06 Nov 1994 09:49:37 GMT"),
        ]);
        assert_eq!(max_age(&both, now), Some(Duration::from_secs(60)));
        assert_eq!(max_age(&h(&[("expires", "0")]), now), Some(Duration::ZERO));
        assert_eq!(max_age(&h(&[("cache-control", "no-store")]), now), None);
    }
}
