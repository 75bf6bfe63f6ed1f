//! Issue 24's benchmark over a real link: every flowline of the generated
//! 50k network fetched by bounding box through the mock shaped as the real
//! services are reached (100 Mbit/s shared by all connections, 40 ms from
//! each request to its first byte; `MockServer::set_link`), by the
//! `hydroplot` CLI (all columns and `--properties plot`, with and without
//! gzip) and by the Python peer (pynhd), each its own child process.
//!
//! Usage: `bench_link NETWORK.gpkg HYDROPLOT [PYTHON PEER_BBOX.py] [OUT.json]`,
//! where HYDROPLOT is the release CLI and PEER_BBOX.py is `bench/peer_bbox.py`.
//! `LINK=RATE,DELAY` changes the link (default `100mbit,40ms`).
//!
//! Each case runs once unshaped and untimed first, so the mock has made its
//! selection and compressed its answers before the timed run (a real
//! service does both on its own processors). The bound a case is held to
//! is measured, not guessed, from the mock's timeline of the timed run:
//! the bytes it put on the wire over the bandwidth, plus one delay per
//! round of requests the client's concurrency cannot overlap (requests
//! that ran alone, then the rest `in flight` at a time). With OUT.json,
//! each case's timeline is written beside it as `link_timeline_CASE.jsonl`.

use hydroplot_bench::{
    measured, network_box, printed_count, run, transfer_json, BoxArgs, Figures, Mock, Run,
};
use hydroplot_mock::{Link, Transfer};
use std::path::Path;
use std::time::Duration;

/// Features per page, pynhd FabricData's maximum, for both stacks.
const PAGE_SIZE: u32 = 1000;
/// Concurrent requests: hydroplot's default.
const CONCURRENCY: usize = 4;
const DEFAULT_LINK: &str = "100mbit,40ms";

/// Who fetches, and how.
enum Client {
    /// The CLI with these arguments after `plot --bbox B --flowline-only --no-plot --no-cache`.
    Hydroplot(&'static [&'static str]),
    /// `peer_bbox.py pynhd`.
    Peer,
}

struct Case {
    name: &'static str,
    gzip: bool,
    client: Client,
}

const CASES: [Case; 6] = [
    Case {
        name: "full",
        gzip: false,
        // Said outright: with no output the CLI would read only the plot's columns.
        client: Client::Hydroplot(&["--properties", "all"]),
    },
    Case {
        name: "full_gzip",
        gzip: true,
        client: Client::Hydroplot(&["--properties", "all"]),
    },
    Case {
        name: "plot",
        gzip: false,
        client: Client::Hydroplot(&["--properties", "plot"]),
    },
    Case {
        name: "plot_gzip",
        gzip: true,
        client: Client::Hydroplot(&["--properties", "plot"]),
    },
    Case {
        name: "py_full",
        gzip: false,
        client: Client::Peer,
    },
    Case {
        name: "py_full_gzip",
        gzip: true,
        client: Client::Peer,
    },
];

/// What the mock's timeline of one run shows.
#[derive(Debug, PartialEq)]
struct Shape {
    requests: usize,
    /// Head and body bytes on the wire.
    bytes: u64,
    /// The most requests in flight at once (arrived, last byte not written).
    in_flight: usize,
    /// Requests no other request overlapped.
    alone: usize,
    /// `alone` plus the others `in_flight` at a time.
    rounds: usize,
    /// From the first request's arrival to the last answer's last byte.
    span: Duration,
    /// Within the span, the time no answer was being written.
    idle: Duration,
}

fn shape(timeline: &[Transfer]) -> Shape {
    let n = timeline.len();
    let mut events: Vec<(Duration, i32)> = timeline
        .iter()
        .flat_map(|t| [(t.arrived, 1), (t.done, -1)])
        .collect();
    events.sort(); // at equal times an end (-1) comes before a start
    let (mut now, mut in_flight) = (0i32, 0i32);
    for (_, step) in &events {
        now += step;
        in_flight = in_flight.max(now);
    }
    let overlaps = |a: &Transfer, b: &Transfer| a.arrived < b.done && b.arrived < a.done;
    let alone = timeline
        .iter()
        .enumerate()
        .filter(|(i, a)| {
            timeline
                .iter()
                .enumerate()
                .all(|(j, b)| *i == j || !overlaps(a, b))
        })
        .count();
    let in_flight = in_flight.max(1) as usize;
    let start = timeline.iter().map(|t| t.arrived).min().unwrap_or_default();
    let end = timeline.iter().map(|t| t.done).max().unwrap_or_default();
    let mut sending: Vec<(Duration, Duration)> =
        timeline.iter().map(|t| (t.first_byte, t.done)).collect();
    sending.sort();
    let (mut busy, mut reached) = (Duration::ZERO, start);
    for (from, to) in sending {
        let from = from.max(reached);
        if to > from {
            busy += to - from;
            reached = to;
        }
    }
    Shape {
        requests: n,
        bytes: timeline.iter().map(|t| t.bytes).sum(),
        in_flight,
        alone,
        rounds: alone + (n - alone).div_ceil(in_flight),
        span: end.saturating_sub(start),
        idle: end.saturating_sub(start).saturating_sub(busy),
    }
}

/// How much later than `delay` after their requests the first bytes were
/// written, summed over the answers: the mock's own time preparing them
/// beyond the delay (which a busy machine stretches).
fn late_first_bytes(timeline: &[Transfer], delay: Duration) -> Duration {
    timeline
        .iter()
        .map(|t| (t.first_byte - t.arrived).saturating_sub(delay))
        .sum()
}

/// The bound a run is held to: its bytes over the bandwidth plus a delay
/// per round.
fn bound(link: &Link, s: &Shape) -> f64 {
    (link.transfer_time(s.bytes) + link.delay * s.rounds as u32).as_secs_f64()
}

fn main() {
    let BoxArgs {
        network,
        cli,
        peer,
        out,
    } = BoxArgs::from_env(
        "usage: bench_link NETWORK.gpkg HYDROPLOT [PYTHON PEER_BBOX.py] [OUT.json]",
    );
    let spec = std::env::var("LINK").unwrap_or_else(|_| DEFAULT_LINK.into());
    let link = Link::parse(&spec).unwrap_or_else(|e| panic!("LINK: {e}"));
    let work = std::env::temp_dir().join(format!("bench-link-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("work directory");
    let mut mock = Mock::start(&network);
    let bbox = network_box(&network);
    let env = mock.env(&work.join("tiles"), PAGE_SIZE, CONCURRENCY);
    let stats = work.join("time.txt");
    let base_url = mock.base_url.clone();
    let fetch = |client: &Client| -> (Run, f64) {
        match client {
            Client::Hydroplot(extra) => {
                let mut cmd = measured(&cli, &stats);
                cmd.args(["plot", "--bbox", &bbox, "--flowline-only"])
                    .args(["--no-plot", "--no-cache"])
                    .args(*extra)
                    .envs(env.iter().cloned());
                let r = run(&mut cmd, &stats);
                let n = printed_count(&r.stdout, "flowline");
                (r, n)
            }
            Client::Peer => {
                let (python, script) = peer.as_ref().expect("the peer");
                let own = work.join("peer.json");
                let mut cmd = measured(python, &stats);
                cmd.arg(script)
                    .args(["pynhd", &base_url, &bbox])
                    .arg(&own)
                    .arg(work.join("flowlines.pickle"));
                let mut r = run(&mut cmd, &stats);
                let own: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(&own).expect("the peer's figures"))
                        .expect("the peer's figures as JSON");
                // The peer's own fetch time, without its imports and pickle.
                r.wall = own["pynhd_wall"].as_f64().expect("pynhd_wall");
                (r, own["pynhd_flowlines"].as_f64().expect("pynhd_flowlines"))
            }
        }
    };
    let mut figures = Figures::default();
    figures.put("link_bits_per_s", link.bits_per_s as f64, "bit/s");
    figures.put("link_delay", link.delay.as_secs_f64(), "s");
    for case in CASES
        .iter()
        .filter(|c| peer.is_some() || matches!(c.client, Client::Hydroplot(_)))
    {
        mock.command(if case.gzip { "gzip on" } else { "gzip off" });
        mock.command("link off");
        fetch(&case.client); // untimed: the mock's selection and gzip answers made
        mock.take_log();
        mock.take_timeline();
        mock.command(&format!("link {spec}"));
        let (r, flowlines) = fetch(&case.client);
        let timeline = mock.take_timeline();
        mock.command("link off");
        mock.take_log();
        let s = shape(&timeline);
        let b = bound(&link, &s);
        let name = format!("link_{}", case.name);
        let put = |f: &mut Figures, what: &str, v: f64, unit: &str| {
            f.put(&format!("{name}_{what}"), v, unit)
        };
        put(&mut figures, "flowlines", flowlines, "flowlines");
        put(&mut figures, "wall", r.wall, "s");
        put(&mut figures, "cpu", r.cpu, "s");
        put(&mut figures, "peak_rss", r.peak_rss_mb, "MB");
        put(&mut figures, "requests", s.requests as f64, "requests");
        put(&mut figures, "bytes", s.bytes as f64 / 1e6, "MB");
        put(&mut figures, "in_flight", s.in_flight as f64, "requests");
        put(&mut figures, "alone", s.alone as f64, "requests");
        put(&mut figures, "rounds", s.rounds as f64, "rounds");
        put(&mut figures, "bound", b, "s");
        let wire = link.transfer_time(s.bytes).as_secs_f64();
        put(&mut figures, "bytes_over_bandwidth", wire, "s");
        put(&mut figures, "over_bound", r.wall / b, "x");
        put(&mut figures, "span", s.span.as_secs_f64(), "s");
        put(&mut figures, "wire_idle", s.idle.as_secs_f64(), "s");
        let late = late_first_bytes(&timeline, link.delay);
        put(&mut figures, "first_bytes_late", late.as_secs_f64(), "s");
        // The client's own time outside the wire's span: start-up, its
        // first request, and what it does after the last byte.
        put(
            &mut figures,
            "outside_span",
            r.wall - s.span.as_secs_f64(),
            "s",
        );
        if let Some(out) = &out {
            save_timeline(
                &Path::new(out).with_file_name(format!("{name}_timeline.jsonl")),
                &timeline,
            );
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    let table = targets(&figures);
    figures.save(out);
    println!("{table}");
}

fn save_timeline(path: &Path, timeline: &[Transfer]) {
    let lines: Vec<String> = timeline
        .iter()
        .map(|t| transfer_json(t).to_string() + "\n")
        .collect();
    std::fs::write(path, lines.concat()).expect("writing a timeline");
}

/// The targets beside the figures, as a text table.
fn targets(f: &Figures) -> String {
    let get = |k: &str| f.get(k).unwrap_or(f64::NAN);
    let mut rows = vec![format!(
        "{:<34} {:>8} {:>8} {:>7} {:>8} {:>9} {:>8} {:>7}  {}",
        "over the link",
        "wall s",
        "bound s",
        "ratio",
        "MB/bw s",
        "MB",
        "requests",
        "rounds",
        "target"
    )];
    for (case, label) in [
        ("full", "hydroplot, all columns"),
        ("full_gzip", "hydroplot, all columns, gzip"),
        ("plot", "hydroplot, --properties plot"),
        ("plot_gzip", "hydroplot, --properties plot, gzip"),
        ("py_full", "pynhd"),
        ("py_full_gzip", "pynhd, gzip"),
    ] {
        let k = |what: &str| get(&format!("link_{case}_{what}"));
        if k("wall").is_nan() {
            continue;
        }
        let ratio = k("over_bound");
        let target = match case.starts_with("py_") {
            true => String::new(),
            false => format!("<= 1.15x {}", if ratio <= 1.15 { "MET" } else { "NOT MET" }),
        };
        rows.push(format!(
            "{label:<34} {:>8.2} {:>8.2} {:>6.2}x {:>8.2} {:>9.1} {:>8.0} {:>7.0}  {target}",
            k("wall"),
            k("bound"),
            ratio,
            k("bytes_over_bandwidth"),
            k("bytes"),
            k("requests"),
            k("rounds"),
        ));
    }
    for (plot, full) in [("plot", "full"), ("plot_gzip", "full_gzip")] {
        let r = get(&format!("link_{plot}_wall")) / get(&format!("link_{full}_wall"));
        rows.push(format!(
            "{:<34} {:>8.2}x  <= 0.6x {}",
            format!("{plot} / {full} wall"),
            r,
            if r <= 0.6 { "MET" } else { "NOT MET" }
        ));
    }
    rows.join("\n")
}

#[cfg(test)]
mod tests {
    use super::{bound, late_first_bytes, shape, Shape};
    use hydroplot_mock::{Link, Transfer};
    use std::time::Duration;

    fn t(arrived: u64, first_byte: u64, done: u64, bytes: u64) -> Transfer {
        let ms = Duration::from_millis;
        Transfer {
            method: "GET".into(),
            target: "/".into(),
            arrived: ms(arrived),
            first_byte: ms(first_byte),
            done: ms(done),
            bytes,
        }
    }

    /// One page alone, then five with two in flight: 1 + ceil(5 / 2) rounds.
    #[test]
    fn a_timeline_is_read_into_rounds_bytes_and_idle_time() {
        let timeline = [
            t(0, 40, 100, 1000),
            t(100, 140, 200, 1000),
            t(100, 140, 220, 1000),
            t(200, 240, 300, 1000),
            t(220, 260, 330, 1000),
            t(300, 340, 400, 1000),
        ];
        let s = shape(&timeline);
        assert_eq!(
            s,
            Shape {
                requests: 6,
                bytes: 6000,
                in_flight: 2,
                alone: 1,
                rounds: 4,
                span: Duration::from_millis(400),
                // Nothing written in 0-40, 100-140, 220-240, 330-340.
                idle: Duration::from_millis(40 + 40 + 20 + 10),
            }
        );
        // 6000 bytes at 1 Mbit/s = 48 ms, plus 4 rounds of 40 ms.
        let link = Link::parse("1mbit,40ms").unwrap();
        assert!((bound(&link, &s) - 0.208).abs() < 1e-9);
        // Every first byte came 40 ms after its request: none late for a
        // 40 ms delay, 10 ms each for a 30 ms one.
        assert_eq!(
            late_first_bytes(&timeline, Duration::from_millis(40)),
            Duration::ZERO
        );
        assert_eq!(
            late_first_bytes(&timeline, Duration::from_millis(30)),
            Duration::from_millis(6 * 10)
        );
    }
}
