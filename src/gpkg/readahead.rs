//! A SQLite VFS that reads a database file ahead, a window at a time, when
//! SQLite reads it in order.
//!
//! SQLite asks its VFS for one page per read: scanning a national file's
//! flowlines and catchments is over half a million `pread` calls of 4 KiB,
//! and on this kind of machine a call costs microseconds beyond its copy.
//! A table written in one go lies in order in the file, so this VFS, once
//! enough reads in a row have each started where the last ended, reads
//! ahead in one call and answers the next reads from that window. It learns
//! from each window: one read at least half through doubles the next (up
//! to [`WINDOW`]) and lowers the run that starts one (down to
//! [`RUN_BEFORE_AHEAD`]); one read less than a quarter through shrinks the
//! next to [`MIN_AHEAD`] and doubles the run it takes. A scan makes a few
//! thousand calls instead of half a million, and rows picked here and there
//! from a national file (a basin's) are read page by page, as before.
//!
//! The VFS wraps the default one (`unix` here), whose functions it keeps;
//! only the files SQLite opens as main databases get the window, every
//! other file (journals, WAL) is the default VFS's own. The window is
//! emptied whenever the file's lock changes: between two transactions
//! another process may have changed the file, and within one (a shared
//! lock held) it cannot change the pages this connection reads from it.
//! In WAL mode a connection keeps its shared lock from one transaction to
//! the next, while other connections checkpoint their changes into the
//! file; each read transaction there begins and ends with a lock on the
//! log's shared memory, which empties the window too.
//! Memory-mapped reads (`xFetch`), when turned on, go past the window.

use rusqlite::ffi;
use std::ffi::{c_int, c_void, CStr};
use std::sync::OnceLock;

/// Bytes read ahead in one call, at most: 16 pages of 4 KiB. Larger
/// windows were slower here: the kernel's copy into a buffer larger than
/// the cache cost three times as much per byte (measured at 256 KiB).
const WINDOW: usize = 64 * 1024;

/// Bytes read ahead by the first window of a run.
const MIN_AHEAD: usize = 16 * 1024;

/// Reads in a row, each starting where the last ended, before the next one
/// reads ahead, at the least.
const RUN_BEFORE_AHEAD: u32 = 2;

/// The longest run a connection that wasted its windows must make before
/// it reads ahead again.
const MAX_RUN_BEFORE_AHEAD: u32 = 64;

/// The name the VFS is registered under.
const NAME: &CStr = c"hydroplot-readahead";

/// The name of the read-ahead VFS for `Connection::open_with_flags_and_vfs`,
/// registered with SQLite on first use; `None` when SQLite has no default
/// VFS to wrap (then the default is used as it is).
pub(crate) fn vfs_name() -> Option<&'static CStr> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    REGISTERED.get_or_init(register).then_some(NAME)
}

/// Registers the VFS (not as the default). Its structure is leaked: SQLite
/// keeps a pointer to it for the life of the process.
fn register() -> bool {
    // SAFETY: sqlite3_vfs_find initializes SQLite and returns the default
    // VFS, which lives as long as the process, or null.
    let base = unsafe { ffi::sqlite3_vfs_find(std::ptr::null()) };
    if base.is_null() {
        return false;
    }
    // SAFETY: `base` is a valid VFS. Its functions but `xOpen` are copied
    // and called with this copy, which keeps the base's `pAppData` and
    // `mxPathname` (all the unix VFS's functions read of it); `szOsFile`
    // grows by the window, and `x_open` opens files with the base VFS
    // itself.
    let mut vfs = unsafe { *base };
    vfs.szOsFile += INNER_AT as c_int;
    vfs.zName = NAME.as_ptr();
    vfs.pNext = std::ptr::null_mut();
    vfs.xOpen = Some(x_open);
    BASE.get_or_init(|| BaseVfs(base));
    let vfs = Box::leak(Box::new(vfs));
    // SAFETY: `vfs` is valid for the life of the process.
    unsafe { ffi::sqlite3_vfs_register(vfs, 0) == ffi::SQLITE_OK }
}

/// The default VFS this one wraps.
struct BaseVfs(*mut ffi::sqlite3_vfs);
// SAFETY: SQLite's VFS objects are immutable once registered and may be
// used from any thread.
unsafe impl Send for BaseVfs {}
unsafe impl Sync for BaseVfs {}
static BASE: OnceLock<BaseVfs> = OnceLock::new();

/// An open main database file: SQLite's file header (its methods: these),
/// the window, then the base VFS's own file at [`INNER_AT`]. SQLite owns
/// the memory (`szOsFile` bytes); `x_open` writes the fields and `x_close`
/// drops them.
#[repr(C)]
struct File {
    base: ffi::sqlite3_file,
    window: Window,
}

/// Where the base VFS's file starts within a [`File`]'s memory.
const INNER_AT: usize = std::mem::size_of::<File>().next_multiple_of(16);

/// Bytes of the file from `start`, where the last read ended, and what
/// the windows read so far say of the next.
struct Window {
    /// [`WINDOW`] bytes once the first window is read; `len` of them hold
    /// the file's bytes from `start`.
    bytes: Vec<u8>,
    start: i64,
    len: usize,
    /// Bytes of this window read so far.
    used: usize,
    /// The offset just past the last read: a read starting here is in
    /// order.
    next: i64,
    /// Reads in a row that missed the window and started at `next`.
    run: u32,
    /// The run that reads ahead.
    need: u32,
    /// Bytes the next window reads ahead.
    ahead: usize,
    /// The file's size, asked once per lock held.
    size: Option<i64>,
}

impl Default for Window {
    fn default() -> Self {
        Window {
            bytes: Vec::new(),
            start: 0,
            len: 0,
            used: 0,
            next: 0,
            run: 0,
            need: RUN_BEFORE_AHEAD,
            ahead: MIN_AHEAD,
            size: None,
        }
    }
}

/// The base VFS's file within `file`.
///
/// # Safety
/// `file` is a [`File`] opened by [`x_open`].
unsafe fn inner(file: *mut ffi::sqlite3_file) -> *mut ffi::sqlite3_file {
    file.cast::<u8>().add(INNER_AT).cast()
}

/// The base VFS's methods of the inner file.
///
/// # Safety
/// `inner` is a file the base VFS opened.
unsafe fn methods(inner: *mut ffi::sqlite3_file) -> &'static ffi::sqlite3_io_methods {
    &*(*inner).pMethods
}

unsafe extern "C" fn x_open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let Some(BaseVfs(base)) = BASE.get() else {
        return ffi::SQLITE_ERROR;
    };
    let Some(open) = (**base).xOpen else {
        return ffi::SQLITE_ERROR;
    };
    if flags & ffi::SQLITE_OPEN_MAIN_DB == 0 {
        // Not a main database: the base VFS's own file, in this memory.
        return open(*base, name, file, flags, out_flags);
    }
    let inner = inner(file);
    (*file).pMethods = std::ptr::null();
    let rc = open(*base, name, inner, flags, out_flags);
    if (*inner).pMethods.is_null() {
        return rc; // nothing to close
    }
    std::ptr::addr_of_mut!((*file.cast::<File>()).window).write(Window::default());
    (*file).pMethods = &METHODS;
    rc
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: Some(x_shm_map),
    xShmLock: Some(x_shm_lock),
    xShmBarrier: Some(x_shm_barrier),
    xShmUnmap: Some(x_shm_unmap),
    xFetch: Some(x_fetch),
    xUnfetch: Some(x_unfetch),
};

/// The window of `file`.
///
/// # Safety
/// `file` is a [`File`] opened by [`x_open`], not closed.
unsafe fn window<'a>(file: *mut ffi::sqlite3_file) -> &'a mut Window {
    &mut (*file.cast::<File>()).window
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    std::ptr::drop_in_place(window(file));
    let inner = inner(file);
    methods(inner)
        .xClose
        .map_or(ffi::SQLITE_OK, |close| close(inner))
}

unsafe extern "C" fn x_read(
    file: *mut ffi::sqlite3_file,
    out: *mut c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    let (inner, w) = (inner(file), window(file));
    let Some(read) = methods(inner).xRead else {
        return ffi::SQLITE_IOERR_READ;
    };
    let n = usize::try_from(amount).unwrap_or(0);
    if !w.holds(offset, n) {
        w.judge();
        w.run = if offset == w.next { w.run + 1 } else { 0 };
        if w.run >= w.need && 4 * n <= w.ahead {
            w.fill(inner, read, offset);
        }
    }
    w.next = offset + i64::from(amount);
    if w.holds(offset, n) {
        let from = (offset - w.start) as usize;
        std::ptr::copy_nonoverlapping(w.bytes[from..from + n].as_ptr(), out.cast::<u8>(), n);
        w.used += n;
        return ffi::SQLITE_OK;
    }
    read(inner, out, amount, offset)
}

impl Window {
    /// Whether the window holds the `n` bytes at `offset`.
    fn holds(&self, offset: i64, n: usize) -> bool {
        offset >= self.start && offset + n as i64 <= self.start + self.len as i64
    }

    /// Reads the file's bytes from `offset`, `ahead` of them or up to its
    /// end; the window is left empty when that fails.
    ///
    /// # Safety
    /// `inner` is an open file of the base VFS, `read` its `xRead`.
    unsafe fn fill(
        &mut self,
        inner: *mut ffi::sqlite3_file,
        read: unsafe extern "C" fn(*mut ffi::sqlite3_file, *mut c_void, c_int, i64) -> c_int,
        offset: i64,
    ) {
        self.len = 0;
        if self.size.is_none() {
            let mut size = 0i64;
            let sized = methods(inner).xFileSize.map(|f| f(inner, &mut size));
            self.size = (sized == Some(ffi::SQLITE_OK)).then_some(size);
        }
        let Some(size) = self.size else { return };
        let len = (size - offset).clamp(0, self.ahead as i64) as usize;
        if len == 0 {
            return;
        }
        self.bytes.resize(WINDOW, 0);
        if read(inner, self.bytes.as_mut_ptr().cast(), len as c_int, offset) == ffi::SQLITE_OK {
            (self.start, self.len) = (offset, len);
        }
    }

    /// Drops the window, missed by a read, and sets the next by how much of
    /// it was read.
    fn judge(&mut self) {
        if self.len == 0 {
            return;
        }
        if 2 * self.used >= self.len {
            self.ahead = (2 * self.ahead).min(WINDOW);
            self.need = (self.need / 2).max(RUN_BEFORE_AHEAD);
        } else {
            self.ahead = MIN_AHEAD;
            if 4 * self.used < self.len {
                self.need = (2 * self.need).min(MAX_RUN_BEFORE_AHEAD);
            }
        }
        (self.len, self.used) = (0, 0);
    }

    /// Empties the window and forgets the size: the file may change.
    fn forget(&mut self) {
        (self.len, self.used, self.size) = (0, 0, None);
    }
}

/// Methods passed on to the base VFS's file: `$name` calls its `$method`
/// with the same arguments, or returns `$missing` when it has none. Those
/// marked `[forget]` first empty the window: they change the file, its
/// lock or, in WAL mode, the transaction (see the module's doc).
macro_rules! pass_on {
    ($($([$forget:ident])? $name:ident => $method:ident($($arg:ident: $ty:ty),*) -> $ret:ty, $missing:expr;)*) => {$(
        unsafe extern "C" fn $name(file: *mut ffi::sqlite3_file $(, $arg: $ty)*) -> $ret {
            $(window(file).$forget();)?
            let inner = inner(file);
            match methods(inner).$method {
                Some(f) => f(inner $(, $arg)*),
                None => $missing,
            }
        }
    )*};
}

pass_on! {
    [forget] x_write => xWrite(data: *const c_void, amount: c_int, offset: i64) -> c_int, ffi::SQLITE_IOERR_WRITE;
    [forget] x_truncate => xTruncate(size: i64) -> c_int, ffi::SQLITE_IOERR_TRUNCATE;
    [forget] x_lock => xLock(level: c_int) -> c_int, ffi::SQLITE_IOERR_LOCK;
    [forget] x_unlock => xUnlock(level: c_int) -> c_int, ffi::SQLITE_IOERR_UNLOCK;
    x_sync => xSync(flags: c_int) -> c_int, ffi::SQLITE_IOERR_FSYNC;
    x_file_size => xFileSize(size: *mut i64) -> c_int, ffi::SQLITE_IOERR_FSTAT;
    x_check_reserved_lock => xCheckReservedLock(out: *mut c_int) -> c_int, ffi::SQLITE_IOERR_CHECKRESERVEDLOCK;
    x_file_control => xFileControl(op: c_int, arg: *mut c_void) -> c_int, ffi::SQLITE_NOTFOUND;
    x_sector_size => xSectorSize() -> c_int, 4096;
    x_device_characteristics => xDeviceCharacteristics() -> c_int, 0;
    x_shm_map => xShmMap(page: c_int, size: c_int, extend: c_int, out: *mut *mut c_void) -> c_int, ffi::SQLITE_IOERR_SHMMAP;
    [forget] x_shm_lock => xShmLock(offset: c_int, n: c_int, flags: c_int) -> c_int, ffi::SQLITE_IOERR_SHMLOCK;
    x_shm_barrier => xShmBarrier() -> (), ();
    x_shm_unmap => xShmUnmap(delete: c_int) -> c_int, ffi::SQLITE_OK;
    x_fetch => xFetch(offset: i64, amount: c_int, out: *mut *mut c_void) -> c_int, {
        *out = std::ptr::null_mut();
        ffi::SQLITE_OK
    };
    x_unfetch => xUnfetch(offset: i64, page: *mut c_void) -> c_int, ffi::SQLITE_OK;
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::{Connection, OpenFlags};

    fn read_only(path: &std::path::Path) -> Connection {
        let name = vfs_name()
            .expect("the read-ahead VFS registers")
            .to_str()
            .unwrap();
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        Connection::open_with_flags_and_vfs(path, flags, name).unwrap()
    }

    /// The rows of `t` as `(id, blob)`, in id order.
    fn rows(c: &Connection) -> Vec<(i64, Vec<u8>)> {
        let mut s = c.prepare("SELECT id, b FROM t ORDER BY id").unwrap();
        let rows = s.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        rows.collect::<rusqlite::Result<_>>().unwrap()
    }

    /// A blob for row `id`, 200 to 9,000 bytes (some spill onto overflow
    /// pages), every byte known from `id` and `salt`.
    fn blob(id: i64, salt: u8) -> Vec<u8> {
        let n = 200 + (id as usize * 7919) % 8800;
        (0..n)
            .map(|i| (i as u8).wrapping_mul(31) ^ (id as u8) ^ salt)
            .collect()
    }

    fn fill(c: &Connection, ids: std::ops::Range<i64>, salt: u8) {
        let tx = c.unchecked_transaction().unwrap();
        for id in ids {
            let b = blob(id, salt);
            tx.execute("INSERT OR REPLACE INTO t VALUES (?1, ?2)", (id, b))
                .unwrap();
        }
        tx.commit().unwrap();
    }

    #[test]
    fn a_window_read_through_doubles_the_next_and_one_barely_read_waits_longer() {
        let mut w = Window::default();
        let window_of = |w: &mut Window, len: usize, used: usize| {
            (w.len, w.used) = (len, used);
            w.judge();
            assert_eq!((w.len, w.used), (0, 0), "judged windows are dropped");
            (w.ahead, w.need)
        };
        assert_eq!(
            window_of(&mut w, MIN_AHEAD, MIN_AHEAD),
            (2 * MIN_AHEAD, RUN_BEFORE_AHEAD)
        );
        assert_eq!(
            window_of(&mut w, 2 * MIN_AHEAD, MIN_AHEAD),
            (4 * MIN_AHEAD, RUN_BEFORE_AHEAD)
        );
        for _ in 0..8 {
            window_of(&mut w, WINDOW, WINDOW);
        }
        assert_eq!(w.ahead, WINDOW, "never past WINDOW");
        // Read a third through: smaller, same run; an eighth: a longer run.
        assert_eq!(
            window_of(&mut w, WINDOW, WINDOW / 3),
            (MIN_AHEAD, RUN_BEFORE_AHEAD)
        );
        assert_eq!(
            window_of(&mut w, MIN_AHEAD, MIN_AHEAD / 8),
            (MIN_AHEAD, 2 * RUN_BEFORE_AHEAD)
        );
        for _ in 0..10 {
            window_of(&mut w, MIN_AHEAD, 0);
        }
        assert_eq!(w.need, MAX_RUN_BEFORE_AHEAD, "never past the longest run");
        assert_eq!(
            window_of(&mut w, MIN_AHEAD, MIN_AHEAD).1,
            MAX_RUN_BEFORE_AHEAD / 2
        );
        w.judge();
        assert_eq!(
            w.need,
            MAX_RUN_BEFORE_AHEAD / 2,
            "no window, nothing learnt"
        );
    }

    #[test]
    fn a_database_read_through_the_window_reads_as_through_the_default_vfs() {
        for journal in ["DELETE", "WAL"] {
            let dir = std::env::temp_dir().join(format!(
                "hydroplot-readahead-{journal}-{}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("t.sqlite");
            let writer = Connection::open(&path).unwrap();
            writer.pragma_update(None, "journal_mode", journal).unwrap();
            writer
                .execute("CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)", [])
                .unwrap();
            fill(&writer, 0..3000, 0);
            let expected: Vec<(i64, Vec<u8>)> = (0..3000).map(|id| (id, blob(id, 0))).collect();

            let reader = read_only(&path);
            assert_eq!(rows(&reader), expected, "{journal}: a scan");
            let mut s = reader.prepare("SELECT b FROM t WHERE id = ?1").unwrap();
            for id in [2999, 5, 1500, 0, 2000] {
                let b: Vec<u8> = s.query_row([id], |r| r.get(0)).unwrap();
                assert_eq!(b, blob(id, 0), "{journal}: row {id} out of order");
            }
            drop(s);

            // Another connection changes every row and adds some between
            // two reads: the second read sees them all.
            fill(&writer, 0..4000, 1);
            let changed: Vec<(i64, Vec<u8>)> = (0..4000).map(|id| (id, blob(id, 1))).collect();
            assert_eq!(rows(&reader), changed, "{journal}: after a change");
            drop((reader, writer));
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    #[test]
    fn a_checkpointed_and_restarted_wal_is_read_anew_by_the_next_statement() {
        // In WAL mode a reader keeps its shared lock on the database file
        // from one transaction to the next. The reader scans `a`, whose
        // last window reaches on past it, onto `b`; another connection
        // changes `b` in place, checkpoints it into the file and starts a
        // new log (holding page 1): the reader's next query reads `b` from
        // the file, not from the window read before the change.
        let dir = std::env::temp_dir().join(format!(
            "hydroplot-readahead-restart-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.sqlite");
        let writer = Connection::open(&path).unwrap();
        writer.pragma_update(None, "journal_mode", "WAL").unwrap();
        writer.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
        writer
            .execute_batch(
                "CREATE TABLE a (v TEXT);
                 WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
                 INSERT INTO a SELECT printf('%050d', i) FROM n;
                 CREATE TABLE b (v TEXT);
                 INSERT INTO b VALUES ('before');
                 PRAGMA wal_checkpoint(TRUNCATE);",
            )
            .unwrap();

        let reader = read_only(&path);
        let scanned: i64 = reader
            .query_row("SELECT sum(length(v)) FROM a", [], |r| r.get(0))
            .unwrap();
        assert_eq!(scanned, 2000 * 50);

        writer
            .execute_batch(
                "UPDATE b SET v = 'after!';
                 PRAGMA wal_checkpoint(TRUNCATE);
                 CREATE TABLE page_one (x);",
            )
            .unwrap();

        let v: String = reader
            .query_row("SELECT v FROM b", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, "after!", "b read after the change");
        drop((reader, writer));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
