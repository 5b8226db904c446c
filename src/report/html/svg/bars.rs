//! Grouped bar charts: a group per category, a bar per series, error bars where known, each
//! bar's value written beside its end, above or below zero; small multiples past
//! [`MOST`](super::MOST) series, on the frame, axes and legend of [`super`].

use super::{close, colour, legend, panel_attr, panel_caption, panels, x_name, y_axis};
use super::{esc, layout, Axis, Frame, Head, Scale, Unit, FONT};
use std::fmt::Write as _;

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
        self.draw(title, &self.y_axis(), &self.series, String::new())
    }

    /// The chart as (caption, svg) figures: one when it has at most [`MOST`](super::MOST)
    /// series, else small multiples on the same y axis, each with at most that many.
    pub fn figures(&self, caption: &str) -> Vec<(String, String)> {
        let y = self.y_axis();
        let all = panels(self.series.len());
        let count = all.len();
        (all.into_iter().enumerate())
            .map(|(k, range)| {
                let caption = panel_caption(caption, k, count);
                let svg = self.draw(&caption, &y, &self.series[range], panel_attr(k, count));
                (caption, svg)
            })
            .collect()
    }

    /// The chart of `series` (a panel's, or all) on the y axis `y`.
    fn draw(&self, title: &str, y: &Axis, series: &[BarSeries], panel: String) -> String {
        let y = y.clone();
        let probe = Frame::new(&y, 0.0);
        let group = probe.w / self.categories.len().max(1) as f64;
        let cats = layout::categories(&self.categories, group);
        let name_room = if self.x_name.is_empty() { 0.0 } else { 26.0 };
        let f = Frame::new(&y, cats.depth + 10.0 + name_room);
        let mut s = String::new();
        y_axis(&mut s, &f, &y, &self.y.1);
        let bar = group * 0.8 / series.len().max(1) as f64;
        for (c, name) in self.categories.iter().enumerate() {
            let gx = f.x0 + c as f64 * group;
            if c % cats.every == 0 {
                category(&mut s, &f, gx + group / 2.0, name, cats.vertical);
            }
            for (i, one) in series.iter().enumerate() {
                if let Some(Some((v, err))) = one.values.get(c) {
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
        let entries: Vec<(String, String, bool)> = (series.iter().enumerate())
            .map(|(i, s)| (s.name.clone(), colour(i), false))
            .collect();
        let height = legend(&mut s, &f, &entries) + 4.0;
        let head = Head {
            kind: self.kind,
            series: series.len(),
            y: &y,
            title,
            panel,
        };
        close(&head, &s, height)
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
/// `floor`), and its value written where the bar is wide enough: beyond its end, above a bar
/// that rises and below one that falls (a difference below the baseline), or above the zero
/// line when a falling bar leaves no room under it. A difference in % carries its sign.
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
    let text = value_text(y.unit, v);
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
    let mut below = top.max(zero);
    if let Some(err) = err {
        let (hi, lo) = error_bar(s, f, y, floor, at, (v, err));
        above = above.min(hi);
        below = below.max(lo);
    }
    if layout::width(&text) + 4.0 > width {
        return;
    }
    // The baseline under a falling bar: a line's height below its end, inside the plot.
    let under = below + FONT;
    let baseline = match v < 0.0 && under <= f.y0 + f.h - 4.0 {
        true => under,
        false => (above - 5.0).max(FONT + 1.0),
    };
    let _ = write!(
        s,
        r#"<text class="value" x="{:.1}" y="{baseline:.1}" text-anchor="middle">{}</text>"#,
        x + width / 2.0 - 1.0,
        esc(&text)
    );
}

/// A bar's value as written beside it: three figures are enough for a percentage (`+1170%`,
/// `-92.2%`); other units as their table cells.
fn value_text(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Percent => {
            let t = format!("{:.*}%", usize::from(v.abs() < 100.0), v);
            if v > 0.0 {
                format!("+{t}")
            } else {
                t
            }
        }
        unit => crate::report::html::scale::cell(unit, v),
    }
}

/// The error bar of a bar of value `v`, `down` below and `up` above it (never below `floor`
/// nor outside the axis); its top and bottom, in pixels.
fn error_bar(
    s: &mut String,
    f: &Frame,
    y: &Axis,
    floor: f64,
    at: &Bar,
    (v, (down, up)): (f64, (f64, f64)),
) -> (f64, f64) {
    let lo_v = (v - down).max(floor).max(y.min);
    let (cx, hi, lo) = (
        at.x + at.width / 2.0 - 1.0,
        f.py(y, (v + up).min(y.max)),
        f.py(y, lo_v),
    );
    let _ = write!(
        s,
        r##"<path class="err" d="M{cx:.1} {hi:.1}V{lo:.1}M{:.1} {hi:.1}H{:.1}M{:.1} {lo:.1}H{:.1}" stroke="#222" stroke-width="1.5" fill="none"/>"##,
        cx - 5.0,
        cx + 5.0,
        cx - 5.0,
        cx + 5.0
    );
    (hi, lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_below_zero_are_labelled_too() {
        let chart = BarChart {
            kind: "difference",
            categories: vec!["throughput".into(), "p99 latency".into()],
            x_name: String::new(),
            series: vec![BarSeries {
                name: "b".into(),
                values: vec![Some((-40.0, Some((5.0, 5.0)))), Some((25.0, None))],
            }],
            y: (Unit::Percent, "difference".into()),
            scale: Scale::Linear,
            floor: -100.0,
        };
        let svg = chart.svg("d");
        assert!(
            svg.contains(">-40.0%</text>") && svg.contains(">+25.0%</text>"),
            "{svg}"
        );
    }
}
