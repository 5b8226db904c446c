//! A small SVG writer for the report's charts: line charts (one `<polyline class="series">`
//! per series, markers where points are few, dashed reference lines such as an objective) and
//! grouped bar charts with error bars. Each chart is an inline `<svg>` carrying
//! `data-chart` (what it shows) and `data-series` (how many series it draws), so a test reading
//! the DOM can count them, and `data-y` (its y scale). Tick labels carry `tick x` or `tick y`.
//! Text is placed by [`super::layout`] so that no two labels touch, and goes through
//! [`super::page::esc`].

use super::layout::{self, colour, width, FONT};
use super::page::esc;
use super::scale::{Axis, Scale, Unit};
use std::fmt::Write as _;

/// The drawing's width in SVG units; it is scaled to the page's width.
const W: f64 = 720.0;
/// The plot area's height.
const PLOT_H: f64 = 260.0;
/// Margins around the plot area: right and top; the left one is as wide as the y axis's
/// labels need, the bottom one as deep as the x axis's.
const RIGHT: f64 = 40.0;
/// See [`RIGHT`].
const TOP: f64 = 16.0;
/// The bottom margin under a numeric x axis: tick labels, then the axis's name.
const BOTTOM: f64 = 50.0;
/// Height of one row of the legend.
const LEGEND_ROW: f64 = 22.0;

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
    /// The depth of the x axis's labels under the plot area.
    bottom: f64,
}

impl Frame {
    /// A plot area right of the y axis's tick labels (and its name turned on its side).
    fn new(y: &Axis, bottom: f64) -> Frame {
        let widest = (y.ticks().iter())
            .map(|t| width(&y.label(*t)))
            .fold(0.0, f64::max);
        let x0 = (widest + 14.0 + FONT * 1.6).max(60.0);
        Frame {
            x0,
            y0: TOP,
            w: W - x0 - RIGHT,
            h: PLOT_H,
            bottom,
        }
    }
    fn px(&self, axis: &Axis, v: f64) -> f64 {
        self.x0 + axis.fraction(v) * self.w
    }
    fn py(&self, axis: &Axis, v: f64) -> f64 {
        self.y0 + self.h - axis.fraction(v) * self.h
    }
    /// The top of the legend's first row.
    fn legend_top(&self) -> f64 {
        self.y0 + self.h + self.bottom + 10.0
    }
}

/// The `<svg>` opening tag for a chart `height` high; `data-y` names its y scale.
fn open(s: &mut String, kind: &str, series: usize, height: f64, y: &Axis, title: &str) {
    let scale = match y.scale {
        Scale::Log => "log",
        Scale::Linear => "linear",
        Scale::Nines => "nines",
    };
    let _ = write!(
        s,
        r#"<svg class="chart" data-chart="{kind}" data-series="{series}" data-y="{scale}" viewBox="0 0 {W} {height:.0}" role="img" aria-label="{t}"><title>{t}</title>"#,
        t = esc(title)
    );
}

/// Grid lines and tick labels of the y axis, and its name turned on its side (cut in the
/// middle when longer than the axis).
fn y_axis(s: &mut String, f: &Frame, axis: &Axis, name: &str) {
    for t in axis.ticks() {
        let y = f.py(axis, t);
        let _ = write!(
            s,
            r#"<line class="grid" x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}"/><text class="tick y" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            f.x0,
            f.x0 + f.w,
            f.x0 - 6.0,
            y + 4.5,
            esc(&axis.label(t))
        );
    }
    let (cx, cy) = (FONT, f.y0 + f.h / 2.0);
    let _ = write!(
        s,
        r#"<text class="axis" x="{cx}" y="{cy:.1}" text-anchor="middle" transform="rotate(-90 {cx} {cy:.1})">{}</text>"#,
        esc(&layout::fit(name, f.h))
    );
}

/// Grid lines and tick labels of the x axis (a label left out where it would touch the one
/// before it), and its name below them.
fn x_axis(s: &mut String, f: &Frame, axis: &Axis, name: &str) {
    let mut free_from = f64::NEG_INFINITY;
    for t in axis.ticks() {
        let x = f.px(axis, t);
        let _ = write!(
            s,
            r#"<line class="grid" x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}"/>"#,
            f.y0,
            f.y0 + f.h,
        );
        let text = axis.label(t);
        let half = width(&text) / 2.0;
        if x - half < free_from || x + half > W {
            continue;
        }
        free_from = x + half + 8.0;
        let _ = write!(
            s,
            r#"<text class="tick x" x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            f.y0 + f.h + 23.0,
            esc(&text)
        );
    }
    x_name(s, f, name);
}

/// The x axis's name, under its labels.
fn x_name(s: &mut String, f: &Frame, name: &str) {
    if name.is_empty() {
        return;
    }
    let _ = write!(
        s,
        r#"<text class="axis" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        f.x0 + f.w / 2.0,
        f.y0 + f.h + f.bottom - 6.0,
        esc(&layout::fit(name, f.w))
    );
}

/// The legend below the plot: a swatch and a name per entry, flowed in rows by the names'
/// widths; returns the chart's whole height.
fn legend(s: &mut String, f: &Frame, entries: &[(String, String, bool)]) -> f64 {
    let names: Vec<String> = entries.iter().map(|e| e.0.clone()).collect();
    let placed = layout::legend(&names, f.x0, W - 8.0);
    for (e, (_, colour, dashed)) in placed.iter().zip(entries) {
        let y = f.legend_top() + e.row as f64 * LEGEND_ROW;
        let dash = if *dashed {
            r#" stroke-dasharray="6 4""#
        } else {
            ""
        };
        let _ = write!(
            s,
            r#"<g class="legend"><line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{colour}" stroke-width="3"{dash}/><text x="{:.1}" y="{:.1}">{}</text></g>"#,
            e.x,
            e.x + 18.0,
            e.x + 24.0,
            y + 5.0,
            esc(&e.text)
        );
    }
    let rows = placed.last().map_or(0, |e| e.row + 1);
    f.legend_top() + rows as f64 * LEGEND_ROW
}

/// The chart's markup between `open` and `</svg>`, and its height, made into the element.
fn close(kind: &str, series: usize, y: &Axis, title: &str, inner: &str, height: f64) -> String {
    let mut s = String::new();
    open(&mut s, kind, series, height.ceil(), y, title);
    s.push_str(inner);
    s.push_str("</svg>");
    s
}

impl LineChart {
    /// The chart as an inline `<svg>` element.
    pub fn svg(&self, title: &str) -> String {
        self.svg_banded(title, &[])
    }

    /// The chart with a band under each series: `bands[i]` holds series i's (x, low, high),
    /// e.g. the 95% confidence interval of a mean over runs; an empty one draws no band.
    pub fn svg_banded(&self, title: &str, bands: &[Vec<(f64, f64, f64)>]) -> String {
        let f = Frame::new(&self.y.0, BOTTOM);
        let mut entries: Vec<(String, String, bool)> = Vec::new();
        let mut s = String::new();
        y_axis(&mut s, &f, &self.y.0, &self.y.1);
        x_axis(&mut s, &f, &self.x.0, &self.x.1);
        for (i, r) in self.references.iter().enumerate() {
            let c = if i == 0 { "#333" } else { "#888" };
            self.reference(&mut s, &f, r, c);
            entries.push((r.name.clone(), c.to_string(), true));
        }
        for (i, band) in bands.iter().enumerate() {
            self.band(&mut s, &f, band, &colour(i));
        }
        for (i, series) in self.series.iter().enumerate() {
            self.line(&mut s, &f, series, &colour(i));
            entries.push((series.name.clone(), colour(i), false));
        }
        let height = legend(&mut s, &f, &entries) + 4.0;
        close(self.kind, self.series.len(), &self.y.0, title, &s, height)
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

    /// A translucent band from each point's low to its high (nothing with under two points).
    fn band(&self, s: &mut String, f: &Frame, band: &[(f64, f64, f64)], colour: &str) {
        let (x, y) = (&self.x.0, &self.y.0);
        let shown: Vec<&(f64, f64, f64)> = band.iter().filter(|(a, ..)| x.shows(*a)).collect();
        if shown.len() < 2 {
            return;
        }
        let py = |v: f64| f.py(y, v.clamp(y.min, y.max));
        let upper = shown.iter().map(|&&(a, _, hi)| (f.px(x, a), py(hi)));
        let lower = shown.iter().rev().map(|&&(a, lo, _)| (f.px(x, a), py(lo)));
        let text: Vec<String> = upper
            .chain(lower)
            .map(|(a, b)| format!("{a:.1},{b:.1}"))
            .collect();
        let _ = write!(
            s,
            r#"<polygon class="band" fill="{colour}" fill-opacity="0.18" stroke="none" points="{}"/>"#,
            text.join(" ")
        );
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

/// One set of bars of a bar chart: a value (and optional error bar) per category.
pub struct BarSeries {
    /// Its name in the legend.
    pub name: String,
    /// Per category: the bar's value and how far its error bar reaches below and above it
    /// (a ratio's interval is not symmetric).
    pub values: Vec<Option<(f64, Option<Spread>)>>,
}

/// How far an error bar reaches below and above its bar's value.
pub type Spread = (f64, f64);

/// Grouped bars: a group per category, a bar per series, error bars where known.
pub struct BarChart {
    /// What it shows, for `data-chart`.
    pub kind: &'static str,
    /// The groups along the x axis.
    pub categories: Vec<String>,
    /// The x axis's name (empty: none).
    pub x_name: String,
    /// The bars.
    pub series: Vec<BarSeries>,
    /// The y axis's unit and label.
    pub y: (Unit, String),
    /// Linear, or log where the values span decades (22 against 2,191 images/s).
    pub scale: Scale,
    /// The lowest value the metric can take (0 for a rate or a latency, −100 for a
    /// difference in %): neither the axis nor an error bar goes below it.
    pub floor: f64,
}

impl BarChart {
    /// The y axis: from 0 (or the floor) on a linear scale, whole decades on a log one.
    fn y_axis(&self) -> Axis {
        let floor = self.floor;
        let ends = self.series.iter().flat_map(|s| s.values.iter().flatten());
        let ends = ends.flat_map(|&(v, e)| {
            let (below, above) = e.unwrap_or((0.0, 0.0));
            [(v - below).max(floor), v + above, v]
        });
        match self.scale {
            Scale::Log => Axis::fit(Scale::Log, self.y.0, ends, false),
            _ => {
                let mut y = Axis::fit(Scale::Linear, self.y.0, ends.chain([0.0]), true);
                y.min = y.min.max(floor);
                y
            }
        }
    }

    /// The chart as an inline `<svg>` element.
    pub fn svg(&self, title: &str) -> String {
        let y = self.y_axis();
        let probe = Frame::new(&y, 0.0);
        let group = probe.w / self.categories.len().max(1) as f64;
        let cats = layout::categories(&self.categories, group);
        let name_room = if self.x_name.is_empty() { 0.0 } else { 26.0 };
        let f = Frame::new(&y, cats.depth + 10.0 + name_room);
        let mut s = String::new();
        y_axis(&mut s, &f, &y, &self.y.1);
        let bar = group * 0.8 / self.series.len().max(1) as f64;
        for (c, name) in self.categories.iter().enumerate() {
            let gx = f.x0 + c as f64 * group;
            if c % cats.every == 0 {
                category(&mut s, &f, gx + group / 2.0, name, cats.vertical);
            }
            for (i, series) in self.series.iter().enumerate() {
                if let Some(Some((v, err))) = series.values.get(c) {
                    let x = gx + group * 0.1 + i as f64 * bar;
                    let at = Bar {
                        x,
                        width: bar,
                        colour: colour(i),
                    };
                    bar_with_error(&mut s, &f, &y, self.floor, &at, (*v, *err));
                }
            }
        }
        x_name(&mut s, &f, &self.x_name);
        // The bars' foot: 0, or the bottom of a log axis.
        let zero = match y.scale {
            Scale::Log => f.y0 + f.h,
            _ => f.py(&y, 0f64.max(y.min)),
        };
        let _ = write!(
            s,
            r##"<line class="zero" x1="{:.1}" y1="{zero:.1}" x2="{:.1}" y2="{zero:.1}" stroke="#333"/>"##,
            f.x0,
            f.x0 + f.w
        );
        let entries: Vec<(String, String, bool)> = (self.series.iter().enumerate())
            .map(|(i, s)| (s.name.clone(), colour(i), false))
            .collect();
        let height = legend(&mut s, &f, &entries) + 4.0;
        close(self.kind, self.series.len(), &y, title, &s, height)
    }
}

/// A category's label under its group: level, or on its side reading upwards.
fn category(s: &mut String, f: &Frame, cx: f64, name: &str, vertical: bool) {
    let top = f.y0 + f.h;
    let _ = match vertical {
        false => write!(
            s,
            r#"<text class="tick x" x="{cx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            top + 23.0,
            esc(name)
        ),
        true => write!(
            s,
            r#"<text class="tick x" x="{cx:.1}" y="{:.1}" text-anchor="end" transform="rotate(-90 {cx:.1} {:.1})">{}</text>"#,
            top + 8.0,
            top + 8.0,
            esc(name)
        ),
    };
}

/// Where a bar goes: its left edge, its width and its colour.
struct Bar {
    x: f64,
    width: f64,
    colour: String,
}

/// One bar from the base (0, or the foot of a log axis) to `v`, its error bar (cut at
/// `floor`), and its value written above it where the bar is wide enough.
fn bar_with_error(
    s: &mut String,
    f: &Frame,
    y: &Axis,
    floor: f64,
    at: &Bar,
    (v, err): (f64, Option<(f64, f64)>),
) {
    let (x, width) = (at.x, at.width);
    let base = match y.scale {
        Scale::Log => y.min,
        _ => 0f64.max(y.min),
    };
    let v_shown = v.clamp(y.min, y.max);
    let (top, zero) = (f.py(y, v_shown), f.py(y, base));
    let text = super::scale::cell(y.unit, v);
    let _ = write!(
        s,
        r#"<rect class="bar" x="{x:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}</title></rect>"#,
        top.min(zero),
        (width - 2.0).max(1.0),
        (top - zero).abs(),
        at.colour,
        esc(&text)
    );
    let mut above = top.min(zero);
    if let Some((down, up)) = err {
        let lo_v = (v - down).max(floor).max(y.min);
        let (cx, hi, lo) = (
            x + width / 2.0 - 1.0,
            f.py(y, (v + up).min(y.max)),
            f.py(y, lo_v),
        );
        above = above.min(hi);
        let _ = write!(
            s,
            r##"<path class="err" d="M{cx:.1} {hi:.1}V{lo:.1}M{:.1} {hi:.1}H{:.1}M{:.1} {lo:.1}H{:.1}" stroke="#222" stroke-width="1.5" fill="none"/>"##,
            cx - 5.0,
            cx + 5.0,
            cx - 5.0,
            cx + 5.0
        );
    }
    if super::layout::width(&text) + 4.0 <= width && v >= 0.0 {
        let _ = write!(
            s,
            r#"<text class="value" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x + width / 2.0 - 1.0,
            (above - 5.0).max(FONT + 1.0),
            esc(&text)
        );
    }
}
