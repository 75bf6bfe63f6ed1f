//! The batch commands: `trace --points FILE` and `comid --points FILE`.
//! They read a point file (`hydroplot::points`), run the core's batch, and
//! write one output in input order plus, with `--errors`, the points that
//! failed; a failed point never stops the others. Progress goes to stderr
//! when it is a terminal.

use super::terminal::Terminal;
use super::{bad, context, Flags};
use hydroplot::lookup::comids_at_points;
use hydroplot::output::write_atomically_until;
use hydroplot::points::PointFile;
use hydroplot::services::flowtrace::raindrop_trace_batch;
use hydroplot::{Context, Result};
use std::path::{Path, PathBuf};

/// What both commands take.
struct Batch {
    ctx: Context,
    points: PointFile,
    crs: Option<String>,
    errors: Option<PathBuf>,
    /// False with `--no-overwrite`: no existing output is replaced.
    overwrite: bool,
    /// Flags of the command itself, with their values.
    own: Vec<(String, String)>,
}

impl Batch {
    /// Reads the flags every batch command shares; `own` lists the flags of
    /// the command, `outputs` those of them that name files it writes. Checks
    /// that no output names an input and that each can be written, then
    /// reads the points: all before any request.
    fn new(flags: &Flags, own: &[&str], outputs: &[&str]) -> Result<Batch> {
        let (mut file, mut crs, mut errors, mut mine) = (None, None, None, Vec::new());
        let mut overwrite = true;
        for (flag, v) in &flags.0 {
            match flag.as_str() {
                "--points" => file = Some(PathBuf::from(v)),
                "--crs" => crs = Some(v.clone()),
                "--errors" => errors = Some(PathBuf::from(v)),
                "--no-overwrite" => overwrite = false,
                "--option" => {}
                f if own.contains(&f) => mine.push((flag.clone(), v.clone())),
                other => return Err(bad(&format!("unknown flag {other}; try `hydroplot help`"))),
            }
        }
        let file = file.ok_or_else(|| bad("--points FILE is required"))?;
        let ctx = context(flags)?.with_observer(Some(Terminal::on_stderr(true)));
        // Inputs (the context's CA bundle too) and outputs never name one
        // file; each output can be written: all before any request.
        let read = ctx.files_read();
        let mut inputs: Vec<(&str, &Path)> = vec![("--points", &file)];
        inputs.extend(hydroplot::paths::as_pairs(&read));
        // The last of a flag given twice counts, as in `Batch::flag`.
        let last = |name: &str| mine.iter().rfind(|(f, _): &&(String, String)| f == name);
        let mut targets: Vec<(&str, &Path)> = Vec::new();
        for (flag, v) in outputs.iter().filter_map(|name| last(name)) {
            targets.push((flag.as_str(), Path::new(v)));
        }
        if let Some((flag, v)) = last("--hydro-data") {
            inputs.push((flag.as_str(), Path::new(v)));
        }
        if let Some(e) = &errors {
            targets.push(("--errors", e));
        }
        super::check_files(&inputs, &targets, overwrite)?;
        let points = PointFile::read(&file)?;
        Ok(Batch {
            ctx,
            points,
            crs,
            errors,
            overwrite,
            own: mine,
        })
    }

    /// The value of flag `name`: the last one given, as for `plot`.
    fn flag(&self, name: &str) -> Option<&str> {
        self.own
            .iter()
            .rfind(|(f, _)| f == name)
            .map(|(_, v)| v.as_str())
    }

    /// Writes the failures (`--errors`, else stderr) and the summary line.
    fn report(&self, failures: &[(usize, String)], done: &str) -> Result<()> {
        match &self.errors {
            Some(path) => write_atomically_until(path, self.overwrite, self.ctx.stop(), |w| {
                w.write_all(self.points.csv_header(&["error"]).as_bytes())?;
                for (i, message) in failures {
                    w.write_all(self.points.csv_row(*i, &[message]).as_bytes())?;
                }
                Ok(())
            })?,
            None => {
                for (i, message) in failures {
                    note!("point {i}: {message}");
                }
            }
        }
        note!("{done}, {} failed", failures.len());
        Ok(())
    }
}

/// `hydroplot trace --points FILE --geojson OUT`.
pub fn trace_points(flags: &Flags) -> Result<()> {
    let batch = Batch::new(flags, &["--direction", "--geojson"], &["--geojson"])?;
    let out = batch
        .flag("--geojson")
        .map(PathBuf::from)
        .ok_or_else(|| bad("trace --points needs --geojson OUT for the traces"))?;
    let xy = &batch.points.points;
    let results = raindrop_trace_batch(
        &batch.ctx,
        xy,
        batch.crs.as_deref(),
        batch.flag("--direction"),
    )?;
    let mut features = Vec::new();
    let mut failures = Vec::new();
    for (i, r) in results.iter().enumerate() {
        match r {
            Ok(t) => features.extend(t.to_features().into_iter().map(|mut f| {
                batch.points.annotate(i, &mut f.properties);
                f
            })),
            Err(e) => failures.push((i, e.to_string())),
        }
    }
    let text = hydroplot::feature::to_geojson(&features);
    write_atomically_until(&out, batch.overwrite, batch.ctx.stop(), |w| {
        w.write_all(&text)
    })?;
    let traced = results.len() - failures.len();
    batch.report(&failures, &format!("{traced} traced"))
}

/// `hydroplot comid --points FILE --out OUT.csv [--hydro-data GPKG]`.
pub fn comid(flags: &Flags) -> Result<()> {
    let batch = Batch::new(flags, &["--out", "--hydro-data"], &["--out"])?;
    let out = batch
        .flag("--out")
        .map(PathBuf::from)
        .ok_or_else(|| bad("comid needs --out OUT.csv"))?;
    let hydro_data = batch.flag("--hydro-data").map(Path::new);
    let results = comids_at_points(
        &batch.ctx,
        &batch.points.points,
        batch.crs.as_deref(),
        hydro_data,
    )?;
    let mut failures = Vec::new();
    let mut outside = 0;
    write_atomically_until(&out, batch.overwrite, batch.ctx.stop(), |w| {
        w.write_all(batch.points.csv_header(&["comid"]).as_bytes())?;
        for (i, r) in results.iter().enumerate() {
            let comid = match r {
                Ok(Some(c)) => c.to_string(),
                Ok(None) => {
                    outside += 1;
                    String::new()
                }
                Err(e) => {
                    failures.push((i, e.to_string()));
                    String::new()
                }
            };
            w.write_all(batch.points.csv_row(i, &[&comid]).as_bytes())?;
        }
        Ok(())
    })?;
    let found = results.len() - failures.len() - outside;
    batch.report(
        &failures,
        &format!("{found} resolved, {outside} in no catchment"),
    )
}
