//! What hydroplot's benchmark programs share: the figures they print, the
//! process clock and memory readings, child processes measured by GNU time,
//! the loopback mock as a child process and the transfer bound (the mock's
//! logged requests replayed without parsing). Never run in CI;
//! `bench/compare.sh` runs the programs.

pub mod make_network;

use hydroplot::config::Config;
use hydroplot_mock::Transfer;
use serde_json::{json, Map as JsonMap, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// Figures, printed as they are measured and kept for the JSON output.
#[derive(Default)]
pub struct Figures(JsonMap<String, Value>);

impl Figures {
    pub fn put(&mut self, name: &str, value: f64, unit: &str) {
        println!("{name:<40} {value:>14.3} {unit}");
        self.0.insert(name.to_string(), json!(value));
    }

    /// A figure put earlier.
    /// A measured child process's wall time, CPU time and peak RSS, as
    /// `{name}_wall`, `{name}_cpu` and `{name}_peak_rss`.
    pub fn put_run(&mut self, name: &str, r: &Run) {
        self.put(&format!("{name}_wall"), r.wall, "s");
        self.put(&format!("{name}_cpu"), r.cpu, "s");
        self.put(&format!("{name}_peak_rss"), r.peak_rss_mb, "MB");
    }

    pub fn get(&self, name: &str) -> Option<f64> {
        self.0.get(name)?.as_f64()
    }

    pub fn save(self, out: Option<String>) {
        if let Some(out) = out {
            std::fs::write(&out, Value::Object(self.0).to_string()).expect("writing the figures");
        }
    }
}

/// CPU seconds used by this process so far (all threads). The machine the
/// benchmarks ran on was shared, so CPU time is reported beside wall time.
pub fn cpu_s() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for clock_gettime to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Resets the peak resident set size of this process (Linux, `clear_refs` 5).
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident set size since the last reset, MB.
pub fn peak_rss_mb() -> f64 {
    status_mb("VmHWM:")
}

/// A size line of /proc/self/status (`VmHWM:`, `VmRSS:`), MB.
pub fn status_mb(key: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// One line of a timeline: `{"method","target","arrived","first_byte",
/// "done","bytes"}`, times in seconds since the mock started.
pub fn transfer_json(t: &Transfer) -> Value {
    json!({
        "method": t.method,
        "target": t.target,
        "arrived": t.arrived.as_secs_f64(),
        "first_byte": t.first_byte.as_secs_f64(),
        "done": t.done.as_secs_f64(),
        "bytes": t.bytes,
    })
}

/// The mock server child process and its command pipe.
pub struct Mock {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    /// The mock's root URL, `http://127.0.0.1:PORT`.
    pub base_url: String,
}

impl Mock {
    pub fn start(network: &Path) -> Mock {
        Mock::start_with(network, &[])
    }

    /// The mock started with `options` after the file (`--link`, `--gzip`:
    /// see `bench_mock_server`).
    pub fn start_with(network: &Path, options: &[&str]) -> Mock {
        let exe = std::env::current_exe().expect("current exe");
        let server = exe.with_file_name("bench_mock_server");
        let mut child = Command::new(&server)
            .arg(network)
            .args(options)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", server.display()));
        let stdin = child.stdin.take().expect("stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("the mock's first line");
        let base_url = line
            .trim()
            .strip_prefix("listening ")
            .expect("listening <url>")
            .to_string();
        Mock {
            child,
            stdin,
            stdout,
            base_url,
        }
    }

    /// Sends one command to the mock (see `bench_mock_server`); its answer.
    /// Panics when the mock refuses it.
    pub fn command(&mut self, command: &str) -> String {
        writeln!(self.stdin, "{command}").expect("mock command");
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("mock answer");
        assert!(
            !line.starts_with("error"),
            "the mock refused {command:?}: {line}"
        );
        line.trim().to_string()
    }

    /// The JSON lines a command that writes a file (`log`, `timeline`) wrote.
    fn written_lines(&mut self, command: &str) -> Vec<Value> {
        let path =
            std::env::temp_dir().join(format!("bench-{command}-{}.jsonl", std::process::id()));
        self.command(&format!("{command} {}", path.display()));
        let text = std::fs::read_to_string(&path).expect("the mock's file");
        let _ = std::fs::remove_file(&path);
        text.lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }

    /// How each answer since the last call went out, in the order they
    /// were finished ([`transfer_json`]'s lines read back).
    pub fn take_timeline(&mut self) -> Vec<Transfer> {
        self.written_lines("timeline")
            .into_iter()
            .map(|v| {
                let s = |k: &str| Duration::from_secs_f64(v[k].as_f64().expect("a time"));
                Transfer {
                    method: v["method"].as_str().unwrap_or_default().to_string(),
                    target: v["target"].as_str().unwrap_or_default().to_string(),
                    arrived: s("arrived"),
                    first_byte: s("first_byte"),
                    done: s("done"),
                    bytes: v["bytes"].as_u64().expect("bytes"),
                }
            })
            .collect()
    }

    /// The requests received since the last call: (method, url, body).
    pub fn take_log(&mut self) -> Vec<(String, String, String)> {
        self.written_lines("log")
            .into_iter()
            .map(|v| {
                let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
                (
                    s("method"),
                    format!("{}{}", self.base_url, s("target")),
                    s("body"),
                )
            })
            .collect()
    }

    /// The configuration that points the library at this mock: its
    /// services, its tiles (cached in `tile_cache`), `page_size` features per
    /// page and `concurrency` requests at a time.
    pub fn config(&self, tile_cache: &Path, page_size: u32, concurrency: usize) -> Config {
        Config {
            index_url: format!("{}/nldi", self.base_url),
            fabric_url: format!("{}/fabric/pygeoapi", self.base_url),
            tile_url: Some(self.tile_url()),
            tile_cache_dir: tile_cache.to_path_buf(),
            timeout: Duration::from_secs(600),
            page_size,
            concurrency,
            ..Config::default()
        }
    }

    /// The same configuration as `HYDROPLOT_<KEY>` variables, for the CLI.
    pub fn env(
        &self,
        tile_cache: &Path,
        page_size: u32,
        concurrency: usize,
    ) -> Vec<(String, String)> {
        [
            ("HYDROPLOT_INDEX_URL", format!("{}/nldi", self.base_url)),
            (
                "HYDROPLOT_FABRIC_URL",
                format!("{}/fabric/pygeoapi", self.base_url),
            ),
            ("HYDROPLOT_TILE_URL", self.tile_url()),
            ("HYDROPLOT_TILE_CACHE_DIR", tile_cache.display().to_string()),
            ("HYDROPLOT_TIMEOUT_S", "600".into()),
            ("HYDROPLOT_PAGE_SIZE", page_size.to_string()),
            ("HYDROPLOT_CONCURRENCY", concurrency.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    fn tile_url(&self) -> String {
        format!("{}/tiles/{{z}}/{{x}}/{{y}}.png", self.base_url)
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The logged requests replayed with `concurrency` raw parallel requests,
/// bodies read and not parsed: (wall s, bytes, the fabric flowline page bodies).
pub fn replay(log: &[(String, String, String)], concurrency: usize) -> (f64, usize, Vec<Vec<u8>>) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(600)))
        .build()
        .into();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let t = Instant::now();
    let results: Vec<Vec<(usize, Vec<u8>)>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..concurrency)
            .map(|_| {
                s.spawn(|| {
                    let mut got = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((method, url, body)) = log.get(i) else {
                            break;
                        };
                        let response = match method.as_str() {
                            "POST" => agent
                                .post(url)
                                .header("Content-Type", "application/query-cql-json")
                                .send(body.as_bytes()),
                            _ => agent.get(url).call(),
                        };
                        let bytes = response
                            .expect("replayed request")
                            .body_mut()
                            .with_config()
                            .limit(u64::MAX)
                            .read_to_vec()
                            .expect("replayed body");
                        got.push((i, bytes));
                    }
                    got
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("worker"))
            .collect()
    });
    let wall = t.elapsed().as_secs_f64();
    let mut all: Vec<(usize, Vec<u8>)> = results.into_iter().flatten().collect();
    all.sort_by_key(|(i, _)| *i);
    let bytes = all.iter().map(|(_, b)| b.len()).sum();
    let pages = all
        .into_iter()
        .filter(|(i, _)| log[*i].1.contains("/collections/nhdflowline_network/items"))
        .map(|(_, b)| b)
        .collect();
    (wall, bytes, pages)
}

/// One child process, measured.
pub struct Run {
    pub wall: f64,
    pub cpu: f64,
    pub peak_rss_mb: f64,
    pub stdout: String,
}

/// A command for `program` run under GNU time, which reports its own
/// child's CPU time and peak RSS into `stats`. Through time, the figures
/// are the program's alone: a child spawned straight from this process
/// would inherit this process's resident size (the held pages at fork or
/// posix_spawn count towards the child's `ru_maxrss`).
pub fn measured(program: impl AsRef<std::ffi::OsStr>, stats: &Path) -> Command {
    let mut cmd = Command::new("/usr/bin/time");
    cmd.args(["-f", "%U %S %M", "-o"]).arg(stats).arg(program);
    cmd
}

/// Runs a [`measured`] command to completion; panics unless it exits with
/// status 0.
pub fn run(cmd: &mut Command, stats: &Path) -> Run {
    let t = Instant::now();
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let wall = t.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}); output:\n{stdout}",
        out.status
    );
    let text = std::fs::read_to_string(stats).expect("GNU time's figures");
    let figures: Vec<f64> = text
        .split_whitespace()
        .map(|v| v.parse().expect("a figure"))
        .collect();
    let [user, system, kb] = figures[..] else {
        panic!("GNU time wrote {text:?}");
    };
    Run {
        wall,
        cpu: user + system,
        peak_rss_mb: kb / 1024.0,
        stdout,
    }
}

/// A box around every flowline of `network` (the extent of its flowline
/// table in `gpkg_contents`, 0.01 degree wider each way), as the CLI's
/// `--bbox` and the peer take it.
pub fn network_box(network: &Path) -> String {
    let db =
        rusqlite::Connection::open_with_flags(network, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("the network GeoPackage");
    let [x0, y0, x1, y1]: [f64; 4] = db
        .query_row(
            "SELECT min_x, min_y, max_x, max_y FROM gpkg_contents WHERE table_name = 'NHDFlowline_Network'",
            [],
            |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?]),
        )
        .expect("the flowline extent");
    format!("{},{},{},{}", x0 - 0.01, y0 - 0.01, x1 + 0.01, y1 + 0.01)
}

/// The arguments of a program that runs the CLI beside the Python peer:
/// `NETWORK.gpkg HYDROPLOT [PYTHON PEER.py] [OUT.json]`.
pub struct BoxArgs {
    pub network: PathBuf,
    /// The release `hydroplot` CLI.
    pub cli: PathBuf,
    /// The Python interpreter and the peer's script.
    pub peer: Option<(String, String)>,
    /// Where the figures go as JSON.
    pub out: Option<String>,
}

impl BoxArgs {
    /// This process's arguments; panics with `usage` when they are not these.
    pub fn from_env(usage: &str) -> BoxArgs {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let (peer, out) = match args.len() {
            5 => (
                Some((args[2].clone(), args[3].clone())),
                Some(args[4].clone()),
            ),
            4 => (Some((args[2].clone(), args[3].clone())), None),
            3 => (None, Some(args[2].clone())),
            _ => (None, None),
        };
        BoxArgs {
            network: PathBuf::from(args.first().expect(usage)),
            cli: PathBuf::from(args.get(1).expect(usage)),
            peer,
            out,
        }
    }
}

/// The number the CLI printed for `layer` (`flowline     50650 features`).
pub fn printed_count(stdout: &str, layer: &str) -> f64 {
    stdout
        .lines()
        .find_map(|l| {
            let mut words = l.split_whitespace();
            (words.next() == Some(layer)).then(|| words.next()?.parse().ok())?
        })
        .unwrap_or_else(|| panic!("no {layer} count in:\n{stdout}"))
}
