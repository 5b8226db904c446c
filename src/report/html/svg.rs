//! A small SVG writer for the report's charts: line charts (one `<polyline class="series">`
//! per series, markers where points are few, dashed reference lines such as an objective, a
//! confidence band as a light fill between dotted edges, under the lines) and grouped bar
//! charts with error bars, each bar's value written beside its end, above or below zero. Each
//! chart is an inline `<svg>` carrying `data-chart` (what it shows) and `data-series` (how
//! many series it draws), so a test reading the DOM can count them, and `data-y` (its y
//! scale). Tick labels carry `tick x` or `tick y`. Text is placed by [`super::layout`] so that
//! no two labels touch, and goes through [`super::page::esc`].
//!
//! No chart draws more than [`MOST`] series: more (a spectrum per run of a 30-run sweep) are
//! drawn as small multiples ([`LineChart::figures`], [`BarChart::figures`]): charts side by
//! side on the same axes, each with at most [`MOST`] series in colours of its own and a legend
//! as short, each marked `data-panel="K/N"`.

use super::layout::{self, colour, width, FONT};
use super::page::esc;
use super::scale::{Axis, Scale, Unit};
use std::fmt::Write as _;

mod bars;

pub use bars::{BarChart, BarSeries, Spread};

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

/// The most series one chart draws; more are drawn as small multiples.
pub const MOST: usize = 8;

/// `n` series split into the fewest panels of at most [`MOST`] each, as even as can be (15:
/// 8 and 7): the ranges of their indices; one range (maybe empty) when they fit one chart.
pub fn panels(n: usize) -> Vec<std::ops::Range<usize>> {
    let count = n.div_ceil(MOST).max(1);
    let (base, extra) = (n / count, n % count);
    let mut start = 0;
    (0..count)
        .map(|i| {
            let len = base + usize::from(i < extra);
            start += len;
            start - len..start
        })
        .collect()
}

/// A panel's caption: the chart's, with which of how many it is when there are several.
fn panel_caption(caption: &str, k: usize, count: usize) -> String {
    match count {
        1 => caption.to_string(),
        _ => format!("{caption} ({} of {count})", k + 1),
    }
}

/// The `data-panel` attribute of panel `k` of `count` (none when the chart is whole).
fn panel_attr(k: usize, count: usize) -> String {
    match count {
        1 => String::new(),
        _ => format!(r#" data-panel="{}/{count}""#, k + 1),
    }
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

/// The `<svg>` opening tag for a chart `height` high; `data-y` names its y scale, `panel`
/// holds the `data-panel` attribute of one of small multiples (or nothing).
fn open(
    s: &mut String,
    kind: &str,
    series: usize,
    height: f64,
    y: &Axis,
    title: &str,
    panel: &str,
) {
    let scale = match y.scale {
        Scale::Log => "log",
        Scale::Linear => "linear",
        Scale::Nines => "nines",
    };
    let _ = write!(
        s,
        r#"<svg class="chart" data-chart="{kind}" data-series="{series}"{panel} data-y="{scale}" viewBox="0 0 {W} {height:.0}" role="img" aria-label="{t}"><title>{t}</title>"#,
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

/// What a chart's `<svg>` element says of itself: its kind, its series, its y axis, its
/// title and which panel of small multiples it is.
struct Head<'a> {
    kind: &'a str,
    series: usize,
    y: &'a Axis,
    title: &'a str,
    panel: String,
}

/// The chart's markup between `open` and `</svg>`, and its height, made into the element.
fn close(head: &Head, inner: &str, height: f64) -> String {
    let mut s = String::new();
    let h = head;
    open(
        &mut s,
        h.kind,
        h.series,
        height.ceil(),
        h.y,
        h.title,
        &h.panel,
    );
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
        self.draw(title, &self.series, bands, String::new())
    }

    /// The chart as (caption, svg) figures: one when it has at most [`MOST`] series, else
    /// small multiples on the same axes, each with at most [`MOST`] series (and their
    /// bands, `bands[i]` series i's as in [`Self::svg_banded`]) and the reference lines.
    pub fn figures(&self, caption: &str, bands: &[Vec<(f64, f64, f64)>]) -> Vec<(String, String)> {
        let all = panels(self.series.len());
        let count = all.len();
        (all.into_iter().enumerate())
            .map(|(k, range)| {
                let caption = panel_caption(caption, k, count);
                let bands = bands.get(range.clone()).unwrap_or(&[]);
                let svg = self.draw(&caption, &self.series[range], bands, panel_attr(k, count));
                (caption, svg)
            })
            .collect()
    }

    /// The chart of `series` (a panel's, or all), with their `bands`.
    fn draw(
        &self,
        title: &str,
        series: &[Series],
        bands: &[Vec<(f64, f64, f64)>],
        panel: String,
    ) -> String {
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
        for (i, one) in series.iter().enumerate() {
            self.line(&mut s, &f, one, &colour(i));
            entries.push((one.name.clone(), colour(i), false));
        }
        let height = legend(&mut s, &f, &entries) + 4.0;
        let head = Head {
            kind: self.kind,
            series: series.len(),
            y: &self.y.0,
            title,
            panel,
        };
        close(&head, &s, height)
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

    /// A band from each point's low to its high (nothing with under two points), drawn so
    /// that what lies under it still shows: a light fill, its edges dotted in the series'
    /// colour (several bands that cross add up to no more than a tint).
    fn band(&self, s: &mut String, f: &Frame, band: &[(f64, f64, f64)], colour: &str) {
        let (x, y) = (&self.x.0, &self.y.0);
        let shown: Vec<&(f64, f64, f64)> = band.iter().filter(|(a, ..)| x.shows(*a)).collect();
        if shown.len() < 2 {
            return;
        }
        let py = |v: f64| f.py(y, v.clamp(y.min, y.max));
        let upper: Vec<String> = (shown.iter())
            .map(|&&(a, _, hi)| format!("{:.1},{:.1}", f.px(x, a), py(hi)))
            .collect();
        let lower: Vec<String> = (shown.iter().rev())
            .map(|&&(a, lo, _)| format!("{:.1},{:.1}", f.px(x, a), py(lo)))
            .collect();
        let _ = write!(
            s,
            r#"<polygon class="band" fill="{colour}" fill-opacity="0.1" stroke="none" points="{} {}"/>"#,
            upper.join(" "),
            lower.join(" ")
        );
        for edge in [&upper, &lower] {
            let _ = write!(
                s,
                r#"<polyline class="band-edge" fill="none" stroke="{colour}" stroke-width="1" stroke-opacity="0.7" stroke-dasharray="2 3" points="{}"/>"#,
                edge.join(" ")
            );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_series_are_split_evenly_into_panels_of_at_most_eight() {
        let lens = |n| panels(n).iter().map(|r| r.len()).collect::<Vec<_>>();
        assert_eq!(lens(0), [0]);
        assert_eq!(lens(8), [8]);
        assert_eq!(lens(15), [8, 7]);
        assert_eq!(lens(30), [8, 8, 7, 7]);
        assert_eq!(panels(30).last().unwrap().end, 30);
    }

    #[test]
    fn a_band_is_light_and_under_every_line() {
        let series = (0..12)
            .map(|i| Series {
                name: format!("s{i}"),
                points: vec![(1.0, 10.0 + i as f64), (2.0, 12.0 + i as f64)],
            })
            .collect();
        let chart = LineChart {
            kind: "ops",
            x: (
                Axis::fit(Scale::Linear, Unit::Count, [1.0, 2.0].into_iter(), false),
                "x".into(),
            ),
            y: (
                Axis::fit(Scale::Linear, Unit::Count, [0.0, 30.0].into_iter(), true),
                "y".into(),
            ),
            series,
            references: Vec::new(),
        };
        let bands: Vec<_> = (0..12)
            .map(|i| {
                vec![
                    (1.0, 9.0 + i as f64, 11.0 + i as f64),
                    (2.0, 11.0 + i as f64, 13.0 + i as f64),
                ]
            })
            .collect();
        let figures = chart.figures("c", &bands);
        assert_eq!(figures.len(), 2, "12 series: two panels of 6");
        for (caption, svg) in &figures {
            assert!(
                caption.starts_with("c (") && caption.ends_with(" of 2)"),
                "{caption}"
            );
            assert!(svg.contains("data-series=\"6\""));
            assert_eq!(svg.matches("class=\"band\"").count(), 6);
            let (last_band, first_line) = (
                svg.rfind("class=\"band-edge\"").unwrap(),
                svg.find("class=\"series\"").unwrap(),
            );
            assert!(last_band < first_line, "bands under the lines");
            assert!(!svg.contains("fill-opacity=\"0.18\""));
        }
    }
}
