//! A small SVG writer for the report's charts: line charts (one `<polyline class="series">`
//! per series, markers where points are few, dashed reference lines such as an objective) and
//! grouped bar charts with error bars. Each chart is an inline `<svg>` carrying
//! `data-chart` (what it shows) and `data-series` (how many series it draws), so a test reading
//! the DOM can count them. Text goes through [`super::page::esc`].

use super::page::esc;
use super::scale::{label, Axis, Unit};
use std::fmt::Write as _;

/// Colours for series, in order (Tableau 10: distinct for most colour vision, print well).
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];
/// The drawing's width in SVG units; it is scaled to the page's width.
const W: f64 = 720.0;
/// The plot area's height.
const PLOT_H: f64 = 260.0;
/// Margins around the plot area: left (tick labels), right, top, bottom (tick and axis labels).
const LEFT: f64 = 96.0;
/// See [`LEFT`].
const RIGHT: f64 = 40.0;
/// See [`LEFT`].
const TOP: f64 = 12.0;
/// See [`LEFT`].
const BOTTOM: f64 = 50.0;
/// Height of one row of the legend, and width of one entry.
const LEGEND_ROW: f64 = 21.0;
/// See [`LEGEND_ROW`].
const LEGEND_W: f64 = 170.0;

/// A colour for the `i`th series.
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// One line of a line chart.
pub struct Series {
    /// Its name in the legend.
    pub name: String,
    /// (x, y) points, in order of x.
    pub points: Vec<(f64, f64)>,
}

/// A horizontal or diagonal reference line (an objective, "achieved = offered").
pub struct Reference {
    /// Its name in the legend.
    pub name: String,
    /// Its two ends, in data coordinates.
    pub from: (f64, f64),
    /// See `from`.
    pub to: (f64, f64),
}

/// A line chart: axes, series, reference lines and a legend.
pub struct LineChart {
    /// What it shows, for `data-chart` (e.g. "spectrum", "throughput-by-size").
    pub kind: &'static str,
    /// The x axis and its label.
    pub x: (Axis, String),
    /// The y axis and its label.
    pub y: (Axis, String),
    /// The data.
    pub series: Vec<Series>,
    /// Reference lines, drawn dashed.
    pub references: Vec<Reference>,
}

/// Pixel geometry shared by both kinds of chart.
struct Frame {
    /// The plot area's left, top, width and height.
    x0: f64,
    y0: f64,
    w: f64,
    h: f64,
}

impl Frame {
    fn new() -> Frame {
        Frame {
            x0: LEFT,
            y0: TOP,
            w: W - LEFT - RIGHT,
            h: PLOT_H,
        }
    }
    fn px(&self, axis: &Axis, v: f64) -> f64 {
        self.x0 + axis.fraction(v) * self.w
    }
    fn py(&self, axis: &Axis, v: f64) -> f64 {
        self.y0 + self.h - axis.fraction(v) * self.h
    }
}

/// The `<svg>` opening tag for a chart `height` high.
fn open(s: &mut String, kind: &str, series: usize, height: f64, title: &str) {
    let _ = write!(
        s,
        r#"<svg class="chart" data-chart="{kind}" data-series="{series}" viewBox="0 0 {W} {height:.0}" role="img" aria-label="{t}"><title>{t}</title>"#,
        t = esc(title)
    );
}

/// Grid lines and tick labels of the y axis, and its label turned on its side.
fn y_axis(s: &mut String, f: &Frame, axis: &Axis, name: &str) {
    for t in axis.ticks() {
        let y = f.py(axis, t);
        let _ = write!(
            s,
            r#"<line class="grid" x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            f.x0,
            f.x0 + f.w,
            f.x0 - 6.0,
            y + 4.0,
            esc(&axis.label(t))
        );
    }
    let (cx, cy) = (16.0, f.y0 + f.h / 2.0);
    let _ = write!(
        s,
        r#"<text class="axis" x="{cx}" y="{cy:.1}" text-anchor="middle" transform="rotate(-90 {cx} {cy:.1})">{}</text>"#,
        esc(name)
    );
}

/// Grid lines and tick labels of the x axis, and its label below them.
fn x_axis(s: &mut String, f: &Frame, axis: &Axis, name: &str) {
    for t in axis.ticks() {
        let x = f.px(axis, t);
        let _ = write!(
            s,
            r#"<line class="grid" x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}"/><text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            f.y0,
            f.y0 + f.h,
            f.y0 + f.h + 19.0,
            esc(&axis.label(t))
        );
    }
    let _ = write!(
        s,
        r#"<text class="axis" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        f.x0 + f.w / 2.0,
        f.y0 + f.h + 42.0,
        esc(name)
    );
}

/// The legend below the plot: a swatch and a name per entry, wrapped in rows.
fn legend(s: &mut String, f: &Frame, entries: &[(String, &str, bool)]) {
    let per_row = ((W - LEFT) / LEGEND_W).floor().max(1.0) as usize;
    for (i, (name, colour, dashed)) in entries.iter().enumerate() {
        let x = f.x0 + (i % per_row) as f64 * LEGEND_W;
        let y = f.y0 + f.h + BOTTOM + 8.0 + (i / per_row) as f64 * LEGEND_ROW;
        let dash = if *dashed {
            r#" stroke-dasharray="6 4""#
        } else {
            ""
        };
        let short: String = match name.chars().count() > 20 {
            true => name.chars().take(19).chain(['…']).collect(),
            false => name.clone(),
        };
        let _ = write!(
            s,
            r#"<g class="legend"><line x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{colour}" stroke-width="3"{dash}/><text x="{:.1}" y="{:.1}">{}</text></g>"#,
            x + 18.0,
            x + 24.0,
            y + 4.0,
            esc(&short)
        );
    }
}

/// The chart's whole height for a legend of `entries`.
fn height(entries: usize) -> f64 {
    let per_row = ((W - LEFT) / LEGEND_W).floor().max(1.0) as usize;
    TOP + PLOT_H + BOTTOM + 12.0 + entries.div_ceil(per_row) as f64 * LEGEND_ROW
}

impl LineChart {
    /// The chart as an inline `<svg>` element.
    pub fn svg(&self, title: &str) -> String {
        let f = Frame::new();
        let mut entries: Vec<(String, &str, bool)> = Vec::new();
        let mut s = String::new();
        let total = self.series.len() + self.references.len();
        open(&mut s, self.kind, self.series.len(), height(total), title);
        y_axis(&mut s, &f, &self.y.0, &self.y.1);
        x_axis(&mut s, &f, &self.x.0, &self.x.1);
        for (i, r) in self.references.iter().enumerate() {
            let c = if i == 0 { "#333" } else { "#888" };
            self.reference(&mut s, &f, r, c);
            entries.push((r.name.clone(), c, true));
        }
        for (i, series) in self.series.iter().enumerate() {
            self.line(&mut s, &f, series, colour(i));
            entries.push((series.name.clone(), colour(i), false));
        }
        legend(&mut s, &f, &entries);
        s.push_str("</svg>");
        s
    }

    /// One series: a polyline, with a marker on each point when there are few.
    fn line(&self, s: &mut String, f: &Frame, series: &Series, colour: &str) {
        let (x, y) = (&self.x.0, &self.y.0);
        let pts: Vec<(f64, f64)> = series
            .points
            .iter()
            .filter(|(a, b)| x.shows(*a) && y.shows(*b))
            .map(|&(a, b)| (f.px(x, a), f.py(y, b.clamp(y.min, y.max))))
            .collect();
        let text: Vec<String> = pts.iter().map(|(a, b)| format!("{a:.1},{b:.1}")).collect();
        let _ = write!(
            s,
            r#"<polyline class="series" data-name="{}" fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"#,
            esc(&series.name),
            text.join(" ")
        );
        if pts.len() <= 24 {
            for (a, b) in pts {
                let _ = write!(
                    s,
                    r#"<circle cx="{a:.1}" cy="{b:.1}" r="3" fill="{colour}"/>"#
                );
            }
        }
    }

    /// A dashed reference line.
    fn reference(&self, s: &mut String, f: &Frame, r: &Reference, colour: &str) {
        let (x, y) = (&self.x.0, &self.y.0);
        let clamp = |(a, b): (f64, f64)| {
            (
                f.px(x, a.clamp(x.min, x.max)),
                f.py(y, b.clamp(y.min, y.max)),
            )
        };
        let ((x1, y1), (x2, y2)) = (clamp(r.from), clamp(r.to));
        let _ = write!(
            s,
            r#"<line class="ref" x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{colour}" stroke-width="1.5" stroke-dasharray="6 4"/>"#
        );
    }
}

/// One set of bars of a bar chart: a value (and optional error half-width) per category.
pub struct BarSeries {
    /// Its name in the legend.
    pub name: String,
    /// Per category: the bar's value and the half-width of its error bar.
    pub values: Vec<Option<(f64, Option<f64>)>>,
}

/// Grouped bars: a group per category, a bar per series, error bars where known.
pub struct BarChart {
    /// What it shows, for `data-chart`.
    pub kind: &'static str,
    /// The groups along the x axis.
    pub categories: Vec<String>,
    /// The bars.
    pub series: Vec<BarSeries>,
    /// The y axis's unit and label.
    pub y: (Unit, String),
}

impl BarChart {
    /// The chart as an inline `<svg>` element.
    pub fn svg(&self, title: &str) -> String {
        let f = Frame::new();
        let ends = self.series.iter().flat_map(|s| s.values.iter().flatten());
        let ends = ends.flat_map(|&(v, e)| [v - e.unwrap_or(0.0), v + e.unwrap_or(0.0), 0.0]);
        let y = Axis::fit(super::scale::Scale::Linear, self.y.0, ends, true);
        let mut s = String::new();
        open(
            &mut s,
            self.kind,
            self.series.len(),
            height(self.series.len()),
            title,
        );
        y_axis(&mut s, &f, &y, &self.y.1);
        let group = f.w / self.categories.len().max(1) as f64;
        let bar = group * 0.8 / self.series.len().max(1) as f64;
        for (c, name) in self.categories.iter().enumerate() {
            let gx = f.x0 + c as f64 * group;
            let _ = write!(
                s,
                r#"<text class="tick" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                gx + group / 2.0,
                f.y0 + f.h + 19.0,
                esc(name)
            );
            for (i, series) in self.series.iter().enumerate() {
                if let Some(Some((v, err))) = series.values.get(c) {
                    let x = gx + group * 0.1 + i as f64 * bar;
                    bar_with_error(&mut s, &f, &y, (x, bar), (*v, *err), colour(i));
                }
            }
        }
        let zero = f.py(&y, 0.0);
        let _ = write!(
            s,
            r##"<line class="zero" x1="{:.1}" y1="{zero:.1}" x2="{:.1}" y2="{zero:.1}" stroke="#333"/>"##,
            f.x0,
            f.x0 + f.w
        );
        let entries: Vec<(String, &str, bool)> = (self.series.iter().enumerate())
            .map(|(i, s)| (s.name.clone(), colour(i), false))
            .collect();
        legend(&mut s, &f, &entries);
        s.push_str("</svg>");
        s
    }
}

/// One bar from 0 to `v` at `x` (`width` wide), its value on top, and its error bar.
fn bar_with_error(
    s: &mut String,
    f: &Frame,
    y: &Axis,
    (x, width): (f64, f64),
    (v, err): (f64, Option<f64>),
    colour: &str,
) {
    let (top, zero) = (f.py(y, v), f.py(y, 0.0));
    let _ = write!(
        s,
        r#"<rect class="bar" x="{x:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{colour}"><title>{}</title></rect>"#,
        top.min(zero),
        (width - 2.0).max(1.0),
        (top - zero).abs(),
        esc(&label(y.unit, v))
    );
    if let Some(e) = err {
        let (cx, hi, lo) = (x + width / 2.0 - 1.0, f.py(y, v + e), f.py(y, v - e));
        let _ = write!(
            s,
            r##"<path class="err" d="M{cx:.1} {hi:.1}V{lo:.1}M{:.1} {hi:.1}H{:.1}M{:.1} {lo:.1}H{:.1}" stroke="#222" stroke-width="1.5" fill="none"/>"##,
            cx - 5.0,
            cx + 5.0,
            cx - 5.0,
            cx + 5.0
        );
    }
}
