//! SQLite's own lock on the file a connection has open, taken through the
//! connection's file methods (its VFS), so that the cache reads a file's
//! header and replaces a damaged file under the very lock SQLite's readers
//! and writers respect, in this process and in others.
//!
//! Why not open the file a second time: on POSIX, closing any descriptor of
//! a file drops every lock the process holds on it, SQLite's included, so a
//! plain `File::open` and close beside a live connection would let another
//! process write under that connection's feet. Reading through SQLite's own
//! descriptor opens and closes nothing.

use rusqlite::{ffi, Connection};
use std::marker::PhantomData;
use std::os::raw::{c_int, c_void};
use std::time::{Duration, Instant};

/// A lock on the main database file of a connection, held until dropped.
/// It borrows the connection mutably, so that no SQL runs on it meanwhile
/// (its pager does not know of this lock).
pub struct FileLock<'c> {
    db: *mut ffi::sqlite3,
    file: *mut ffi::sqlite3_file,
    _conn: PhantomData<&'c mut Connection>,
}

impl<'c> FileLock<'c> {
    /// A shared lock: no writer changes the file while it is held. Waits up
    /// to `timeout` for a writer's commit to end.
    pub fn shared(conn: &'c mut Connection, timeout: Duration) -> Result<Self, String> {
        Self::acquire(conn, &[ffi::SQLITE_LOCK_SHARED], timeout)
    }

    /// An exclusive lock: nobody else reads or writes the file while it is
    /// held. Taken as SQLite's writers take it (shared, reserved,
    /// exclusive); waits up to `timeout` for the others to finish.
    pub fn exclusive(conn: &'c mut Connection, timeout: Duration) -> Result<Self, String> {
        let levels = [
            ffi::SQLITE_LOCK_SHARED,
            ffi::SQLITE_LOCK_RESERVED,
            ffi::SQLITE_LOCK_EXCLUSIVE,
        ];
        Self::acquire(conn, &levels, timeout)
    }

    /// Climbs `levels` in order; on a busy step it lets go of everything
    /// before it waits (a writer may be waiting for the lock held so far) and
    /// starts again.
    fn acquire(
        conn: &'c mut Connection,
        levels: &[c_int],
        timeout: Duration,
    ) -> Result<Self, String> {
        // SAFETY: the handle stays open while `conn` is borrowed, and
        // FILE_POINTER stores the main database's `sqlite3_file *` (or
        // nothing) in `file`.
        let db = unsafe { conn.handle() };
        let mut file: *mut ffi::sqlite3_file = std::ptr::null_mut();
        let rc = unsafe {
            ffi::sqlite3_file_control(
                db,
                c"main".as_ptr(),
                ffi::SQLITE_FCNTL_FILE_POINTER,
                (&mut file as *mut *mut ffi::sqlite3_file).cast::<c_void>(),
            )
        };
        // SAFETY: a non-null file from SQLite is an open file object.
        if rc != ffi::SQLITE_OK || file.is_null() || unsafe { (*file).pMethods.is_null() } {
            return Err("SQLite has no file open for it".into());
        }
        let lock = FileLock {
            db,
            file,
            _conn: PhantomData,
        };
        let deadline = Instant::now() + timeout;
        let mut pause = Duration::from_millis(1);
        loop {
            match levels.iter().try_for_each(|&level| lock.step(level)) {
                Ok(()) => return Ok(lock),
                Err(ffi::SQLITE_BUSY) if Instant::now() < deadline => {
                    lock.release();
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                Err(ffi::SQLITE_BUSY) => {
                    return Err(format!(
                        "another process kept it locked for {} s",
                        timeout.as_secs()
                    ))
                }
                Err(rc) => return Err(format!("it cannot be locked ({})", describe(rc))),
            }
        }
    }

    /// The file's methods.
    fn methods(&self) -> &ffi::sqlite3_io_methods {
        // SAFETY: checked non-null at acquisition; SQLite keeps the methods
        // while the file is open, which it is while the connection is borrowed.
        unsafe { &*(*self.file).pMethods }
    }

    /// Raises the lock to `level`: `Err(code)` when SQLite's lock call fails.
    fn step(&self, level: c_int) -> Result<(), c_int> {
        let lock = self.methods().xLock.ok_or(ffi::SQLITE_MISUSE)?;
        // SAFETY: the file is open (see `methods`).
        match unsafe { lock(self.file, level) } {
            ffi::SQLITE_OK => Ok(()),
            rc => Err(rc),
        }
    }

    /// Lets go of every level held.
    fn release(&self) {
        if let Some(unlock) = self.methods().xUnlock {
            // SAFETY: the file is open (see `methods`).
            unsafe { unlock(self.file, ffi::SQLITE_LOCK_NONE) };
        }
    }

    /// The first `n` bytes of the file, or all of it when it is shorter.
    pub fn read_start(&self, n: usize) -> Result<Vec<u8>, String> {
        let methods = self.methods();
        let (Some(file_size), Some(read)) = (methods.xFileSize, methods.xRead) else {
            return Err("SQLite cannot read it".into());
        };
        let mut size: ffi::sqlite3_int64 = 0;
        // SAFETY: the file is open; `size` and `buf` outlive the calls and
        // `buf` holds the `len` bytes asked for.
        let rc = unsafe { file_size(self.file, &mut size) };
        if rc != ffi::SQLITE_OK {
            return Err(format!("its size cannot be read ({})", describe(rc)));
        }
        let len = n.min(usize::try_from(size).unwrap_or(0));
        let mut buf = vec![0u8; len];
        let rc = unsafe { read(self.file, buf.as_mut_ptr().cast(), len as c_int, 0) };
        if rc != ffi::SQLITE_OK {
            return Err(format!("it cannot be read ({})", describe(rc)));
        }
        Ok(buf)
    }

    /// Whether the path the connection opened names another file by now
    /// (or none): another process replaced or removed it.
    pub fn has_moved(&self) -> Result<bool, String> {
        let mut moved: c_int = 0;
        // SAFETY: HAS_MOVED stores an int in `moved`; the handle is open.
        let rc = unsafe {
            ffi::sqlite3_file_control(
                self.db,
                c"main".as_ptr(),
                ffi::SQLITE_FCNTL_HAS_MOVED,
                (&mut moved as *mut c_int).cast::<c_void>(),
            )
        };
        match rc {
            ffi::SQLITE_OK => Ok(moved != 0),
            rc => Err(format!(
                "whether another process replaced it cannot be told ({})",
                describe(rc)
            )),
        }
    }
}

impl Drop for FileLock<'_> {
    fn drop(&mut self) {
        self.release();
    }
}

/// SQLite's description of a result code.
fn describe(rc: c_int) -> String {
    ffi::Error::new(rc).to_string()
}
