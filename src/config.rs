//! Context settings: the option keys of `hydroplot_context_set_option`, their
//! defaults, validation and the `HYDROPLOT_<KEY>` environment overrides.

use crate::{Error, Result};
use std::path::PathBuf;
use std::time::Duration;

/// Which names the library uses in the paths it builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Names {
    /// The real USGS names: `nwissite`, `nhdflowline_network`, `nldi-flowtrace`.
    Usgs,
    /// The interface spec's neutral names: `gaugesite`, `flowline_network`, `index-flowtrace`.
    Neutral,
}

impl Names {
    /// `usgs` or `neutral`.
    pub fn parse(value: &str) -> std::result::Result<Names, &'static str> {
        match value {
            "usgs" => Ok(Names::Usgs),
            "neutral" => Ok(Names::Neutral),
            _ => Err("expected usgs or neutral"),
        }
    }

    /// The linked-data feature source of gauge sites.
    pub fn gauge_source(self) -> &'static str {
        match self {
            Names::Usgs => "nwissite",
            Names::Neutral => "gaugesite",
        }
    }

    /// The id of the flowtrace process.
    pub fn flowtrace_process(self) -> &'static str {
        match self {
            Names::Usgs => "nldi-flowtrace",
            Names::Neutral => "index-flowtrace",
        }
    }

    /// The option value naming this scheme.
    pub fn as_str(self) -> &'static str {
        match self {
            Names::Usgs => "usgs",
            Names::Neutral => "neutral",
        }
    }
}

/// Every option key, in the order of the API documentation.
pub const OPTION_KEYS: &[&str] = &[
    "index_url",
    "process_url",
    "fabric_url",
    "names",
    "tile_url",
    "tile_cache_dir",
    "tile_cache",
    "index_dir",
    "index",
    "timeout_s",
    "connect_timeout_s",
    "lock_timeout_s",
    "retries",
    "concurrency",
    "threads",
    "user_agent",
    "page_size",
    "rate_limit_per_s",
    "max_features",
    "ca_bundle",
    "proxy",
    "offline",
];

/// The most threads the `threads` option takes.
const MAX_THREADS: usize = 256;

/// Which proxy requests go through (option `proxy`).
#[derive(Clone, PartialEq, Eq)]
pub enum ProxySetting {
    /// The first set of `HTTPS_PROXY`, `ALL_PROXY`, `HTTP_PROXY`, and `NO_PROXY`
    /// (the default; read as curl reads them, `http::proxy`).
    Environment,
    /// No proxy, whatever the environment says (`proxy` = `none`).
    Off,
    /// This proxy URL (`http://[user:password@]host:port`); `NO_PROXY` still applies.
    Url(String),
}

impl std::fmt::Debug for ProxySetting {
    /// Never shows the proxy's credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProxySetting::Environment => f.write_str("Environment"),
            ProxySetting::Off => f.write_str("Off"),
            ProxySetting::Url(url) => {
                let shown = match url.split_once("://") {
                    Some((scheme, rest)) => {
                        let host = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
                        format!("{scheme}://{host}")
                    }
                    None => url.rsplit_once('@').map_or(url.as_str(), |(_, h)| h).into(),
                };
                write!(f, "Url({shown:?})")
            }
        }
    }
}

/// The settings of a context. Plain data: cloning is cheap enough.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Linked-data index service base, without a trailing slash.
    pub index_url: String,
    /// Base under which `processes/<flowtrace id>/execution` lives; `None` derives it from `index_url`.
    pub process_url: Option<String>,
    /// OGC API Features service base, without a trailing slash.
    pub fabric_url: String,
    /// Naming scheme of the paths built.
    pub names: Names,
    /// XYZ tile template overriding the basemap provider's.
    pub tile_url: Option<String>,
    /// Persistent tile cache directory.
    pub tile_cache_dir: PathBuf,
    /// Whether tiles are cached on disk at all (`tile_cache` = `on`/`off`).
    pub tile_cache: bool,
    /// Where `hydroplot index` keeps the index of a local GeoPackage
    /// (`index_dir`): never in the GeoPackage itself.
    pub index_dir: PathBuf,
    /// Whether the first plot of a local GeoPackage without a current
    /// index stores its network in `index_dir` for the next ones (`index`
    /// = `on`/`off`), and the basin parts of each large basin it plots.
    pub index: bool,
    /// The fewest reaches of the basin parts a plot makes for an index
    /// without parts yet; `None`: `gpkg::REACHES_PER_PART`. No option key
    /// sets it: smaller parts are for tests of the library.
    pub reaches_per_part: Option<usize>,
    /// Whole-request timeout.
    pub timeout: Duration,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// How long a call waits for another program's lock on a GeoPackage
    /// (SQLite's file lock) before it fails naming the lock; 0 = not at all.
    /// A cancel ends the wait at once.
    pub lock_timeout: Duration,
    /// Retries on network errors, 408, 429 and 5xx.
    pub retries: u32,
    /// Parallel requests (pages, tiles, batch traces), at least 1.
    pub concurrency: usize,
    /// Threads of the CPU work of one call (reading a GeoPackage in shares,
    /// dissolving basins), 1 to 256; by default the cores this process may
    /// use. No output depends on it: the same bytes whatever its value.
    pub threads: usize,
    /// The User-Agent header: `hydroplot/<version>` by default, naming no
    /// placeholder domain; users add their contact (`hydroplot/0.1.0
    /// (+mailto:you@example.org)`) as tile providers ask.
    pub user_agent: String,
    /// OGC API `limit`.
    pub page_size: u32,
    /// Requests per second from this context, all threads together; 0 = off.
    pub rate_limit_per_s: f64,
    /// Refuse a request that would return more features than this.
    pub max_features: u64,
    /// A PEM file of root certificates trusted besides the bundled and the
    /// system ones; unset, every bundle `SSL_CERT_FILE`, `REQUESTS_CA_BUNDLE`
    /// and `CURL_CA_BUNDLE` name (see `tls`).
    pub ca_bundle: Option<PathBuf>,
    /// The proxy requests go through.
    pub proxy: ProxySetting,
    /// Offline mode: no request is ever sent; caches and local files serve.
    pub offline: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            index_url: "https://api.water.usgs.gov/nldi".into(),
            process_url: None,
            fabric_url: "https://api.water.usgs.gov/fabric/pygeoapi".into(),
            names: Names::Usgs,
            tile_url: None,
            tile_cache_dir: cache_dir("tiles"),
            tile_cache: true,
            index_dir: cache_dir("index"),
            index: true,
            reaches_per_part: None,
            timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            lock_timeout: crate::cancel::DEFAULT_LOCK_TIMEOUT,
            retries: 3,
            concurrency: 4,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS)),
            user_agent: format!("hydroplot/{}", crate::VERSION),
            page_size: 500,
            rate_limit_per_s: 0.0,
            max_features: 1_000_000,
            ca_bundle: None,
            proxy: ProxySetting::Environment,
            offline: false,
        }
    }
}

impl Config {
    /// The defaults, then every `HYDROPLOT_<KEY>` environment variable that is set.
    /// An invalid value in the environment is an error naming the variable.
    pub fn from_env() -> Result<Config> {
        Config::from_env_and(&[])
    }

    /// [`Config::from_env`], then the `options` given (key, value) in order.
    /// A key given here is not read from the environment: an option a user
    /// names overrides a bad `HYDROPLOT_<KEY>` instead of failing on it.
    pub fn from_env_and(options: &[(&str, &str)]) -> Result<Config> {
        let mut config = Config::default();
        let given = |key: &str| options.iter().any(|(k, _)| *k == key);
        for key in OPTION_KEYS.iter().filter(|key| !given(key)) {
            let var = format!("HYDROPLOT_{}", key.to_ascii_uppercase());
            // An empty variable is an unset one (`HYDROPLOT_OFFLINE= cmd`),
            // as for SSL_CERT_FILE and the proxy variables.
            if let Some(value) = std::env::var_os(&var).filter(|v| !v.is_empty()) {
                let value = value.into_string().map_err(|_| {
                    Error::InvalidArgument(format!("environment variable {var} is not valid UTF-8"))
                })?;
                config
                    .set(key, &value)
                    .map_err(|e| e.context(&format!("environment variable {var}")))?;
            }
        }
        for (key, value) in options {
            config.set(key, value)?;
        }
        Ok(config)
    }

    /// Sets one option from its string form. Unknown keys and invalid values
    /// are `Error::InvalidArgument` naming the key; nothing changes on error.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        // A URL's credentials and keys never reach a message.
        let shown = crate::url::redact_url(value);
        let bad =
            |why: &str| Error::InvalidArgument(format!("option {key}: {why} (got {shown:?})"));
        match key {
            "index_url" => self.index_url = parse_url(value).map_err(|w| bad(&w))?,
            "process_url" => self.process_url = Some(parse_url(value).map_err(|w| bad(&w))?),
            "fabric_url" => self.fabric_url = parse_url(value).map_err(|w| bad(&w))?,
            "names" => self.names = Names::parse(value).map_err(bad)?,
            "tile_url" => {
                if !(value.contains("{z}") && value.contains("{x}") && value.contains("{y}")) {
                    return Err(bad("a tile template needs {z}, {x} and {y}"));
                }
                parse_url(value).map_err(|w| bad(&w))?;
                self.tile_url = Some(value.to_string());
            }
            "tile_cache_dir" => {
                if value.is_empty() {
                    return Err(bad("an empty path"));
                }
                self.tile_cache_dir = PathBuf::from(value);
            }
            "tile_cache" => self.tile_cache = parse_switch(value).map_err(bad)?,
            "index_dir" => {
                if value.is_empty() {
                    return Err(bad("an empty path"));
                }
                self.index_dir = PathBuf::from(value);
            }
            "index" => self.index = parse_switch(value).map_err(bad)?,
            "timeout_s" => self.timeout = parse_seconds(value).map_err(|w| bad(&w))?,
            "lock_timeout_s" => {
                self.lock_timeout = parse_seconds_or_zero(value).map_err(|w| bad(&w))?
            }
            "connect_timeout_s" => {
                self.connect_timeout = parse_seconds(value).map_err(|w| bad(&w))?
            }
            "retries" => self.retries = parse_int(value, 0, 20).map_err(|w| bad(&w))? as u32,
            "threads" => {
                self.threads =
                    parse_int(value, 1, MAX_THREADS as u64).map_err(|w| bad(&w))? as usize
            }
            "concurrency" => {
                self.concurrency = parse_int(value, 1, 64).map_err(|w| bad(&w))? as usize
            }
            "user_agent" => {
                if value.trim().is_empty() || value.chars().any(|c| c.is_control()) {
                    return Err(bad("a user agent must be non-empty printable text"));
                }
                self.user_agent = value.to_string();
            }
            "page_size" => {
                self.page_size = parse_int(value, 1, 10_000).map_err(|w| bad(&w))? as u32
            }
            "rate_limit_per_s" => {
                let r: f64 = value.trim().parse().map_err(|_| bad("not a number"))?;
                if !(r.is_finite() && r >= 0.0) {
                    return Err(bad("must be a finite number >= 0"));
                }
                self.rate_limit_per_s = r;
            }
            "max_features" => {
                self.max_features = parse_int(value, 1, u64::MAX / 2).map_err(|w| bad(&w))?
            }
            "ca_bundle" => {
                if value.is_empty() {
                    return Err(bad("an empty path"));
                }
                if !std::path::Path::new(value).is_file() {
                    return Err(bad("no such file (a PEM file of root certificates)"));
                }
                self.ca_bundle = Some(PathBuf::from(value));
            }
            // The value is never quoted back: it may hold a password.
            "proxy" => {
                self.proxy = parse_proxy(value)
                    .map_err(|why| Error::InvalidArgument(format!("option proxy: {why}")))?
            }
            "offline" => self.offline = parse_switch(value).map_err(bad)?,
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "unknown option key {key:?}; known keys: {}",
                    OPTION_KEYS.join(", ")
                )))
            }
        }
        Ok(())
    }

    /// The base under which `processes/<id>/execution` lives.
    pub fn process_base(&self) -> String {
        match (&self.process_url, self.names) {
            (Some(url), _) => url.clone(),
            (None, Names::Usgs) => format!("{}/pygeoapi", self.index_url),
            (None, Names::Neutral) => self.index_url.clone(),
        }
    }
}

fn parse_url(value: &str) -> Result<String, String> {
    let v = value.trim();
    let rest = v
        .strip_prefix("https://")
        .or_else(|| v.strip_prefix("http://"))
        .ok_or_else(|| "a URL must start with http:// or https://".to_string())?;
    if rest.is_empty()
        || rest.starts_with('/')
        || v.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err("not a valid URL".into());
    }
    Ok(v.trim_end_matches('/').to_string())
}

/// `on`/`true`/`yes`/`1` or `off`/`false`/`no`/`0`, in any case, spaces
/// around ignored (the R and Python bindings send logicals as
/// `TRUE`/`FALSE`); the error lists them all.
fn parse_switch(value: &str) -> Result<bool, &'static str> {
    match value.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err("expected on, true, yes or 1, or off, false, no or 0"),
    }
}

/// `none`, or an `http://` / `https://` proxy URL that ureq accepts.
fn parse_proxy(value: &str) -> Result<ProxySetting, String> {
    let v = value.trim();
    if v == "none" {
        return Ok(ProxySetting::Off);
    }
    let usable = (v.starts_with("http://") || v.starts_with("https://"))
        && !v.chars().any(|c| c.is_whitespace() || c.is_control())
        && ureq::Proxy::new(v).is_ok();
    if !usable {
        return Err(
            "expected none or a proxy URL http://[user:password@]host:port (or https://)".into(),
        );
    }
    Ok(ProxySetting::Url(v.to_string()))
}

fn parse_seconds(value: &str) -> Result<Duration, String> {
    match parse_seconds_or_zero(value)? {
        d if d.is_zero() => Err("seconds must be > 0 and <= 86400".into()),
        d => Ok(d),
    }
}

/// Seconds in 0..=86400 (0: no wait at all).
fn parse_seconds_or_zero(value: &str) -> Result<Duration, String> {
    let s: f64 = value
        .trim()
        .parse()
        .map_err(|_| "not a number of seconds".to_string())?;
    if !(s.is_finite() && (0.0..=86_400.0).contains(&s)) {
        return Err("seconds must be >= 0 and <= 86400".into());
    }
    Ok(Duration::from_secs_f64(s))
}

fn parse_int(value: &str, min: u64, max: u64) -> Result<u64, String> {
    let n: u64 = value
        .trim()
        .parse()
        .map_err(|_| "not a whole number".to_string())?;
    if n < min || n > max {
        return Err(format!("must be between {min} and {max}"));
    }
    Ok(n)
}

/// `$XDG_CACHE_HOME/hydroplot/<what>`, else `$HOME/.cache/hydroplot/<what>`
/// (`%LOCALAPPDATA%` on Windows), else the temp dir: the default tile cache
/// (`tiles`) and index directory (`index`).
fn cache_dir(what: &str) -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("LOCALAPPDATA").map(PathBuf::from))
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("hydroplot").join(what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_user_agent_is_name_and_version_only() {
        let ua = Config::default().user_agent;
        assert_eq!(ua, concat!("hydroplot/", env!("CARGO_PKG_VERSION")));
    }

    #[test]
    fn every_key_is_settable_and_unknown_keys_are_named() {
        let mut c = Config::default();
        for (k, v) in [
            ("index_url", "http://127.0.0.1:1/nldi/"),
            ("process_url", "http://127.0.0.1:1/p"),
            ("fabric_url", "http://127.0.0.1:1/f"),
            ("names", "neutral"),
            ("tile_url", "http://127.0.0.1:1/t/{z}/{x}/{y}.png"),
            ("tile_cache_dir", "/tmp/x"),
            ("tile_cache", "off"),
            ("index_dir", "/tmp/i"),
            ("index", "off"),
            ("timeout_s", "2.5"),
            ("connect_timeout_s", "1"),
            ("lock_timeout_s", "0"),
            ("retries", "0"),
            ("concurrency", "8"),
            ("threads", "7"),
            ("user_agent", "t/1"),
            ("page_size", "100"),
            ("rate_limit_per_s", "1.5"),
            ("max_features", "10"),
            ("ca_bundle", file!()),
            ("proxy", "http://u:p@127.0.0.1:3128"),
            ("offline", "on"),
        ] {
            c.set(k, v).unwrap();
        }
        assert_eq!(c.index_url, "http://127.0.0.1:1/nldi");
        assert_eq!(c.names, Names::Neutral);
        assert_eq!(c.concurrency, 8);
        assert!(c.offline);
        c.set("offline", "FALSE").unwrap();
        assert!(!c.offline);
        c.set("offline", " Yes ").unwrap();
        assert!(c.offline);
        c.set("offline", "no").unwrap();
        assert!(!c.offline);
        let e = c.set("offline", "maybe").unwrap_err().to_string();
        assert!(
            e.contains("on, true, yes or 1") && e.contains("\"maybe\""),
            "{e}"
        );
        assert_eq!(
            c.proxy,
            ProxySetting::Url("http://u:p@127.0.0.1:3128".into())
        );
        c.set("proxy", "none").unwrap();
        assert_eq!(c.proxy, ProxySetting::Off);
        let e = c.set("colour", "x").unwrap_err();
        assert!(e.to_string().contains("colour"));
    }

    #[test]
    fn invalid_values_change_nothing() {
        let mut c = Config::default();
        let before = c.clone();
        assert!(c.set("timeout_s", "-1").is_err());
        assert!(c.set("timeout_s", "0").is_err());
        assert!(c.set("lock_timeout_s", "-1").is_err());
        assert!(c.set("threads", "0").is_err());
        assert!(c.set("lock_timeout_s", "inf").is_err());
        assert!(c.set("index_url", "ftp://x").is_err());
        assert!(c.set("concurrency", "0").is_err());
        assert!(c.set("tile_url", "http://x/{z}/{x}").is_err());
        assert!(c.set("ca_bundle", "/no/such/ca.pem").is_err());
        assert!(c.set("offline", "maybe").is_err());
        assert!(c.set("proxy", "socks5://127.0.0.1:1080").is_err());
        assert_eq!(c, before);
    }

    #[test]
    fn proxy_credentials_stay_out_of_messages_and_debug() {
        let mut c = Config::default();
        let e = c.set("proxy", "ftp://agent:s3cret@proxy:1").unwrap_err();
        assert!(!e.to_string().contains("s3cret"), "{e}");
        // A refused URL is quoted without its secrets.
        for (key, value) in [
            ("tile_url", "https://t.example/{z}/{x}.png?apikey=s3cret"),
            ("index_url", "ftp://agent:s3cret@t.example/nldi"),
        ] {
            let e = c.set(key, value).unwrap_err().to_string();
            assert!(!e.contains("s3cret") && e.contains("t.example"), "{e}");
        }
        c.set("proxy", "http://agent:s3cret@proxy.example:3128")
            .unwrap();
        let shown = format!("{c:?}");
        assert!(
            !shown.contains("s3cret") && shown.contains("proxy.example:3128"),
            "{shown}"
        );
    }

    #[test]
    fn process_base_follows_names() {
        let mut c = Config::default();
        assert_eq!(c.process_base(), "https://api.water.usgs.gov/nldi/pygeoapi");
        c.set("names", "neutral").unwrap();
        assert_eq!(c.process_base(), "https://api.water.usgs.gov/nldi");
    }
}
