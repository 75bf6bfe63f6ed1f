//! A shaped link in front of the mock's answers, for benchmarks that ask
//! how a client fares against the real services rather than loopback: one
//! bandwidth shared by every connection, and a fixed time from a request's
//! arrival to its answer's first byte (the round trip plus the server's
//! think time). Shaping here rather than in a TCP proxy because only the
//! server sees where one request ends and the next begins on a keep-alive
//! connection. Set with [`crate::MockServer::set_link`].
//!
//! The wire is a timeline of reservations: each piece of an answer (at most
//! [`CHUNK`] bytes) books the next free stretch of the link and is written
//! when that stretch ends, so concurrent answers interleave piece by piece
//! and together never pass the bandwidth.

use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A link's shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    /// The bandwidth every connection shares, bits per second.
    pub bits_per_s: u64,
    /// From a request's arrival to its answer's first byte.
    pub delay: Duration,
}

impl Link {
    /// Reads `RATE,DELAY`: a rate in `kbit`, `mbit` or `gbit` (decimal:
    /// 1 mbit = 10^6 bits per second) and a delay in `ms` or `s`, as
    /// `100mbit,40ms`.
    pub fn parse(spec: &str) -> Result<Link, String> {
        let bad = || format!("a link is RATE,DELAY such as 100mbit,40ms, not {spec:?}");
        let (rate, delay) = spec.split_once(',').ok_or_else(bad)?;
        let number = |s: &str, units: &[(&str, f64)]| {
            units.iter().find_map(|(unit, scale)| {
                let n: f64 = s.trim().strip_suffix(unit)?.trim().parse().ok()?;
                (n.is_finite() && n >= 0.0).then_some(n * scale)
            })
        };
        let bits = number(rate, &[("kbit", 1e3), ("mbit", 1e6), ("gbit", 1e9)])
            .filter(|&b| b >= 1.0)
            .ok_or_else(bad)?;
        let seconds = number(delay, &[("ms", 1e-3), ("s", 1.0)]).ok_or_else(bad)?;
        Ok(Link {
            bits_per_s: bits as u64,
            delay: Duration::from_secs_f64(seconds),
        })
    }

    /// How long `bytes` take to cross the link.
    pub fn transfer_time(&self, bytes: u64) -> Duration {
        Duration::from_secs_f64(bytes as f64 * 8.0 / self.bits_per_s as f64)
    }
}

/// The largest piece of an answer written at once.
const CHUNK: usize = 32 * 1024;

/// How much unused link time a writer that woke late may still claim (a
/// token bucket this deep): a sleeping thread wakes a little after its
/// stretch ends, and without it every wake-up would cost link time a real
/// link does not lose.
const SLACK: Duration = Duration::from_millis(5);

/// The link as the server's connections share it. Owned by the server's
/// shared state (an `Arc`, replaced when the link changes); every
/// connection thread writes its answers through it.
pub(crate) struct Pacer {
    link: Link,
    /// The instant the timeline counts from.
    epoch: Instant,
    wire: Mutex<Wire>,
}

/// The timeline's state.
#[derive(Default)]
struct Wire {
    /// When the link is next free, since the epoch.
    free_at: Duration,
    /// Bytes booked so far.
    bytes: u64,
}

impl Pacer {
    pub(crate) fn new(link: Link, epoch: Instant) -> Pacer {
        Pacer {
            link,
            epoch,
            wire: Mutex::new(Wire::default()),
        }
    }

    pub(crate) fn link(&self) -> Link {
        self.link
    }

    /// Books `len` bytes ready to go at `now` (since the epoch): they start
    /// when the link is free (or at `now` less the [`SLACK`] if it has been
    /// idle) and the returned time is when their last bit has crossed.
    fn book(&self, now: Duration, len: usize) -> Duration {
        let mut wire = self.wire.lock().unwrap_or_else(|p| p.into_inner());
        let start = wire.free_at.max(now.saturating_sub(SLACK));
        wire.free_at = start + self.link.transfer_time(len as u64);
        wire.bytes += len as u64;
        wire.free_at
    }

    /// Bytes written through the link so far.
    pub(crate) fn bytes(&self) -> u64 {
        self.wire.lock().unwrap_or_else(|p| p.into_inner()).bytes
    }

    /// Waits until the first byte of the answer to a request that arrived
    /// at `arrived` may leave: the link's delay after the arrival, whatever
    /// part of it the mock spent preparing the answer.
    pub(crate) fn await_first_byte(&self, arrived: Instant) {
        sleep_until(arrived + self.link.delay);
    }

    /// Writes `bytes` to `stream` piece by piece, each when its stretch of
    /// the link has passed.
    pub(crate) fn write(&self, stream: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
        for piece in bytes.chunks(CHUNK) {
            let done = self.book(self.epoch.elapsed(), piece.len());
            sleep_until(self.epoch + done);
            stream.write_all(piece)?;
        }
        Ok(())
    }
}

fn sleep_until(t: Instant) {
    let now = Instant::now();
    if t > now {
        std::thread::sleep(t - now);
    }
}

#[cfg(test)]
mod tests {
    use super::{Link, Pacer, CHUNK, SLACK};
    use std::time::{Duration, Instant};

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn specs_read_with_their_units() {
        let link = Link::parse("100mbit,40ms").unwrap();
        assert_eq!(link.bits_per_s, 100_000_000);
        assert_eq!(link.delay, 40 * MS);
        assert_eq!(
            Link::parse("2.5gbit, 0.5s").unwrap().bits_per_s,
            2_500_000_000
        );
        assert_eq!(Link::parse("800kbit,0ms").unwrap().delay, Duration::ZERO);
        for bad in [
            "100mbit",
            "100mb,40ms",
            "0mbit,40ms",
            "-1mbit,4ms",
            "100mbit,fast",
            "",
        ] {
            assert!(Link::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn transfer_time_is_bits_over_rate() {
        // 12,500,000 bytes = 10^8 bits: one second at 100 Mbit/s.
        let link = Link::parse("100mbit,40ms").unwrap();
        assert_eq!(link.transfer_time(12_500_000), Duration::from_secs(1));
        assert_eq!(link.transfer_time(125_000), 10 * MS);
    }

    /// The timeline's arithmetic with the clock given: 1 byte = 8 us at 1 Mbit/s.
    #[test]
    fn bookings_share_one_bandwidth_and_an_idle_link_keeps_no_credit() {
        let pacer = Pacer::new(Link::parse("1mbit,0ms").unwrap(), Instant::now());
        let us = Duration::from_micros;
        // Two answers ready at the same moment go one after the other.
        assert_eq!(pacer.book(us(0), 1000), us(8000));
        assert_eq!(pacer.book(us(0), 1000), us(16000));
        // A piece ready while the link is busy waits for it.
        assert_eq!(pacer.book(us(10000), 500), us(20000));
        // A writer that woke up to the slack late loses no link time...
        assert_eq!(pacer.book(us(20000) + SLACK, 500), us(24000));
        // ... but a link idle for longer starts from now less the slack,
        // not from when it fell idle: no burst of saved-up bandwidth.
        let later = us(100_000);
        assert_eq!(pacer.book(later, 1000), later - SLACK + us(8000));
        assert_eq!(pacer.bytes(), 4000);
    }

    #[test]
    fn answers_are_written_whole_in_pieces() {
        // A fast link, so the test does not wait: what it checks is bytes.
        let pacer = Pacer::new(Link::parse("100gbit,0ms").unwrap(), Instant::now());
        let body: Vec<u8> = (0..3 * CHUNK + 7).map(|i| i as u8).collect();
        let mut out = Vec::new();
        pacer.write(&mut out, &body).unwrap();
        assert_eq!(out, body);
        assert_eq!(pacer.bytes(), body.len() as u64);
    }
}
