//! Where a chart's text goes. A page without script cannot measure its text, so widths are
//! estimated from the characters, on the wide side (DejaVu Sans, the widest of the usual
//! system fonts); legends flow into rows by those widths, category labels that would touch
//! are turned on their side (and thinned when even that is too tight), and any number of
//! series gets colours of its own.

/// The charts' font size in SVG units (the style sheet's `svg.chart { font-size }`).
pub const FONT: f64 = 15.0;

/// Tableau 10 (distinct for most colour vision, print well), then generated colours.
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// A colour for the `i`th series: Tableau 10, then hues a golden angle apart at three
/// lightnesses, so no two series of a chart share one (15 sizes, 30 runs).
pub fn colour(i: usize) -> String {
    match PALETTE.get(i) {
        Some(c) => c.to_string(),
        None => {
            let hue = (i as f64 * 137.508) % 360.0;
            let light = [34, 48, 62][(i / 10) % 3];
            format!("hsl({hue:.1},65%,{light}%)")
        }
    }
}

/// An upper estimate of `text`'s width in SVG units at [`FONT`] (DejaVu Sans advances:
/// digits and most lower case 0.64 em, `<=>+` 0.84, `m`, `w`, `%`, `M`, `W` up to 1).
pub fn width(text: &str) -> f64 {
    let em: f64 = (text.chars())
        .map(|c| match c {
            'i' | 'l' | 'j' | '.' | ',' | ':' | ';' | '!' | '|' | '\'' | ' ' => 0.36,
            'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '-' | '/' | 'I' => 0.46,
            '<' | '>' | '=' | '+' | '~' | '#' | '&' => 0.86,
            'm' | 'w' | 'M' | 'W' | '%' | '@' | '…' => 1.0,
            c if c.is_uppercase() => 0.8,
            _ => 0.66,
        })
        .sum();
    em * FONT
}

/// `text` cut in the middle (`tcp://127.0.0.1…:36712`) so that it is at most `room` wide:
/// the end of a name is where names differ as often as the start.
pub fn fit(text: &str, room: f64) -> String {
    if width(text) <= room {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    // No character is narrower than 0.36 em, so no more than room / (0.36 em) of them fit:
    // start there, not at the whole name (a name of n characters cost n² before, 30 s for a
    // 40 kB target name found by fuzzing).
    let most = (room / (0.36 * FONT)).max(0.0) as usize + 2;
    let mut keep = chars.len().min(most);
    while keep > 2 {
        keep -= 1;
        let (head, tail) = (keep.div_ceil(2), keep / 2);
        let s: String = (chars[..head].iter())
            .chain(['…'].iter())
            .chain(chars[chars.len() - tail..].iter())
            .collect();
        if width(&s) <= room {
            return s;
        }
    }
    "…".to_string()
}

/// One legend entry, placed: its left edge, its row and its text.
pub struct Entry {
    /// Left edge of the swatch.
    pub x: f64,
    /// Row, from 0.
    pub row: usize,
    /// The name as drawn (cut in the middle only when wider than the whole legend).
    pub text: String,
}

/// Swatch, gap and trailing space of a legend entry around its text.
const SWATCH: f64 = 24.0;
/// See [`SWATCH`].
const GAP: f64 = 18.0;

/// Legend entries flowed from `left` to `right` in rows, each as wide as its text.
pub fn legend(names: &[String], left: f64, right: f64) -> Vec<Entry> {
    let (mut x, mut row) = (left, 0);
    names
        .iter()
        .map(|name| {
            let text = fit(name, right - left - SWATCH);
            let w = SWATCH + width(&text);
            if x > left && x + w > right {
                (x, row) = (left, row + 1);
            }
            let e = Entry { x, row, text };
            x += w + GAP;
            e
        })
        .collect()
}

/// How a bar chart's category labels sit under their groups.
pub struct Categories {
    /// Turned on their side (reading upwards), when level ones would touch.
    pub vertical: bool,
    /// Every how many-th label is written (1: all).
    pub every: usize,
    /// How far below the axis the labels reach.
    pub depth: f64,
}

/// The placing of `labels` under groups `group` wide.
pub fn categories(labels: &[String], group: f64) -> Categories {
    let widest = labels.iter().map(|l| width(l)).fold(0.0, f64::max);
    if widest + 8.0 <= group {
        return Categories {
            vertical: false,
            every: 1,
            depth: FONT * 1.8,
        };
    }
    Categories {
        vertical: true,
        every: ((FONT * 1.5) / group).ceil().max(1.0) as usize,
        depth: widest + 10.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legend_entries_never_share_room() {
        let names: Vec<String> = ["objective p99<=50ms", "p50", "p99"]
            .map(String::from)
            .to_vec();
        let placed = legend(&names, 96.0, 700.0);
        for w in placed.windows(2) {
            if w[0].row == w[1].row {
                assert!(w[0].x + SWATCH + width(&w[0].text) < w[1].x);
            }
        }
        let long = "tcp://127.0.0.1:36712/a/very/long/path/that/goes/on/and/on/and/on/x";
        let cut = fit(long, 300.0);
        assert!(width(&cut) <= 300.0 && cut.ends_with("on/x") && cut.starts_with("tcp://"));
    }

    #[test]
    fn a_very_long_name_is_cut_at_once() {
        let long = "a,".repeat(50_000);
        let started = std::time::Instant::now();
        let cut = fit(&long, 300.0);
        assert!(width(&cut) <= 300.0 && cut.contains('…'), "{cut}");
        // Linear in the name: well under a second even unoptimised (it took minutes before).
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn thirty_series_have_thirty_colours() {
        let all: std::collections::HashSet<String> = (0..30).map(colour).collect();
        assert_eq!(all.len(), 30);
    }
}
