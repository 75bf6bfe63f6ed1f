//! Headless Chromium for the HTML map tests: a fresh profile per run, every
//! background service off, killed when it overruns its deadline.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The Debian chromium binary.
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// Window size of every run, so the selftest's pixel positions hold on the screenshot.
const WINDOW: &str = "--window-size=1024,768";
/// Virtual time the page gets to load its tiles, in milliseconds.
const BUDGET_MS: u32 = 5000;
/// Wall-clock limit of one Chromium run.
const DEADLINE: Duration = Duration::from_secs(90);

/// A directory removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let dir =
            std::env::temp_dir().join(format!("hydroplot-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A decoded RGBA screenshot.
pub struct Screenshot {
    width: usize,
    height: usize,
    rgba: Vec<u8>,
}

impl Screenshot {
    /// RGB at (`x`, `y`).
    pub fn pixel(&self, x: usize, y: usize) -> [u8; 3] {
        let i = (y * self.width + x) * 4;
        [self.rgba[i], self.rgba[i + 1], self.rgba[i + 2]]
    }

    /// RGB of the pixels within `r` of (`x`, `y`) (CSS pixels, rounded).
    pub fn pixels_near(&self, x: f64, y: f64, r: i64) -> Vec<[u8; 3]> {
        let (cx, cy) = (x.round() as i64, y.round() as i64);
        let mut out = Vec::new();
        for py in cy - r..=cy + r {
            for px in cx - r..=cx + r {
                if (0..self.width as i64).contains(&px) && (0..self.height as i64).contains(&py) {
                    out.push(self.pixel(px as usize, py as usize));
                }
            }
        }
        out
    }
}

/// The browser.
pub struct Chromium {
    profile: TempDir,
}

impl Chromium {
    /// `None` when /usr/bin/chromium is absent (a local skip, said on
    /// stderr); under `CI=true` its absence fails the test
    /// ([`crate::support::tool::required`]).
    pub fn find() -> Option<Chromium> {
        let found = Path::new(CHROMIUM).exists().then(|| Chromium {
            profile: TempDir::new("chromium-profile"),
        });
        crate::support::tool::required(found, &format!("{CHROMIUM} (Debian chromium)"))
    }

    /// Runs Chromium on `file` with the extra `args`; its stdout.
    fn run(&self, args: &[String]) -> String {
        let out_path = self.profile.path().join("stdout.txt");
        let stdout = std::fs::File::create(&out_path).unwrap();
        let mut child = Command::new(CHROMIUM)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-quic",
                "--disable-default-apps",
                "--disable-extensions",
                "--hide-scrollbars",
                "--force-device-scale-factor=1",
                WINDOW,
            ])
            .arg(format!(
                "--user-data-dir={}",
                self.profile.path().join("profile").display()
            ))
            .arg(format!("--virtual-time-budget={BUDGET_MS}"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(Stdio::null())
            .spawn()
            .expect("chromium starts");
        let start = Instant::now();
        loop {
            match child.try_wait().unwrap() {
                Some(_) => break,
                None if start.elapsed() > DEADLINE => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("chromium did not finish within {DEADLINE:?}: {args:?}");
                }
                None => std::thread::sleep(Duration::from_millis(100)),
            }
        }
        std::fs::read_to_string(&out_path).unwrap()
    }

    /// Opens `file#selftest` and returns what the page wrote into
    /// `<pre id="hydroplot-selftest">`.
    pub fn selftest(&self, file: &Path) -> Value {
        let dom = self.run(&[
            "--dump-dom".into(),
            format!("file://{}#selftest", file.display()),
        ]);
        let start = dom
            .find("<pre id=\"hydroplot-selftest\">")
            .unwrap_or_else(|| {
                panic!(
                    "the page wrote no selftest result; DOM tail: {}",
                    &dom[dom.len().saturating_sub(2000)..]
                )
            })
            + 29;
        let end = start + dom[start..].find("</pre>").unwrap();
        let text = dom[start..end]
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&nbsp;", "\u{a0}")
            .replace("&amp;", "&");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("selftest result {text:?}: {e}"))
    }

    /// Opens `file` (with `fragment`, e.g. `#selftest`, or "") and
    /// screenshots the window to `png_path`; the decoded pixels.
    pub fn screenshot(&self, file: &Path, fragment: &str, png_path: &Path) -> Screenshot {
        self.run(&[
            format!("--screenshot={}", png_path.display()),
            format!("file://{}{fragment}", file.display()),
        ]);
        let decoder = png::Decoder::new(std::io::BufReader::new(
            std::fs::File::open(png_path).unwrap(),
        ));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        let (w, h) = (info.width as usize, info.height as usize);
        let rgba = match info.color_type {
            png::ColorType::Rgba => buf[..w * h * 4].to_vec(),
            png::ColorType::Rgb => buf[..w * h * 3]
                .chunks(3)
                .flat_map(|c| [c[0], c[1], c[2], 255])
                .collect(),
            other => panic!("unexpected screenshot colour type {other:?}"),
        };
        Screenshot {
            width: w,
            height: h,
            rgba,
        }
    }
}
