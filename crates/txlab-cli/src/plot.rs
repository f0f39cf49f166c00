//! `txlab plot DIR...`: charts from results directories' `results.json` (or such files under
//! any name), as SVG and PNG, next to the results or into `--out`.
//!
//! The x axes come from the runs: every coordinate that differs between them is one (`axes`):
//! threads, Zipf theta, and any number the files' `config` fixes (`--epoch-ms`,
//! `--clients-per-server`, `--servers`, `--nodes`, `--batch-epoch-us`, ... as
//! `engine.cluster.clients_per_server` and the like), so several directories that differ in one
//! flag plot as one sweep over it. A coordinate that groups the runs exactly as an earlier one
//! does (`--districts` scaled with `--servers`) is not drawn again; if nothing varies, the axis
//! is threads. Per workload (medians over repeats; one line per protocol and value of the other
//! varying coordinates):
//!
//! - `<workload>-throughput-vs-<axis>` (`-vs-threads`, `-vs-theta`, `-vs-clients-per-server`,
//!   ...): M txn/s against each varying coordinate;
//! - `<workload>-abort-rate`: conflict aborts in % against the first varying coordinate that is
//!   not threads (threads if none);
//! - `<workload>-latency` (or `<workload>-latency-theta<θ>`, one per theta when theta varied):
//!   p50 / p90 / p99 / p99.9 latency in µs (log scale) against the percentile;
//! - `<workload>-latency-cdf` (or `<workload>-latency-cdf-theta<θ>`): the latency CDF. The
//!   x axis is latency in µs on a log scale, the y axis the fraction of transactions with at most
//!   that latency. Each line is drawn from the run's `latency_cdf` (the merged per-thread
//!   histogram sampled at `runner::cdf_percentiles`); over repeats, the median latency at each
//!   percentile. Runs without a stored CDF (files from older versions) are left out.
//!
//! The throughput and abort-rate charts draw, at every point with more than one repeat, an error
//! bar over the 95 % bootstrap interval of the median (`txlab_harness::stats`).
//!
//! Every chart has its legend in a column right of the plot (so it never covers data). Runs
//! marked `oversubscribed` (more workers than physical cores) are flagged in every chart: a
//! series whose label names a thread count gets the suffix "(oversubscribed)", charts against
//! threads draw those points as hollow markers, and a note under the legend lists the
//! oversubscribed thread counts.
//!
//! Fonts: plotters renders text through `ab_glyph`, which needs a TrueType font registered at run
//! time. The first readable one of `$TXLAB_FONT`, common DejaVu/Liberation/Noto paths and any
//! `.ttf` under `/usr/share/fonts` is used; without one, plotting fails with a message saying
//! so (install `fonts-dejavu-core` or set `TXLAB_FONT`).

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use txlab_core::Error;
use txlab_harness::stats::{Estimate, median};

const FONT_CANDIDATES: [&str; 5] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
];

fn find_ttf(dir: &Path, depth: u32) -> Option<PathBuf> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut subdirs = Vec::new();
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            subdirs.push(p);
        } else if p.extension().is_some_and(|x| x.eq_ignore_ascii_case("ttf")) {
            return Some(p);
        }
    }
    if depth == 0 {
        return None;
    }
    subdirs.sort();
    subdirs.into_iter().find_map(|d| find_ttf(&d, depth - 1))
}

/// Registers a system TrueType font as plotters' `sans-serif` (once per process).
fn register_font() -> Result<(), Error> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            let candidates = std::env::var_os("TXLAB_FONT")
                .map(PathBuf::from)
                .into_iter()
                .chain(FONT_CANDIDATES.iter().map(PathBuf::from))
                .chain(find_ttf(Path::new("/usr/share/fonts"), 3));
            for path in candidates {
                if let Ok(bytes) = std::fs::read(&path) {
                    // plotters keeps fonts for the whole process; leaking the one font is intended.
                    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                    if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
                        .is_ok()
                    {
                        return Ok(());
                    }
                }
            }
            Err(
                "no TrueType font found for chart text: install fonts-dejavu-core or set \
                 TXLAB_FONT to a .ttf file"
                    .to_string(),
            )
        })
        .clone()
        .map_err(Error::Internal)
}

/// One run's numbers, as read from `results.json`.
#[derive(Debug, Clone, PartialEq)]
struct Point {
    protocol: String,
    workload: String,
    threads: f64,
    theta: Option<f64>,
    tps: f64,
    abort_rate: f64,
    p50: f64,
    p90: f64,
    p99: f64,
    p999: f64,
    /// (percentile, latency µs), ascending; empty if the file has none.
    cdf: Vec<(f64, f64)>,
    /// More workers than physical cores (`result.oversubscribed`; false if absent).
    oversubscribed: bool,
    /// Every number the run's file fixed in its `config` (`engine.cluster.clients_per_server`,
    /// `engine.epoch`, ...), by its path: the candidates for an x axis besides threads and
    /// theta ([`axes`]).
    config: BTreeMap<String, f64>,
}

/// Paths in `config` that are not a property of the runs: the rounds and the ratio's baseline,
/// the theta that every point overrides, and a `txlab cluster --out` launch's process count
/// (`engine.cluster.servers` + 1, which is the coordinate).
const NOT_COORDINATES: [&str; 4] = [
    "repeat",
    "baseline_threads",
    "params.theta",
    "cluster.local",
];

/// The numeric leaves of `v` (objects descended, arrays and non-numbers skipped), by their
/// dotted path under `prefix`.
fn numeric_leaves(prefix: &str, v: &Value, out: &mut BTreeMap<String, f64>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                numeric_leaves(&path, v, out);
            }
        }
        Value::Number(n) if !NOT_COORDINATES.contains(&prefix) => {
            if let Some(x) = n.as_f64() {
                out.insert(prefix.to_string(), x);
            }
        }
        _ => {}
    }
}

/// The results file of an input: `DIR/results.json` for a directory, else the file itself (a
/// `results.json` kept under another name).
fn results_file(input: &Path) -> PathBuf {
    if input.is_dir() {
        input.join("results.json")
    } else {
        input.to_path_buf()
    }
}

fn read_points(input: &Path) -> Result<Vec<Point>, Error> {
    let path = results_file(input);
    let bad = |accepted: String| Error::invalid("DIR", input.display(), accepted);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        bad(format!(
            "a directory holding results.json, or such a file ({e})"
        ))
    })?;
    let json: Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("a valid results.json ({e})")))?;
    let runs = json["runs"]
        .as_array()
        .ok_or_else(|| bad("a results.json with a `runs` array".into()))?;
    let mut config = BTreeMap::new();
    numeric_leaves("", &json["config"], &mut config);
    let num = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    Ok(runs
        .iter()
        .map(|r| Point {
            protocol: r["protocol"].as_str().unwrap_or("?").to_string(),
            workload: r["workload"].as_str().unwrap_or("?").to_string(),
            threads: num(&r["threads"]),
            theta: r["theta"].as_f64(),
            tps: num(&r["result"]["throughput_tps"]),
            abort_rate: num(&r["result"]["abort_rate"]),
            p50: num(&r["result"]["latency"]["p50_us"]),
            p90: num(&r["result"]["latency"]["p90_us"]),
            cdf: r["result"]["latency_cdf"]
                .as_array()
                .map(|pts| {
                    pts.iter()
                        .map(|p| (num(&p["percentile"]), num(&p["latency_us"])))
                        .filter(|(q, l)| q.is_finite() && l.is_finite())
                        .collect()
                })
                .unwrap_or_default(),
            p99: num(&r["result"]["latency"]["p99_us"]),
            p999: num(&r["result"]["latency"]["p999_us"]),
            oversubscribed: r["result"]["oversubscribed"].as_bool().unwrap_or(false),
            config: config.clone(),
        })
        .collect())
}

/// A coordinate of the runs that an x axis can take.
#[derive(Debug, Clone, PartialEq)]
enum Axis {
    /// Worker threads.
    Threads,
    /// Zipf theta (0 for workloads without one).
    Theta,
    /// A number of the run's `config`, by its dotted path.
    Config(String),
}

impl Axis {
    /// The run's value on this axis (NaN if its file does not fix it).
    fn of(&self, p: &Point) -> f64 {
        match self {
            Axis::Threads => p.threads,
            Axis::Theta => p.theta.unwrap_or(0.0),
            Axis::Config(k) => p.config.get(k).copied().unwrap_or(f64::NAN),
        }
    }

    /// The last segment of a config path, with spaces (`clients per server`).
    fn short(&self) -> String {
        match self {
            Axis::Threads => "threads".into(),
            Axis::Theta => "skew".into(),
            Axis::Config(k) => k.rsplit('.').next().unwrap_or(k).replace('_', " "),
        }
    }

    /// The axis description.
    fn desc(&self) -> String {
        match self {
            Axis::Threads => "worker threads".into(),
            Axis::Theta => "Zipf theta".into(),
            Axis::Config(k) => format!("{} ({k})", self.short()),
        }
    }

    /// The chart file's suffix after `-vs-`: the short name, or the whole config path where
    /// another of `axes` has the same short name (`engine-batch-concurrency`).
    fn stem(&self, axes: &[Axis]) -> String {
        match self {
            Axis::Threads => "threads".into(),
            Axis::Theta => "theta".into(),
            Axis::Config(k) => {
                let short = self.short();
                if axes.iter().any(|a| a != self && a.short() == short) {
                    k.replace(['.', '_'], "-")
                } else {
                    short.replace(' ', "-")
                }
            }
        }
    }

    /// What a series label adds for a run's value on this axis (`2t`, `theta=0.99`,
    /// `clients per server=40`), [`OVERSUBSCRIBED`] after an oversubscribed thread count.
    fn label(&self, p: &Point) -> String {
        match self {
            Axis::Threads => format!(
                " {}t{}",
                p.threads,
                if p.oversubscribed { OVERSUBSCRIBED } else { "" }
            ),
            Axis::Theta => theta_label(p.theta),
            Axis::Config(_) => format!(" {}={}", self.short(), self.of(p)),
        }
    }
}

/// The coordinates the runs of `pts` vary in: threads, then theta, then the numbers of their
/// files' `config` by path; one that orders the runs into the same groups as an earlier one
/// (`--districts` set with `--servers`) is left out. Threads if nothing varies.
fn axes(pts: &[&Point]) -> Vec<Axis> {
    let mut keys: Vec<&String> = pts.iter().flat_map(|p| p.config.keys()).collect();
    keys.sort();
    keys.dedup();
    let candidates = [Axis::Threads, Axis::Theta]
        .into_iter()
        .chain(keys.into_iter().map(|k| Axis::Config(k.clone())));
    let mut chosen: Vec<(Axis, Vec<usize>)> = Vec::new();
    for axis in candidates {
        let values: Vec<u64> = pts.iter().map(|p| axis.of(p).to_bits()).collect();
        // Each run's group: the index of the first run with its value.
        let groups: Vec<usize> = values
            .iter()
            .map(|v| values.iter().position(|w| w == v).unwrap_or(0))
            .collect();
        let varies = groups.iter().any(|&g| g != 0);
        if varies && chosen.iter().all(|(_, g)| *g != groups) {
            chosen.push((axis, groups));
        }
    }
    if chosen.is_empty() {
        return vec![Axis::Threads];
    }
    chosen.into_iter().map(|(a, _)| a).collect()
}

/// The series label of `p` on a chart: its protocol and its values on `others`.
fn label_on(p: &Point, others: &[&Axis]) -> String {
    let mut s = p.protocol.clone();
    for a in others {
        s.push_str(&a.label(p));
    }
    s
}

type Series = Vec<(String, Vec<(f64, f64)>)>;
/// Per series (in [`Series`] order), `(x, lo, hi)`: the 95 % bootstrap interval of the median
/// over the repeats at x.
type Bars = Vec<Vec<(f64, f64, f64)>>;

/// Named series of (x, the values over repeats).
type Grouped = Vec<(String, Vec<(f64, Vec<f64>)>)>;

/// Groups points into named series (sorted by name) of (x, the values over repeats) sorted by x.
fn grouped(
    points: &[&Point],
    name: impl Fn(&Point) -> String,
    x: impl Fn(&Point) -> f64,
    y: impl Fn(&Point) -> f64,
) -> Grouped {
    let mut groups: BTreeMap<String, BTreeMap<u64, (f64, Vec<f64>)>> = BTreeMap::new();
    for p in points {
        let e = groups
            .entry(name(p))
            .or_default()
            .entry(x(p).to_bits())
            .or_insert((x(p), Vec::new()));
        e.1.push(y(p));
    }
    groups
        .into_iter()
        .map(|(n, xs)| {
            let mut pts: Vec<(f64, Vec<f64>)> = xs.into_values().collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            (n, pts)
        })
        .collect()
}

/// Groups points into named series of (x, median y) sorted by x.
fn series(
    points: &[&Point],
    name: impl Fn(&Point) -> String,
    x: impl Fn(&Point) -> f64,
    y: impl Fn(&Point) -> f64,
) -> Series {
    series_with_bars(points, name, x, y).0
}

/// The medians of [`series`] and their bootstrap intervals ([`Bars`]).
fn series_with_bars(
    points: &[&Point],
    name: impl Fn(&Point) -> String,
    x: impl Fn(&Point) -> f64,
    y: impl Fn(&Point) -> f64,
) -> (Series, Bars) {
    let groups = grouped(points, name, x, y);
    let bars = groups
        .iter()
        .map(|(_, xs)| {
            xs.iter()
                .filter_map(|(x, ys)| Estimate::of(ys).map(|e| (*x, e.lo, e.hi)))
                .collect()
        })
        .collect();
    let data = groups
        .into_iter()
        .map(|(n, xs)| (n, xs.into_iter().map(|(x, ys)| (x, median(&ys))).collect()))
        .collect();
    (data, bars)
}

/// Ten well-separated colours that read on white (matplotlib's "tab10").
const PALETTE: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

/// The colour of series `i` (the legend uses the same).
fn series_color(i: usize) -> RGBAColor {
    match PALETTE.get(i) {
        Some(&(r, g, b)) => RGBColor(r, g, b).to_rgba(),
        None => Palette99::pick(i).to_rgba(),
    }
}

/// Draws each series as a coloured line, with point markers if `markers`: filled, or hollow and
/// larger at an x in `hollow_x` (oversubscribed thread counts).
fn draw_lines<'a, DB: DrawingBackend + 'a, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    data: &Series,
    markers: bool,
    hollow_x: &[f64],
) -> Result<(), String>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    for (i, (_, pts)) in data.iter().enumerate() {
        let color = series_color(i);
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
            .map_err(e)?;
        if markers {
            chart
                .draw_series(pts.iter().map(|&p| {
                    if hollow_x.contains(&p.0) {
                        Circle::new(p, 5, color.stroke_width(2))
                    } else {
                        Circle::new(p, 3, color.filled())
                    }
                }))
                .map_err(e)?;
        }
    }
    Ok(())
}

/// Width of the legend column right of the plot, in pixels.
const LEGEND_WIDTH: u32 = 270;

/// Breaks `text` into lines no wider than `width` pixels in `style`: at each newline, and at
/// spaces where a line would be too wide.
fn wrap<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
    width: u32,
) -> Vec<String> {
    let fits = |line: &str| {
        area.estimate_text_size(line, style)
            .is_ok_and(|(w, _)| w <= width)
    };
    let mut lines = Vec::new();
    for paragraph in text.lines() {
        let mut line = String::new();
        for word in paragraph.split(' ') {
            if line.is_empty() {
                line = word.to_string();
            } else if fits(&format!("{line} {word}")) {
                line = format!("{line} {word}");
            } else {
                lines.push(std::mem::replace(&mut line, word.to_string()));
            }
        }
        lines.push(line);
    }
    lines
}

/// Fills `root`, draws the title, and the legend (one entry per series, in the series'
/// colours, then `note` in dark red) in a column at the right. Returns the area left for the
/// plot.
fn frame<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    data: &Series,
    markers: bool,
    note: Option<&str>,
) -> Result<DrawingArea<DB, Shift>, String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let body = root.titled(title, ("sans-serif", 22)).map_err(e)?;
    let (w, h) = body.dim_in_pixel();
    let (plot, legend) = body.split_horizontally(w.saturating_sub(LEGEND_WIDTH));
    // Entries 20 px apart, closer (and smaller) if there are many.
    let n = data.len().max(1) as u32;
    let step = (h.saturating_sub(120) / n).clamp(10, 20) as i32;
    let font = (step - 5).clamp(9, 15);
    let text = TextStyle::from(("sans-serif", font).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let mut y = 30;
    for (i, (name, _)) in data.iter().enumerate() {
        let color = series_color(i);
        legend
            .draw(&PathElement::new(
                vec![(8, y), (32, y)],
                color.stroke_width(2),
            ))
            .map_err(e)?;
        if markers {
            legend
                .draw(&Circle::new((20, y), 3, color.filled()))
                .map_err(e)?;
        }
        legend
            .draw(&Text::new(name.clone(), (38, y), text.clone()))
            .map_err(e)?;
        y += step;
    }
    if let Some(note) = note {
        let style = TextStyle::from(("sans-serif", 13).into_font())
            .color(&RGBColor(150, 0, 0))
            .pos(Pos::new(HPos::Left, VPos::Center));
        y += 10;
        for line in wrap(&legend, note, &style, LEGEND_WIDTH - 16) {
            legend
                .draw(&Text::new(line, (8, y), style.clone()))
                .map_err(e)?;
            y += 16;
        }
    }
    Ok(plot)
}

/// A latency CDF chart: x latency in µs on a log scale, y the fraction of transactions at or
/// below it.
fn draw_cdf<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    data: &Series,
    note: Option<&str>,
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let plot = frame(root.clone(), title, data, false, note)?;
    let (x0, x1) = log_bounds(data.iter().flat_map(|s| s.1.iter().map(|p| p.0)));
    let mut chart = ChartBuilder::on(&plot)
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((x0..x1).log_scale(), 0.0..1.0)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("latency (µs, log scale)")
        .y_desc("fraction of transactions ≤ latency")
        .x_label_formatter(&|x| format_latency(*x))
        .draw()
        .map_err(e)?;
    draw_lines(&mut chart, data, false, &[])?;
    root.present().map_err(e)?;
    Ok(())
}

/// A tick label for a latency in µs: no more digits than the scale needs.
fn format_latency(us: f64) -> String {
    if us >= 100.0 {
        format!("{us:.0}")
    } else if us >= 1.0 {
        format!("{}", (us * 10.0).round() / 10.0)
    } else {
        format!("{}", (us * 1000.0).round() / 1000.0)
    }
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    (x_desc, y_desc): (&str, &str),
    data: &Series,
    (hollow_x, bars): (&[f64], &Bars),
    note: Option<&str>,
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let plot = frame(root.clone(), title, data, true, note)?;
    let xs = data.iter().flat_map(|s| s.1.iter().map(|p| p.0));
    let (mut x0, mut x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    if x1 - x0 < 1e-9 {
        (x0, x1) = (x0 - 0.5, x1 + 0.5);
    }
    let y1 = data
        .iter()
        .flat_map(|s| s.1.iter().map(|p| p.1))
        .chain(bars.iter().flatten().map(|b| b.2))
        .filter(|y| y.is_finite())
        .fold(0.0, f64::max);
    let y1 = if y1 > 0.0 { y1 * 1.1 } else { 1.0 };
    let mut chart = ChartBuilder::on(&plot)
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, 0.0..y1)
        .map_err(e)?;
    // Integer x values (thread counts) get one tick per integer, not fractional ones.
    let integral = data
        .iter()
        .flat_map(|s| s.1.iter())
        .all(|p| p.0.fract() == 0.0)
        && x1 - x0 <= 20.0;
    let x_labels = if integral { (x1 - x0) as usize + 1 } else { 10 };
    chart
        .configure_mesh()
        .x_labels(x_labels)
        .x_label_formatter(&|x| {
            if integral {
                if (x - x.round()).abs() < 1e-9 {
                    format!("{x:.0}")
                } else {
                    String::new()
                }
            } else {
                format!("{}", (x * 1000.0).round() / 1000.0)
            }
        })
        .x_desc(x_desc)
        .y_desc(y_desc)
        .draw()
        .map_err(e)?;
    draw_lines(&mut chart, data, true, hollow_x)?;
    for (i, (series, bars)) in data.iter().zip(bars).enumerate() {
        let color = series_color(i);
        chart
            .draw_series(
                bars.iter()
                    .filter(|b| b.2 > b.1)
                    .filter_map(|&(x, lo, hi)| {
                        let mid = series.1.iter().find(|p| p.0 == x)?.1;
                        Some(ErrorBar::new_vertical(
                            x,
                            lo,
                            mid,
                            hi,
                            color.stroke_width(2),
                            10,
                        ))
                    }),
            )
            .map_err(e)?;
    }
    root.present().map_err(e)?;
    Ok(())
}

const CHART_SIZE: (u32, u32) = (1100, 560);

/// What kind of chart to draw from a [`Series`].
#[derive(Debug, Clone, Copy)]
enum Chart<'a> {
    /// Linear axes with these descriptions, point markers on the lines (hollow at an x in
    /// `hollow_x`), error bars at the bootstrap intervals of `bars`.
    Linear {
        x: &'a str,
        y: &'a str,
        hollow_x: &'a [f64],
        bars: &'a Bars,
    },
    /// x: index into [`PERCENTILES`]; y: latency in µs on a log scale.
    Percentiles,
    /// x: latency in µs on a log scale; y: fraction of transactions.
    Cdf,
}

/// The percentiles of the latency chart, by x position.
const PERCENTILES: [&str; 4] = ["p50", "p90", "p99", "p99.9"];

fn draw_chart<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    chart: Chart<'_>,
    data: &Series,
    note: Option<&str>,
) -> Result<(), String> {
    match chart {
        Chart::Linear {
            x,
            y,
            hollow_x,
            bars,
        } => draw(root, title, (x, y), data, (hollow_x, bars), note),
        Chart::Percentiles => draw_percentiles(root, title, data, note),
        Chart::Cdf => draw_cdf(root, title, data, note),
    }
}

/// Draws one chart as `<stem>.svg` and `<stem>.png`; `note` goes under the legend.
fn render(
    dir: &Path,
    stem: &str,
    title: &str,
    chart: Chart<'_>,
    data: &Series,
    note: Option<&str>,
) -> Result<Vec<PathBuf>, Error> {
    let svg = dir.join(format!("{stem}.svg"));
    let png = dir.join(format!("{stem}.png"));
    draw_chart(
        SVGBackend::new(&svg, CHART_SIZE).into_drawing_area(),
        title,
        chart,
        data,
        note,
    )
    .map_err(|e| Error::Internal(format!("drawing {}: {e}", svg.display())))?;
    draw_chart(
        BitMapBackend::new(&png, CHART_SIZE).into_drawing_area(),
        title,
        chart,
        data,
        note,
    )
    .map_err(|e| Error::Internal(format!("drawing {}: {e}", png.display())))?;
    Ok(vec![svg, png])
}

/// The smallest and largest positive finite values, widened by a factor 1.5 for a log axis.
fn log_bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if lo.is_finite() {
        (lo / 1.5, hi * 1.5)
    } else {
        (1.0, 10.0)
    }
}

/// Latency percentiles: x the percentile (p50 … p99.9), y latency in µs on a log scale.
fn draw_percentiles<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    data: &Series,
    note: Option<&str>,
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let plot = frame(root.clone(), title, data, true, note)?;
    let (y0, y1) = log_bounds(data.iter().flat_map(|s| s.1.iter().map(|p| p.1)));
    let last = (PERCENTILES.len() - 1) as f64;
    let mut chart = ChartBuilder::on(&plot)
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.2..last + 0.2, (y0..y1).log_scale())
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_labels(PERCENTILES.len())
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                PERCENTILES
                    .get(i as usize)
                    .map_or_else(String::new, |p| p.to_string())
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|y| format_latency(*y))
        .x_desc("percentile")
        .y_desc("latency (µs, log scale)")
        .draw()
        .map_err(e)?;
    draw_lines(&mut chart, data, true, &[])?;
    root.present().map_err(e)?;
    Ok(())
}

/// CDF series: one per `name`, x the latency (µs) and y the fraction (0..=1), the median latency
/// over the group's runs at each percentile; runs without a CDF are skipped.
fn cdf_series(points: &[&Point], name: impl Fn(&Point) -> String) -> Series {
    let mut groups: BTreeMap<String, BTreeMap<u64, (f64, Vec<f64>)>> = BTreeMap::new();
    for p in points {
        if p.cdf.is_empty() {
            continue;
        }
        let g = groups.entry(name(p)).or_default();
        for &(q, l) in &p.cdf {
            g.entry(q.to_bits()).or_insert((q, Vec::new())).1.push(l);
        }
    }
    groups
        .into_iter()
        .map(|(n, qs)| {
            let mut pts: Vec<(f64, f64)> = qs
                .into_values()
                .map(|(q, ls)| (median(&ls), q / 100.0))
                .collect();
            pts.sort_by(|a, b| a.1.total_cmp(&b.1));
            (n, pts)
        })
        .collect()
}

fn theta_label(t: Option<f64>) -> String {
    t.map_or_else(String::new, |t| format!(" theta={t}"))
}

/// The suffix of a series label naming a thread count whose runs were oversubscribed.
const OVERSUBSCRIBED: &str = " (oversubscribed)";

/// The thread counts (ascending) at which some run of `pts` was oversubscribed.
fn oversubscribed_threads(pts: &[&Point]) -> Vec<f64> {
    let mut t: Vec<f64> = pts
        .iter()
        .filter(|p| p.oversubscribed)
        .map(|p| p.threads)
        .collect();
    t.sort_by(f64::total_cmp);
    t.dedup();
    t
}

/// The note under the legend of a chart whose runs include oversubscribed ones; `markers` adds
/// that those points are hollow (charts against threads).
fn oversubscribed_note(threads: &[f64], markers: bool) -> Option<String> {
    if threads.is_empty() {
        return None;
    }
    let list = threads
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    Some(format!(
        "Oversubscribed runs{}:\n{list} thread{}\n(more workers than physical cores: not a \
         scaling result)",
        if markers { " (hollow markers)" } else { "" },
        if threads.len() == 1 && threads[0] == 1.0 {
            ""
        } else {
            "s"
        },
    ))
}

/// Draws every chart for the results in `dir`, next to them; returns the files written.
pub fn plot_dir(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    plot_inputs(&[dir.to_path_buf()], dir)
}

/// Draws every chart for the runs of `inputs` (results directories, or results.json files
/// under any name) into `out`, per workload against every coordinate the runs vary in
/// (`axes`); returns the files written.
pub fn plot_inputs(inputs: &[PathBuf], out: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut points = Vec::new();
    for input in inputs {
        points.extend(read_points(input)?);
    }
    if points.is_empty() {
        let names: Vec<String> = inputs.iter().map(|i| i.display().to_string()).collect();
        return Err(Error::invalid(
            "DIR",
            names.join(" "),
            "results with at least one run",
        ));
    }
    std::fs::create_dir_all(out).map_err(|e| {
        Error::invalid(
            "--out",
            out.display(),
            format!("a directory that can be created ({e})"),
        )
    })?;
    register_font()?;
    let mut workloads: Vec<&str> = points.iter().map(|p| p.workload.as_str()).collect();
    workloads.sort();
    workloads.dedup();
    let mut files = Vec::new();
    for w in workloads {
        let pts: Vec<&Point> = points.iter().filter(|p| p.workload == w).collect();
        let axes = axes(&pts);
        let tps = |p: &Point| p.tps / 1e6;
        for axis in &axes {
            files.extend(versus(
                out,
                (
                    &format!("{w}-throughput-vs-{}", axis.stem(&axes)),
                    &format!("{w}: throughput vs {}", axis.short()),
                ),
                &pts,
                (axis, &axes),
                ("throughput (M txn/s)", tps),
            )?);
        }
        // Against the first coordinate besides threads, if one varies.
        let primary = axes
            .iter()
            .find(|a| **a != Axis::Threads)
            .unwrap_or(&axes[0]);
        files.extend(versus(
            out,
            (
                &format!("{w}-abort-rate"),
                &format!("{w}: abort rate vs {}", primary.short()),
            ),
            &pts,
            (primary, &axes),
            ("conflict aborts (% of attempts)", |p: &Point| {
                100.0 * p.abort_rate
            }),
        )?);
        files.extend(latency_charts(out, w, &pts, &axes)?);
    }
    Ok(files)
}

/// The axes a chart's series labels name: the varying ones but `skip` (an oversubscribed
/// thread count that does not vary is named by the chart's note alone).
fn label_axes<'a>(axes: &'a [Axis], skip: &Axis) -> Vec<&'a Axis> {
    axes.iter().filter(|a| *a != skip).collect()
}

/// One linear chart, `(stem, title)`: the median of `y` against `axis`, one series per
/// protocol and value of the other varying axes, error bars over the rounds; oversubscribed
/// thread counts hollow on a threads axis and named in the note.
fn versus(
    out: &Path,
    (stem, title): (&str, &str),
    pts: &[&Point],
    (axis, axes): (&Axis, &[Axis]),
    (y_desc, y): (&str, impl Fn(&Point) -> f64),
) -> Result<Vec<PathBuf>, Error> {
    let over = oversubscribed_threads(pts);
    let hollow: &[f64] = if *axis == Axis::Threads { &over } else { &[] };
    let note = oversubscribed_note(&over, !hollow.is_empty());
    let named = label_axes(axes, axis);
    let (data, bars) = series_with_bars(pts, |p| label_on(p, &named), |p| axis.of(p), y);
    render(
        out,
        stem,
        title,
        Chart::Linear {
            x: &axis.desc(),
            y: y_desc,
            hollow_x: hollow,
            bars: &bars,
        },
        &data,
        note.as_deref(),
    )
}

/// The latency percentile and CDF charts of one workload: one of each per theta if theta
/// varied, else one of each; a series per protocol and value of the other varying axes.
fn latency_charts(
    dir: &Path,
    workload: &str,
    pts: &[&Point],
    axes: &[Axis],
) -> Result<Vec<PathBuf>, Error> {
    let note = oversubscribed_note(&oversubscribed_threads(pts), false);
    let named = label_axes(axes, &Axis::Theta);
    let label = |p: &Point| label_on(p, &named);
    let mut theta_bits: Vec<u64> = pts.iter().map(|p| Axis::Theta.of(p).to_bits()).collect();
    theta_bits.sort();
    theta_bits.dedup();
    let mut files = Vec::new();
    for &bits in &theta_bits {
        let of_theta: Vec<&Point> = pts
            .iter()
            .copied()
            .filter(|p| Axis::Theta.of(p).to_bits() == bits)
            .collect();
        let (suffix, title_suffix) = if theta_bits.len() > 1 {
            let theta = f64::from_bits(bits);
            (format!("-theta{theta}"), format!(", theta={theta}"))
        } else {
            (String::new(), String::new())
        };
        let mut data = Series::new();
        for (i, _) in PERCENTILES.iter().enumerate() {
            let y = move |p: &Point| [p.p50, p.p90, p.p99, p.p999][i];
            for (name, pts) in series(&of_theta, label, |_| i as f64, y) {
                match data.iter_mut().find(|s| s.0 == name) {
                    Some(s) => s.1.extend(pts),
                    None => data.push((name, pts)),
                }
            }
        }
        files.extend(render(
            dir,
            &format!("{workload}-latency{suffix}"),
            &format!("{workload}: latency percentiles{title_suffix}"),
            Chart::Percentiles,
            &data,
            note.as_deref(),
        )?);
        let data = cdf_series(&of_theta, label);
        if !data.is_empty() {
            files.extend(render(
                dir,
                &format!("{workload}-latency-cdf{suffix}"),
                &format!("{workload}: latency CDF{title_suffix}"),
                Chart::Cdf,
                &data,
                note.as_deref(),
            )?);
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two protocols × theta {0, 0.99} × threads {1, 2} × 2 repeats; runs with at least
    /// `over_from` threads are marked oversubscribed.
    fn fake_results(dir: &Path, over_from: usize) {
        fake_results_spread(dir, over_from, 0.0);
    }

    /// As [`fake_results`], repeat `r`'s throughput scaled by `1 + spread * r`.
    fn fake_results_spread(dir: &Path, over_from: usize, spread: f64) {
        let mut runs = Vec::new();
        for (protocol, scale) in [("silo", 1.0), ("other", 0.5)] {
            for theta in [0.0, 0.99] {
                for threads in [1, 2] {
                    for repeat in 0..2 {
                        runs.push(serde_json::json!({
                            "protocol": protocol, "workload": "ycsb-a", "threads": threads,
                            "theta": theta, "repeat": repeat,
                            "result": {
                                "oversubscribed": threads >= over_from,
                                "throughput_tps": scale * 1e6 * threads as f64 * (1.0 - theta / 2.0)
                                    * (1.0 + spread * repeat as f64),
                                "abort_rate": theta / 10.0,
                                "latency": {"p50_us": 1.0, "p90_us": 3.0, "p99_us": 5.0,
                                            "p999_us": 9.0},
                                "latency_cdf": [
                                    {"percentile": 0.0, "latency_us": 0.5 * scale},
                                    {"percentile": 50.0, "latency_us": 1.0 * scale},
                                    {"percentile": 99.0, "latency_us": 5.0 * scale},
                                    {"percentile": 100.0, "latency_us": 20.0 * scale}
                                ]
                            }
                        }));
                    }
                }
            }
        }
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(
            dir.join("results.json"),
            serde_json::json!({ "runs": runs }).to_string(),
        )
        .unwrap();
    }

    #[test]
    fn medians_group_by_series_and_x() {
        let p = |t: f64, tps: f64| Point {
            protocol: "silo".into(),
            workload: "w".into(),
            threads: t,
            theta: None,
            tps,
            abort_rate: 0.0,
            p50: 0.0,
            p90: 0.0,
            p99: 0.0,
            p999: 0.0,
            cdf: vec![],
            oversubscribed: false,
            config: BTreeMap::new(),
        };
        let pts = [p(2.0, 5.0), p(1.0, 1.0), p(1.0, 3.0), p(1.0, 2.0)];
        let refs: Vec<&Point> = pts.iter().collect();
        let s = series(&refs, |p| p.protocol.clone(), |p| p.threads, |p| p.tps);
        assert_eq!(s, vec![("silo".to_string(), vec![(1.0, 2.0), (2.0, 5.0)])]);
    }

    /// The chart tests below check the drawn files where a font is found and only the error
    /// where none is; this one makes a machine without a font fail the suite instead of
    /// passing it unchecked, unless `TXLAB_TESTS_WITHOUT_FONT=1` says that is accepted.
    #[test]
    fn a_font_for_the_chart_tests_is_found() {
        if std::env::var_os("TXLAB_TESTS_WITHOUT_FONT").is_some_and(|v| v == "1") {
            return;
        }
        if let Err(e) = register_font() {
            panic!(
                "{e}: the chart tests would check no chart (install fonts-dejavu-core, set \
                 TXLAB_FONT, or set TXLAB_TESTS_WITHOUT_FONT=1 to accept that)"
            );
        }
    }

    #[test]
    fn plots_every_chart_as_svg_and_png_with_axis_labels() {
        let dir = std::env::temp_dir().join(format!("txlab-plot-{}", std::process::id()));
        fake_results(&dir, usize::MAX);
        match plot_dir(&dir) {
            Ok(files) => {
                // 3 throughput/abort charts plus a percentile and a CDF chart per theta, each as
                // SVG and PNG.
                assert_eq!(files.len(), 14, "{files:?}");
                let svg =
                    std::fs::read_to_string(dir.join("ycsb-a-throughput-vs-threads.svg")).unwrap();
                assert!(svg.contains("<svg") && svg.contains("throughput (M txn/s)"));
                assert!(svg.contains("worker threads") && svg.contains("silo theta=0.99"));
                let png = std::fs::read(dir.join("ycsb-a-latency-theta0.png")).unwrap();
                assert_eq!(&png[1..4], b"PNG");
                let lat =
                    std::fs::read_to_string(dir.join("ycsb-a-latency-theta0.99.svg")).unwrap();
                for label in [
                    "p50",
                    "p90",
                    "p99",
                    "p99.9",
                    "latency (µs, log scale)",
                    "silo 2t",
                ] {
                    assert!(
                        lat.contains(label),
                        "{label} missing from the latency chart"
                    );
                }
                let cdf =
                    std::fs::read_to_string(dir.join("ycsb-a-latency-cdf-theta0.99.svg")).unwrap();
                assert!(cdf.contains("latency (µs, log scale)"));
                assert!(cdf.contains("fraction of transactions ≤ latency"));
                assert!(cdf.contains("silo 2t") && cdf.contains("other 1t"));
                let png = std::fs::read(dir.join("ycsb-a-latency-cdf-theta0.png")).unwrap();
                assert_eq!(&png[1..4], b"PNG");
                for f in files
                    .iter()
                    .filter(|f| f.extension().is_some_and(|x| x == "svg"))
                {
                    let svg = std::fs::read_to_string(f).unwrap();
                    assert!(
                        !svg.to_lowercase().contains("oversubscribed"),
                        "{}: no run is oversubscribed",
                        f.display()
                    );
                }
            }
            // Machines without any TrueType font: the failure must say how to fix it.
            Err(e) => assert!(e.to_string().contains("TXLAB_FONT"), "{e}"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn repeats_that_differ_get_error_bars() {
        let count = |spread: f64| {
            let dir = std::env::temp_dir()
                .join(format!("txlab-plot-bars-{spread}-{}", std::process::id()));
            fake_results_spread(&dir, usize::MAX, spread);
            let n = plot_dir(&dir).map(|_| {
                let svg =
                    std::fs::read_to_string(dir.join("ycsb-a-throughput-vs-threads.svg")).unwrap();
                svg.matches("<line").count() + svg.matches("<polyline").count()
            });
            std::fs::remove_dir_all(&dir).unwrap();
            n
        };
        match (count(0.0), count(0.2)) {
            // 2 protocols × 2 thetas × 2 thread counts: each bar is three segments.
            (Ok(same), Ok(spread)) => assert!(
                spread >= same + 8 * 3,
                "{same} lines without spread, {spread} with"
            ),
            // Without fonts nothing is drawn, and the error says how to name one.
            (Err(e), _) | (_, Err(e)) => assert!(e.to_string().contains("TXLAB_FONT"), "{e}"),
        }
    }

    #[test]
    fn oversubscribed_runs_are_marked_in_every_chart() {
        let dir = std::env::temp_dir().join(format!("txlab-plot-over-{}", std::process::id()));
        // The 2-thread runs are oversubscribed, the 1-thread runs are not.
        fake_results(&dir, 2);
        match plot_dir(&dir) {
            Ok(files) => {
                let svgs: Vec<&PathBuf> = files
                    .iter()
                    .filter(|f| f.extension().is_some_and(|x| x == "svg"))
                    .collect();
                assert_eq!(svgs.len(), 7);
                for f in svgs {
                    let svg = std::fs::read_to_string(f).unwrap();
                    assert!(
                        svg.contains("Oversubscribed") && svg.contains("2 threads"),
                        "{}: the note names the oversubscribed thread count",
                        f.display()
                    );
                    assert!(
                        !svg.contains("1 thread"),
                        "{}: 1 thread is not oversubscribed",
                        f.display()
                    );
                }
                // Labels that name the thread count carry the mark; 1-thread ones do not.
                for stem in [
                    "ycsb-a-throughput-vs-theta",
                    "ycsb-a-abort-rate",
                    "ycsb-a-latency-theta0.99",
                    "ycsb-a-latency-cdf-theta0",
                ] {
                    let svg = std::fs::read_to_string(dir.join(format!("{stem}.svg"))).unwrap();
                    assert!(svg.contains("silo 2t (oversubscribed)"), "{stem}");
                    assert!(
                        svg.contains("silo 1t") && !svg.contains("silo 1t ("),
                        "{stem}"
                    );
                }
                let svg =
                    std::fs::read_to_string(dir.join("ycsb-a-throughput-vs-threads.svg")).unwrap();
                assert!(svg.contains("hollow markers"));
            }
            Err(e) => assert!(e.to_string().contains("TXLAB_FONT"), "{e}"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `results.json` of rococo and 2pl-2pc on tpcc at `clients` clients per server (with
    /// districts 10 × servers, so both vary together when `servers` does), 3 rounds whose
    /// throughput differs by `spread`.
    fn cluster_results(dir: &Path, clients: u32, servers: u32, spread: f64) {
        let runs: Vec<Value> = (0..3)
            .flat_map(|round| {
                [("rococo", 1.0), ("2pl-2pc", 0.8)].map(|(protocol, scale)| {
                    serde_json::json!({
                        "protocol": protocol, "workload": "tpcc", "threads": 1,
                        "theta": null, "repeat": round,
                        "result": {
                            "throughput_tps": scale * 1e3 * f64::from(clients)
                                * (1.0 + spread * f64::from(round)),
                            "abort_rate": 0.1,
                            "latency": {"p50_us": 1.0, "p90_us": 2.0, "p99_us": 3.0,
                                        "p999_us": 4.0},
                        }
                    })
                })
            })
            .collect();
        let config = serde_json::json!({
            "threads": [1], "repeat": 3 + clients, "seed": 42,
            "params": {"districts": 10 * servers, "theta": 0.0},
            "engine": {"epoch": 0.04, "cluster": {"servers": servers,
                                                   "clients_per_server": clients}},
        });
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(
            dir.join("results.json"),
            serde_json::json!({"config": config, "runs": runs}).to_string(),
        )
        .unwrap();
    }

    #[test]
    fn directories_that_differ_in_one_flag_plot_against_it_with_error_bars() {
        let root = std::env::temp_dir().join(format!("txlab-plot-clients-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let dirs: Vec<PathBuf> = [5, 40, 100]
            .map(|c| {
                let d = root.join(format!("c{c}"));
                cluster_results(&d, c, 2, 0.2);
                d
            })
            .to_vec();
        let out = root.join("plots");
        match plot_inputs(&dirs, &out) {
            Ok(files) => {
                let svg =
                    std::fs::read_to_string(out.join("tpcc-throughput-vs-clients-per-server.svg"))
                        .unwrap();
                assert!(
                    svg.contains("clients per server (engine.cluster.clients_per_server)"),
                    "the x axis names the flag's config path"
                );
                assert!(svg.contains("rococo") && svg.contains("2pl-2pc"));
                assert!(
                    !files
                        .iter()
                        .any(|f| f.to_string_lossy().contains("vs-threads")),
                    "threads did not vary: {files:?}"
                );
                let abort = std::fs::read_to_string(out.join("tpcc-abort-rate.svg")).unwrap();
                assert!(abort.contains("abort rate vs clients per server"));
                // 2 protocols × 3 client counts, each bar three segments, over the lines.
                let lines =
                    |svg: &str| svg.matches("<line").count() + svg.matches("<polyline").count();
                let flat = root.join("flat");
                let flat_dirs: Vec<PathBuf> = [5, 40, 100]
                    .map(|c| {
                        let d = flat.join(format!("c{c}"));
                        cluster_results(&d, c, 2, 0.0);
                        d
                    })
                    .to_vec();
                plot_inputs(&flat_dirs, &flat).unwrap();
                let flat_svg =
                    std::fs::read_to_string(flat.join("tpcc-throughput-vs-clients-per-server.svg"))
                        .unwrap();
                assert!(lines(&svg) >= lines(&flat_svg) + 6 * 3, "no error bars");
            }
            Err(e) => assert!(e.to_string().contains("TXLAB_FONT"), "{e}"),
        }
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_axes_are_what_varies_once_per_grouping() {
        let root = std::env::temp_dir().join(format!("txlab-plot-axes-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let mut points = Vec::new();
        for (servers, clients) in [(1, 10), (2, 10), (3, 10), (1, 40), (2, 40), (3, 40)] {
            let d = root.join(format!("s{servers}-c{clients}"));
            cluster_results(&d, clients, servers, 0.0);
            points.extend(read_points(&d).unwrap());
        }
        let refs: Vec<&Point> = points.iter().collect();
        // params.districts and repeat change with servers and clients: the first is the same
        // grouping as engine.cluster.servers, the second is not a property of the runs.
        assert_eq!(
            axes(&refs),
            [
                Axis::Config("engine.cluster.clients_per_server".into()),
                Axis::Config("engine.cluster.servers".into()),
            ]
        );
        let p = &points[0];
        assert_eq!(
            label_on(p, &[&Axis::Config("engine.cluster.servers".into())]),
            "rococo servers=1"
        );
        let one: Vec<&Point> = points.iter().take(6).collect();
        assert_eq!(
            axes(&one),
            [Axis::Threads],
            "nothing varies within one file"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// A run whose `config` is `config`.
    fn configured(config: &Value) -> Point {
        let mut c = BTreeMap::new();
        numeric_leaves("", config, &mut c);
        Point {
            protocol: "rococo".into(),
            workload: "tpcc".into(),
            threads: 1.0,
            theta: None,
            tps: 1.0,
            abort_rate: 0.0,
            p50: 1.0,
            p90: 1.0,
            p99: 1.0,
            p999: 1.0,
            cdf: Vec::new(),
            oversubscribed: false,
            config: c,
        }
    }

    #[test]
    fn rounds_and_a_cluster_launch_s_process_count_are_not_axes() {
        // `txlab run --out` and `txlab cluster --out` directories of the same point, with
        // different --repeat.
        let run = serde_json::json!({"repeat": 2, "engine": {"cluster": {"servers": 3}}});
        let cluster = serde_json::json!({
            "repeat": 3, "engine": {"cluster": {"servers": 3}}, "cluster": {"local": 4},
        });
        let (a, b) = (configured(&run), configured(&cluster));
        assert_eq!(axes(&[&a, &b]), [Axis::Threads]);
    }

    #[test]
    fn axes_with_the_same_short_name_get_distinct_chart_names() {
        let axes = [
            Axis::Config("engine.batch.concurrency".into()),
            Axis::Config("engine.deterministic.concurrency".into()),
            Axis::Config("engine.cluster.servers".into()),
        ];
        let stems: Vec<String> = axes.iter().map(|a| a.stem(&axes)).collect();
        assert_eq!(
            stems,
            [
                "engine-batch-concurrency",
                "engine-deterministic-concurrency",
                "servers"
            ]
        );
    }

    #[test]
    fn the_oversubscription_note_lists_thread_counts() {
        assert_eq!(oversubscribed_note(&[], true), None);
        let n = oversubscribed_note(&[4.0, 8.0], true).unwrap();
        assert!(
            n.contains("4, 8 threads") && n.contains("hollow markers"),
            "{n}"
        );
        let n = oversubscribed_note(&[3.0], false).unwrap();
        assert!(n.contains("3 threads") && !n.contains("hollow"), "{n}");
    }

    #[test]
    fn cdf_lines_take_the_median_latency_per_percentile_over_repeats() {
        let p = |cdf: Vec<(f64, f64)>| Point {
            protocol: "silo".into(),
            workload: "w".into(),
            threads: 1.0,
            theta: None,
            tps: 0.0,
            abort_rate: 0.0,
            p50: 0.0,
            p90: 0.0,
            p99: 0.0,
            p999: 0.0,
            cdf,
            oversubscribed: false,
            config: BTreeMap::new(),
        };
        let pts = [
            p(vec![(0.0, 1.0), (50.0, 4.0), (100.0, 9.0)]),
            p(vec![(0.0, 3.0), (50.0, 2.0), (100.0, 7.0)]),
            p(vec![(0.0, 2.0), (50.0, 6.0), (100.0, 8.0)]),
            p(vec![]),
        ];
        let refs: Vec<&Point> = pts.iter().collect();
        let s = cdf_series(&refs, |p| p.protocol.clone());
        assert_eq!(
            s,
            vec![("silo".to_string(), vec![(2.0, 0.0), (4.0, 0.5), (8.0, 1.0)])]
        );
    }

    #[test]
    fn a_directory_without_results_is_bad_input() {
        let e = plot_dir(Path::new("/nonexistent/txlab")).unwrap_err();
        assert!(matches!(e, Error::InvalidConfig { .. }), "{e:?}");
        assert!(e.to_string().contains("results.json"), "{e}");
    }
}
