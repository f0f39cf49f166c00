//! `txlab plot DIR`: charts from a results directory's `results.json`, as SVG and PNG.
//!
//! Per workload (medians over repeats; one line per protocol, split further by theta or threads
//! when the sweep varied them):
//!
//! - `<workload>-throughput-vs-threads`: M txn/s against worker threads;
//! - `<workload>-throughput-vs-theta`: M txn/s against Zipf theta (only if theta varied);
//! - `<workload>-abort-rate`: conflict aborts in % against theta (or threads if theta is fixed);
//! - `<workload>-latency`: p50 / p99 / p99.9 latency in µs against worker threads.
//!
//! Fonts: plotters renders text through `ab_glyph`, which needs a TrueType font registered at run
//! time. The first readable one of `$TXLAB_FONT`, common DejaVu/Liberation/Noto paths and any
//! `.ttf` under `/usr/share/fonts` is used; without one, plotting fails with a message saying
//! so (install `fonts-dejavu-core` or set `TXLAB_FONT`).

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use txlab_core::Error;

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
    p99: f64,
    p999: f64,
}

fn read_points(dir: &Path) -> Result<Vec<Point>, Error> {
    let path = dir.join("results.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        Error::invalid(
            "DIR",
            dir.display(),
            format!("a directory holding results.json ({e})"),
        )
    })?;
    let json: Value = serde_json::from_str(&text)
        .map_err(|e| Error::invalid("DIR", dir.display(), format!("a valid results.json ({e})")))?;
    let runs = json["runs"].as_array().ok_or_else(|| {
        Error::invalid("DIR", dir.display(), "a results.json with a `runs` array")
    })?;
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
            p99: num(&r["result"]["latency"]["p99_us"]),
            p999: num(&r["result"]["latency"]["p999_us"]),
        })
        .collect())
}

type Series = Vec<(String, Vec<(f64, f64)>)>;

/// Groups points into named series of (x, median y) sorted by x.
fn series(
    points: &[&Point],
    name: impl Fn(&Point) -> String,
    x: impl Fn(&Point) -> f64,
    y: impl Fn(&Point) -> f64,
) -> Series {
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
            let mut pts: Vec<(f64, f64)> = xs
                .into_values()
                .map(|(x, ys)| (x, crate::report::median(&ys)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            (n, pts)
        })
        .collect()
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    data: &Series,
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
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
        .filter(|y| y.is_finite())
        .fold(0.0, f64::max);
    let y1 = if y1 > 0.0 { y1 * 1.1 } else { 1.0 };
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, 0.0..y1)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .draw()
        .map_err(e)?;
    for (i, (name, pts)) in data.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
            .map_err(e)?
            .label(name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(e)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(e)?;
    root.present().map_err(e)?;
    Ok(())
}

fn render(
    dir: &Path,
    stem: &str,
    title: &str,
    x: &str,
    y: &str,
    data: &Series,
) -> Result<Vec<PathBuf>, Error> {
    let svg = dir.join(format!("{stem}.svg"));
    let png = dir.join(format!("{stem}.png"));
    let size = (900, 560);
    draw(
        SVGBackend::new(&svg, size).into_drawing_area(),
        title,
        x,
        y,
        data,
    )
    .map_err(|e| Error::Internal(format!("drawing {}: {e}", svg.display())))?;
    draw(
        BitMapBackend::new(&png, size).into_drawing_area(),
        title,
        x,
        y,
        data,
    )
    .map_err(|e| Error::Internal(format!("drawing {}: {e}", png.display())))?;
    Ok(vec![svg, png])
}

fn theta_label(t: Option<f64>) -> String {
    t.map_or_else(String::new, |t| format!(" theta={t}"))
}

/// Draws every chart for the results in `dir`; returns the files written.
pub fn plot_dir(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let points = read_points(dir)?;
    if points.is_empty() {
        return Err(Error::invalid(
            "DIR",
            dir.display(),
            "a results.json with at least one run",
        ));
    }
    register_font()?;
    let mut workloads: Vec<&str> = points.iter().map(|p| p.workload.as_str()).collect();
    workloads.sort();
    workloads.dedup();
    let mut files = Vec::new();
    for w in workloads {
        let pts: Vec<&Point> = points.iter().filter(|p| p.workload == w).collect();
        let mut thetas: Vec<u64> = pts
            .iter()
            .map(|p| p.theta.unwrap_or(0.0).to_bits())
            .collect();
        thetas.sort();
        thetas.dedup();
        let theta_varies = thetas.len() > 1;
        let by_protocol_theta = |p: &Point| {
            if theta_varies {
                format!("{}{}", p.protocol, theta_label(p.theta))
            } else {
                p.protocol.clone()
            }
        };
        let tps = |p: &Point| p.tps / 1e6;
        let data = series(&pts, by_protocol_theta, |p| p.threads, tps);
        files.extend(render(
            dir,
            &format!("{w}-throughput-vs-threads"),
            &format!("{w}: throughput vs threads"),
            "worker threads",
            "throughput (M txn/s)",
            &data,
        )?);
        if theta_varies {
            let data = series(
                &pts,
                |p| format!("{} {}t", p.protocol, p.threads),
                |p| p.theta.unwrap_or(0.0),
                tps,
            );
            files.extend(render(
                dir,
                &format!("{w}-throughput-vs-theta"),
                &format!("{w}: throughput vs skew"),
                "Zipf theta",
                "throughput (M txn/s)",
                &data,
            )?);
            let data = series(
                &pts,
                |p| format!("{} {}t", p.protocol, p.threads),
                |p| p.theta.unwrap_or(0.0),
                |p| 100.0 * p.abort_rate,
            );
            files.extend(render(
                dir,
                &format!("{w}-abort-rate"),
                &format!("{w}: abort rate vs skew"),
                "Zipf theta",
                "conflict aborts (% of attempts)",
                &data,
            )?);
        } else {
            let data = series(
                &pts,
                |p| p.protocol.clone(),
                |p| p.threads,
                |p| 100.0 * p.abort_rate,
            );
            files.extend(render(
                dir,
                &format!("{w}-abort-rate"),
                &format!("{w}: abort rate vs threads"),
                "worker threads",
                "conflict aborts (% of attempts)",
                &data,
            )?);
        }
        let mut data = Series::new();
        for (label, f) in [("p50", 0usize), ("p99", 1), ("p99.9", 2)] {
            let y = move |p: &Point| [p.p50, p.p99, p.p999][f];
            data.extend(series(
                &pts,
                |p| format!("{} {label}", by_protocol_theta(p)),
                |p| p.threads,
                y,
            ));
        }
        files.extend(render(
            dir,
            &format!("{w}-latency"),
            &format!("{w}: latency percentiles"),
            "worker threads",
            "latency (µs)",
            &data,
        )?);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_results(dir: &Path) {
        let mut runs = Vec::new();
        for (protocol, scale) in [("silo", 1.0), ("other", 0.5)] {
            for theta in [0.0, 0.99] {
                for threads in [1, 2] {
                    for repeat in 0..2 {
                        runs.push(serde_json::json!({
                            "protocol": protocol, "workload": "ycsb-a", "threads": threads,
                            "theta": theta, "repeat": repeat,
                            "result": {
                                "throughput_tps": scale * 1e6 * threads as f64 * (1.0 - theta / 2.0),
                                "abort_rate": theta / 10.0,
                                "latency": {"p50_us": 1.0, "p99_us": 5.0, "p999_us": 9.0}
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
            p99: 0.0,
            p999: 0.0,
        };
        let pts = [p(2.0, 5.0), p(1.0, 1.0), p(1.0, 3.0), p(1.0, 2.0)];
        let refs: Vec<&Point> = pts.iter().collect();
        let s = series(&refs, |p| p.protocol.clone(), |p| p.threads, |p| p.tps);
        assert_eq!(s, vec![("silo".to_string(), vec![(1.0, 2.0), (2.0, 5.0)])]);
    }

    #[test]
    fn plots_every_chart_as_svg_and_png_with_axis_labels() {
        let dir = std::env::temp_dir().join(format!("txlab-plot-{}", std::process::id()));
        fake_results(&dir);
        match plot_dir(&dir) {
            Ok(files) => {
                assert_eq!(files.len(), 8, "{files:?}");
                let svg =
                    std::fs::read_to_string(dir.join("ycsb-a-throughput-vs-threads.svg")).unwrap();
                assert!(svg.contains("<svg") && svg.contains("throughput (M txn/s)"));
                assert!(svg.contains("worker threads") && svg.contains("silo theta=0.99"));
                let png = std::fs::read(dir.join("ycsb-a-latency.png")).unwrap();
                assert_eq!(&png[1..4], b"PNG");
            }
            // Machines without any TrueType font: the failure must say how to fix it.
            Err(e) => assert!(e.to_string().contains("TXLAB_FONT"), "{e}"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_without_results_is_bad_input() {
        let e = plot_dir(Path::new("/nonexistent/txlab")).unwrap_err();
        assert!(matches!(e, Error::InvalidConfig { .. }), "{e:?}");
        assert!(e.to_string().contains("results.json"), "{e}");
    }
}
