//! `wirebench report` opened in a real browser: for each kind of document, a real run against
//! `wirebench serve`, the page rendered by the binary, then Debian's Chromium, headless:
//!
//! - `--dump-dom`: the DOM holds the tables and the SVG charts, each with the number of series
//!   the document implies (`data-series` and one `<polyline class="series">` or one set of bars
//!   per series), and text with `<` and `&` stayed text;
//! - `--screenshot`: the PNG is not blank (many distinct colours, a fair share of non-white);
//! - no network request: the page is served by a one-file HTTP server on 127.0.0.1 in the test,
//!   which must see exactly one request (the page) per browser launch, and Chromium is told to
//!   send every other request through a "proxy" that is a trap listener on 127.0.0.1: any fetch
//!   of anything else (another path on the page's server, or any other host, http or https)
//!   arrives at one of the two and fails the test (Chromium's own calls to three named Google
//!   services are let through: they come whatever the page). A control page with an `<img>` and a style
//!   sheet proves the trap catches fetches.
//!
//! Set `WIREBENCH_DOCS_SCREENSHOTS=1` to also write each screenshot, cropped, to
//! `docs/report-KIND.png` (the README's pictures).

mod common;

// One browser or load at a time (common::one_at_a_time): the tests measure, and Chromium is heavy.
use common::{one_at_a_time, run_bounded, ServerProcess};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Generous: Chromium and the runs share 2 loaded CPUs.
const LIMIT: Duration = Duration::from_secs(120);

/// The hosts Chromium itself calls whatever the page (seen on a page of a single heading):
/// network time, the component updater, the account check, and (seen once beside a CPU hog)
/// the optimization guide's model download. Exact names: a page's fetch of anything else,
/// Google's font CDN included, fails the test.
const CHROMIUM_OWN: [&str; 4] = [
    "clients2.google.com",
    "update.googleapis.com",
    "accounts.google.com",
    "optimizationguide-pa.googleapis.com",
];

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("wirebench-html-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A listener on 127.0.0.1 that records the first line of every connection it accepts, and
/// answers `page` to a GET of `/report.html` (404 to anything else).
struct Recorder {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    fn start(page: Option<Vec<u8>>) -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { break };
                let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
                let mut first = String::new();
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let _ = reader.read_line(&mut first);
                // The rest of the head, so the reply is not cut short by unread bytes.
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                // The page's server counts requests; Chromium also opens spare connections
                // it may never use (preconnect), which fetch nothing. The trap counts all.
                if page.is_none() || !first.trim().is_empty() {
                    log.lock().unwrap().push(first.trim().to_string());
                }
                let reply = match (&page, first.starts_with("GET /report.html ")) {
                    (Some(body), true) => [
                        format!("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len()).into_bytes(),
                        body.clone(),
                    ]
                    .concat(),
                    _ => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec(),
                };
                let _ = conn.write_all(&reply);
            }
        });
        Recorder { port, seen }
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

/// Runs headless Chromium on `url` with `extra` flags (and every request other than to
/// 127.0.0.1 sent to the `trap` port as a proxy); returns its stdout.
fn chromium(url: &str, trap: u16, extra: &[String], profile: &Path) -> String {
    let mut child = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--disable-features=OptimizationGuideModelDownloading,OptimizationHintsFetching,OptimizationTargetPrediction,OptimizationHints",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--proxy-server=http://127.0.0.1:{trap}"))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium (apt-get install chromium; .ci/run installs it)");
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("chromium ran longer than {LIMIT:?} on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().unwrap()
}

/// What the browser made of a page: its DOM (after layout), its screenshot, the lines the
/// layout probe wrote (see [`LAYOUT_PROBE`]) and the text of the page printed to PDF.
struct Opened {
    dom: String,
    png: Vec<u8>,
    layout: Vec<String>,
    pdf: String,
}

/// Added to the page the browser opens (not to the file the binary wrote, which holds no
/// script): after layout it writes, into a hidden `<pre id="layout">`, a line per pair of
/// chart texts (tick labels, axis names, legend entries and their swatches, values) whose
/// boxes overlap, per text outside its chart, per chart whose series share a colour, per
/// chart of more than 8 series (`crowded`), per confidence band that could hide a line (drawn
/// over one, or filled more than 15% opaque), per table or preformatted block whose content
/// is cut (wider than its box: a scroll bar, or clipped on paper), for a page wider than the
/// window, and each y tick's label (the right-aligned level tick labels). It also gives the
/// boxes the screenshot is checked by: `main`, each `chart` and each chart `label`, in pixels
/// of the page (left top right bottom).
const LAYOUT_PROBE: &str = r#"<script>(function () {
  var out = [];
  var box = function (r) {
    return [r.left, r.top + window.scrollY, r.right, r.bottom + window.scrollY].map(function (v) {
      return v.toFixed(1);
    }).join(' ');
  };
  out.push('main ' + box(document.querySelector('main').getBoundingClientRect()));
  out.push('height ' + document.documentElement.scrollHeight);
  if (document.documentElement.scrollWidth > window.innerWidth + 1) out.push('outside page: ' +
    document.documentElement.scrollWidth + ' px wide in a window of ' + window.innerWidth);
  document.querySelectorAll('.scroll, pre').forEach(function (e) {
    var what = e.tagName === 'PRE' ? 'pre' : 'table ' + e.firstElementChild.className;
    if (e.scrollWidth > e.clientWidth + 1) out.push('clipped ' + what + ': ' + e.scrollWidth +
      ' px of content in ' + e.clientWidth);
  });
  document.querySelectorAll('svg.chart').forEach(function (svg) {
    var kind = svg.getAttribute('data-chart'), frame = svg.getBoundingClientRect();
    out.push('chart ' + kind + ' ' + box(frame));
    var n = parseInt(svg.getAttribute('data-series'), 10);
    if (n > 8) out.push('crowded ' + kind + ': ' + n + ' series in one chart');
    var lines = svg.querySelectorAll('polyline.series');
    svg.querySelectorAll('polygon.band').forEach(function (b) {
      var fill = parseFloat(getComputedStyle(b).fillOpacity);
      if (fill > 0.15) out.push('hiding band ' + kind + ': filled ' + fill + ' opaque');
      lines.forEach(function (l) {
        if (b.compareDocumentPosition(l) & Node.DOCUMENT_POSITION_PRECEDING)
          out.push('hiding band ' + kind + ': drawn over ' + l.getAttribute('data-name'));
      });
    });
    var texts = Array.prototype.filter.call(svg.querySelectorAll('text, g.legend line'),
      function (t) { return t.tagName === 'line' || t.textContent.trim() !== ''; });
    var boxes = texts.map(function (t) {
      var r = t.getBoundingClientRect(), pad = t.tagName === 'line' ? 1.5 : 0;
      return { left: r.left, right: r.right, top: r.top - pad, bottom: r.bottom + pad };
    });
    for (var i = 0; i < texts.length; i++) {
      var a = boxes[i];
      if (texts[i].tagName === 'text') out.push('label ' + box(texts[i].getBoundingClientRect()) +
        ' ' + texts[i].textContent);
      if (a.left < frame.left - 1 || a.right > frame.right + 1 || a.top < frame.top - 1 ||
          a.bottom > frame.bottom + 1) out.push('outside ' + kind + ': ' + texts[i].textContent);
      for (var j = i + 1; j < texts.length; j++) {
        var b = boxes[j];
        var w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        var h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > 0.5 && h > 0.5) out.push('overlap ' + kind + ': ' +
          JSON.stringify(texts[i].textContent) + ' and ' + JSON.stringify(texts[j].textContent));
      }
    }
    svg.querySelectorAll('text.tick[text-anchor="end"]:not([transform])').forEach(function (t) {
      out.push('ytick ' + kind + ' ' + t.textContent);
    });
    var colours = {}, n = 0;
    svg.querySelectorAll('polyline.series').forEach(function (p) {
      colours[p.getAttribute('stroke')] = 1; n++;
    });
    if (Object.keys(colours).length < n) out.push('shared colour ' + kind + ': ' + n +
      ' series, ' + Object.keys(colours).length + ' colours');
  });
  var pre = document.createElement('pre');
  pre.id = 'layout'; pre.hidden = true; pre.textContent = out.join('\n');
  document.body.appendChild(pre);
})();</script>"#;

/// The tallest screenshot taken (pixels): a page longer than this is looked at down to it.
const MAX_SHOT_HEIGHT: u32 = 16_000;

/// Serves `html` (with the layout probe) from 127.0.0.1, opens it three times
/// (`--dump-dom`, `--screenshot`, `--print-to-pdf`) and checks that nothing but the page
/// itself was requested.
fn open_in_browser(html: &[u8], scratch: &Path) -> Opened {
    let probed =
        String::from_utf8_lossy(html).replace("</body>", &format!("{LAYOUT_PROBE}</body>"));
    let (page, trap) = (
        Recorder::start(Some(probed.into_bytes())),
        Recorder::start(None),
    );
    let url = format!("http://127.0.0.1:{}/report.html", page.port);
    let profile = scratch.join("profile");
    let window = "--window-size=1280,2000".to_string();
    let dom = chromium(
        &url,
        trap.port,
        &["--dump-dom".to_string(), window.clone()],
        &profile,
    );
    // The screenshot is as tall as the page (the layout probe measured it in the first
    // opening), so that every chart is looked at, not the first window's worth; the layout
    // does not depend on the window's height, so the probe's boxes hold in it.
    let height = (dom.split("\nheight ").nth(1))
        .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse::<u32>().ok())
        .unwrap_or(2000)
        .clamp(2000, MAX_SHOT_HEIGHT);
    let shot = scratch.join("shot.png");
    chromium(
        &url,
        trap.port,
        &[
            format!("--screenshot={}", shot.display()),
            format!("--window-size=1280,{height}"),
        ],
        &profile,
    );
    let png = std::fs::read(&shot).expect("chromium wrote the screenshot");
    let pdf = scratch.join("page.pdf");
    chromium(
        &url,
        trap.port,
        &[
            format!("--print-to-pdf={}", pdf.display()),
            "--no-pdf-header-footer".to_string(),
        ],
        &profile,
    );
    // The listeners record a connection as it arrives; a moment lets a late one land.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        page.seen(),
        ["GET /report.html HTTP/1.1"; 3],
        "the page's server saw a request other than the page"
    );
    // A spare connection to the proxy that sent no request (Chromium preconnects to it when
    // busy) fetched nothing.
    let elsewhere: Vec<String> = (trap.seen().into_iter())
        .filter(|r| !r.is_empty())
        .filter(|r| {
            !CHROMIUM_OWN.iter().any(|host| {
                r.contains(&format!(" http://{host}/")) || r.contains(&format!(" {host}:443 "))
            })
        })
        .collect();
    assert!(
        elsewhere.is_empty(),
        "the page fetched from elsewhere: {elsewhere:?}"
    );
    let layout = (dom.split("id=\"layout\"").nth(1))
        .and_then(|s| s.split_once('>'))
        .map(|(_, s)| s.split("</pre>").next().unwrap_or(""))
        .map(|s| s.lines().map(unescape).collect())
        .expect("the layout probe ran");
    Opened {
        dom,
        png,
        layout,
        pdf: pdf_text(&pdf),
    }
}

/// The text of a PDF, by poppler's pdftotext (.ci/run installs poppler-utils).
fn pdf_text(pdf: &Path) -> String {
    let out = Command::new("pdftotext")
        .arg(pdf)
        .arg("-")
        .output()
        .expect("pdftotext (apt-get install poppler-utils; .ci/run installs it)");
    assert!(
        out.status.success(),
        "pdftotext failed on {}",
        pdf.display()
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// HTML text with its five escapes undone.
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// What a person would see wrong in the charts: text on text, text cut off at a chart's
/// edge, two series in one colour, or a y axis below what its metric can be (below 0, or
/// below −100% for a difference from the baseline: no rate or time falls by more).
fn check_layout(page: &Opened) {
    let wrong: Vec<&String> = (page.layout.iter())
        .filter(|l| {
            [
                "overlap", "outside", "shared", "crowded", "hiding", "clipped",
            ]
            .iter()
            .any(|w| l.starts_with(w))
        })
        .collect();
    assert!(wrong.is_empty(), "charts a person cannot read: {wrong:#?}");
    for line in page.layout.iter().filter(|l| l.starts_with("ytick ")) {
        let mut words = line.splitn(3, ' ').skip(1);
        let (kind, label) = (words.next().unwrap(), words.next().unwrap_or(""));
        let number: String = (label.chars())
            .take_while(|c| c.is_ascii_digit() || "-−.".contains(*c))
            .collect();
        let v: f64 = number.replace('−', "-").parse().unwrap_or(0.0);
        let lowest = if kind == "difference" { -100.0 } else { 0.0 };
        assert!(v >= lowest, "{kind}: a y axis down to {label}");
    }
}

/// Every word of every table (each cell's words of three characters or more: figures, names,
/// headings) is whole in the printed PDF: no column was cut off at the page's edge, and no
/// cell broke a word or a figure inside ("ta rg et", "18, 856").
fn check_print(page: &Opened) {
    // pdftotext reads two hyphens side by side (`--runs` at 8 pt) as one glyph drawn twice
    // (its fake-bold check) and prints one: both sides are read with `--` as `-`.
    let squash = |w: &str| w.replace("--", "-");
    let printed: std::collections::HashSet<String> =
        page.pdf.split_whitespace().map(squash).collect();
    // A line may end after a hyphen (`-` `runs`, as any browser breaks it): a word with one
    // is found in the text with the line breaks taken out.
    let joined: String = squash(&page.pdf.split_whitespace().collect::<String>());
    // A figure is never broken inside (tables wrap at spaces only, on screen and on paper), so
    // each is found whole among the printed words.
    let mut missing = Vec::new();
    for table in page.dom.split("<table").skip(1) {
        let table = table.split("</table>").next().unwrap();
        for cell in table
            .split("<t")
            .skip(1)
            .filter(|c| c.starts_with('d') || c.starts_with("h"))
        {
            let text = cell.split_once('>').map_or("", |(_, t)| t);
            let text = unescape(text.split('<').next().unwrap_or(""));
            for word in text.split_whitespace() {
                let word = squash(word);
                let found =
                    printed.contains(&word) || (word.contains('-') && joined.contains(&word));
                if word.chars().count() >= 3 && !found {
                    missing.push(word.to_string());
                }
            }
        }
    }
    assert!(missing.is_empty(), "not in the printed PDF: {missing:?}");
}

/// Every chart in the DOM: (data-chart, data-series, polylines, bars).
fn charts(dom: &str) -> Vec<(String, usize, usize, usize)> {
    let attr = |s: &str, name: &str| -> String {
        let from = s
            .find(&format!("{name}=\""))
            .map(|i| i + name.len() + 2)
            .unwrap_or(0);
        s[from..].split('"').next().unwrap_or("").to_string()
    };
    dom.split("<svg class=\"chart\"")
        .skip(1)
        .map(|s| {
            let svg = s.split("</svg>").next().unwrap();
            (
                attr(svg, "data-chart"),
                attr(svg, "data-series").parse().unwrap_or(usize::MAX),
                svg.matches("<polyline class=\"series\"").count(),
                svg.matches("<rect class=\"bar\"").count(),
            )
        })
        .collect()
}

/// The charts of kind `kind`, checked to draw `series` series each; returns how many.
fn expect_charts(dom: &str, kind: &str, series: usize) -> usize {
    let found: Vec<_> = charts(dom).into_iter().filter(|c| c.0 == kind).collect();
    assert!(
        !found.is_empty(),
        "no {kind} chart in the DOM: {:?}",
        charts(dom)
    );
    for (_, n, lines, bars) in &found {
        assert_eq!(*n, series, "{kind}: data-series");
        assert!(
            *lines == series || (*lines == 0 && *bars >= series),
            "{kind}: {lines} polylines, {bars} bars for {series} series"
        );
    }
    found.len()
}

/// The charts of kind `kind`, drawn as small multiples where their series are more than 8:
/// each draws at most 8 (and a polyline or bars for each), all together `total`; returns
/// how many charts there are.
fn expect_panels(dom: &str, kind: &str, total: usize) -> usize {
    let found: Vec<_> = charts(dom).into_iter().filter(|c| c.0 == kind).collect();
    assert!(!found.is_empty(), "no {kind} chart in the DOM");
    for (_, n, lines, bars) in &found {
        assert!(*n <= 8, "{kind}: {n} series in one chart");
        assert!(
            lines == n || (*lines == 0 && bars >= n),
            "{kind}: {lines} polylines, {bars} bars for {n} series"
        );
    }
    let drawn: usize = found.iter().map(|c| c.1).sum();
    assert_eq!(drawn, total, "{kind}: series drawn in all its panels");
    found.len()
}

/// The rows of the table with class `class`.
fn table_rows(dom: &str, class: &str) -> usize {
    let at = dom
        .find(&format!("<table class=\"{class}\""))
        .unwrap_or_else(|| panic!("no table {class} in the DOM"));
    let table = dom[at..].split("</table>").next().unwrap();
    table
        .split("<tbody>")
        .nth(1)
        .unwrap_or("")
        .matches("<tr")
        .count()
}

/// The screenshot is a real page: many colours, a fair share of ink.
fn check_not_blank(png: &[u8]) -> (png::OutputInfo, Vec<u8>) {
    let decoder = png::Decoder::new(png);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    let channels = info.color_type.samples();
    let mut colours = std::collections::HashSet::new();
    let mut ink = 0usize;
    for px in buf.chunks(channels) {
        colours.insert((px[0], px[1], px[2]));
        if px[..3].iter().any(|c| *c < 235) {
            ink += 1;
        }
    }
    let share = ink as f64 / (buf.len() / channels) as f64;
    assert!(
        colours.len() > 100,
        "{} colours: a blank page?",
        colours.len()
    );
    assert!(
        share > 0.02,
        "{:.1}% of the pixels have ink: a blank page?",
        share * 100.0
    );
    (info, buf)
}

/// A box of the layout probe's (`main`, `chart`, `label`): left, top, right, bottom in
/// pixels of the page, and what follows (a chart's kind, a label's text).
fn boxes<'a>(page: &'a Opened, what: &str) -> Vec<([f64; 4], &'a str)> {
    (page.layout.iter())
        .filter_map(|l| l.strip_prefix(what)?.strip_prefix(' '))
        .map(|l| {
            // A chart's kind comes before its box, a label's text after it.
            let words: Vec<&str> = l.splitn(5, ' ').collect();
            let (nums, rest) = match what {
                "chart" => (&words[1..5], words[0]),
                _ => (&words[..4], words.get(4).copied().unwrap_or("")),
            };
            let n: Vec<f64> = nums.iter().map(|v| v.parse().unwrap()).collect();
            ([n[0], n[1], n[2], n[3]], rest)
        })
        .collect()
}

/// The screenshot looked at, pixel by pixel, where the layout probe says the page's parts
/// are (the screenshot is the whole page, up to [`MAX_SHOT_HEIGHT`], 1 CSS pixel to 1 pixel):
///
/// - no text is drawn outside the page's column (`main`): the margins right and left of it
///   hold no ink, so nothing ran off the page;
/// - no chart's text is cut at its edge: the outermost ring of pixels of every chart holds
///   no text ink (dark grey or darker; the charts' lines and bars are coloured or light);
/// - no label (a tick, an axis name, a legend entry, a bar's value) is drawn over the data:
///   the pixels inside its box are text ink on white, not a line's or a bar's colour.
///
/// Returns how many charts and labels were looked at.
fn check_pixels(page: &Opened, info: &png::OutputInfo, pixels: &[u8]) -> (usize, usize) {
    let (w, h, channels) = (
        info.width as usize,
        info.height as usize,
        info.color_type.samples(),
    );
    let at = |x: usize, y: usize| {
        let i = (y * w + x) * channels;
        (pixels[i], pixels[i + 1], pixels[i + 2])
    };
    let dark = |(r, g, b): (u8, u8, u8)| r < 130 && g < 130 && b < 140;
    let coloured = |(r, g, b): (u8, u8, u8)| r.max(g).max(b) - r.min(g).min(b) >= 45;
    let shown = |b: &[f64; 4]| b[0] >= 0.0 && b[1] >= 0.0 && b[2] <= w as f64 && b[3] <= h as f64;
    let main = boxes(page, "main")[0].0;
    let mut ink_outside = 0;
    for y in 0..h {
        for x in (0..w).filter(|x| (*x as f64) < main[0] - 1.0 || (*x as f64) > main[2] + 1.0) {
            ink_outside += usize::from(dark(at(x, y)));
        }
    }
    assert_eq!(ink_outside, 0, "text drawn outside the page's column");
    let charts: Vec<_> = boxes(page, "chart")
        .into_iter()
        .filter(|(b, _)| shown(b))
        .collect();
    for (b, kind) in &charts {
        let (l, t, r, bottom) = (
            b[0].ceil() as usize,
            b[1].ceil() as usize,
            b[2].floor() as usize - 1,
            b[3].floor() as usize - 1,
        );
        let ring = (l..=r)
            .flat_map(|x| [(x, t), (x, bottom)])
            .chain((t..=bottom).flat_map(|y| [(l, y), (r, y)]));
        let cut: Vec<(usize, usize)> = ring.filter(|(x, y)| dark(at(*x, *y))).collect();
        assert!(
            cut.is_empty(),
            "{kind}: text cut at the chart's edge, at {:?}",
            &cut[..cut.len().min(5)]
        );
    }
    let labels: Vec<_> = boxes(page, "label")
        .into_iter()
        .filter(|(b, _)| shown(b))
        .collect();
    for (b, text) in &labels {
        let (l, t, r, bottom) = (
            b[0].ceil() as usize + 1,
            b[1].ceil() as usize + 1,
            b[2].floor() as usize - 1,
            b[3].floor() as usize - 1,
        );
        let all = (r.saturating_sub(l)) * (bottom.saturating_sub(t));
        let under = (l..r)
            .flat_map(|x| (t..bottom).map(move |y| (x, y)))
            .filter(|(x, y)| coloured(at(*x, *y)))
            .count();
        assert!(
            under * 20 <= all.max(20),
            "the label {text:?} is drawn over the data: {under} of its {all} pixels coloured"
        );
    }
    (charts.len(), labels.len())
}

/// With WIREBENCH_DOCS_SCREENSHOTS set, writes the top of the screenshot to docs/.
fn keep_for_docs(kind: &str, info: &png::OutputInfo, pixels: &[u8]) {
    if std::env::var_os("WIREBENCH_DOCS_SCREENSHOTS").is_none() {
        return;
    }
    let rows = (info.height as usize).min(1500);
    let row = info.line_size;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("docs/report-{kind}.png"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut encoder = png::Encoder::new(
        std::fs::File::create(&path).unwrap(),
        info.width,
        rows as u32,
    );
    encoder.set_color(info.color_type);
    encoder.set_depth(info.bit_depth);
    encoder.set_compression(png::Compression::Best);
    let mut writer = encoder.write_header().unwrap();
    writer.write_image_data(&pixels[..rows * row]).unwrap();
}

/// Writes `doc` to the scratch directory, renders it with `wirebench report`, opens it.
fn render_and_open(kind: &str, doc: &Value, scratch: &Path) -> Opened {
    let json = scratch.join(format!("{kind}.json"));
    std::fs::write(&json, serde_json::to_vec_pretty(doc).unwrap()).unwrap();
    let (out, _) = run_bounded(&["report", json.to_str().unwrap()], LIMIT);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read(json.with_extension("html")).expect("report wrote FILE.html");
    // The one allowed link: the empty inline icon that keeps the browser from asking for
    // /favicon.ico.
    let text = String::from_utf8_lossy(&html).replace(r#"<link rel="icon" href="data:,">"#, "");
    for fetch in [
        "src=", "href=", "url(", "@import", "<link", "<script", "<img",
    ] {
        assert!(!text.contains(fetch), "the page holds {fetch}");
    }
    let opened = open_in_browser(&html, scratch);
    let (info, pixels) = check_not_blank(&opened.png);
    keep_for_docs(kind, &info, &pixels);
    check_layout(&opened);
    let (charts, labels) = check_pixels(&opened, &info, &pixels);
    let all = boxes(&opened, "chart").len();
    eprintln!(
        "{kind}: {charts} of {all} charts and {labels} labels looked at in the {} px screenshot",
        info.height
    );
    // Every chart of a page no taller than the screenshot's limit is looked at.
    if info.height < MAX_SHOT_HEIGHT {
        assert_eq!(charts, all, "{kind}: charts below the screenshot");
    }
    check_print(&opened);
    opened
}

/// `wirebench ARGS --json -q`, parsed. Its output goes to a file: a peak search's document
/// outgrows a pipe's buffer, and nothing reads the pipe while the run goes on.
fn json_of(args: &[&str], scratch: &Path) -> Value {
    let path = scratch.join("out.json");
    let mut child = common::bin()
        .args(args)
        .args(["--json", "-q"])
        .stdout(std::fs::File::create(&path).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("wirebench {args:?} ran longer than {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?}: {e}: {text}"))
}

#[test]
fn a_run_shows_its_tables_spectrum_and_seconds() {
    let _serial = one_at_a_time();
    let scratch = Scratch::new("result");
    let srv = ServerProcess::start(&[]);
    let doc = json_of(&["run", &srv.url, "-c", "2", "-d", "4s"], &scratch.0);
    let page = render_and_open("result", &doc, &scratch.0);
    assert_eq!(
        table_rows(&page.dom, "distributions"),
        2,
        "latency and connect"
    );
    assert!(table_rows(&page.dom, "per-second") >= 4);
    assert!(page.dom.contains("<table class=\"kv methodology\""));
    expect_charts(&page.dom, "spectrum", 1);
    expect_charts(&page.dom, "ops-per-second", 1);
    expect_charts(&page.dom, "p99-per-second", 1);
}

#[test]
fn a_sweep_over_sizes_draws_throughput_by_size_and_keeps_names_as_text() {
    let _serial = one_at_a_time();
    let scratch = Scratch::new("sweep");
    let srv = ServerProcess::start(&[]);
    let (a, b) = (format!("a<b>={}", srv.url), format!("c&d={}", srv.url));
    let doc = json_of(
        &["run", &a, &b, "--size", "16,64,256,1k,4k", "-d", "400ms"],
        &scratch.0,
    );
    let page = render_and_open("sweep", &doc, &scratch.0);
    for metric in ["ops", "bytes", "p50", "p99", "errors"] {
        assert_eq!(
            table_rows(&page.dom, &format!("sweep {metric}")),
            2,
            "{metric}"
        );
    }
    expect_charts(&page.dom, "ops", 2);
    expect_charts(&page.dom, "bytes", 2);
    assert_eq!(
        expect_charts(&page.dom, "spectrum", 5),
        2,
        "a spectrum per target"
    );
    // Runs of 400 ms are one point each: no chart of seconds, a sentence saying why.
    assert!(charts(&page.dom).iter().all(|c| c.0 != "ops-per-second"));
    assert!(page
        .dom
        .contains("Not drawn: all 10 runs lasted 1 s or less"));
    assert!(
        page.dom.contains("16 B–4 KiB requests (5 sizes)"),
        "the lede says what varies"
    );
    assert!(page.dom.contains("a&lt;b&gt;") && page.dom.contains("c&amp;d"));
    assert!(!page.dom.contains("<b>"), "a target's name became markup");
}

#[test]
fn a_comparison_draws_differences_and_means_with_error_bars() {
    let _serial = one_at_a_time();
    let scratch = Scratch::new("compare");
    let (fast, slow) = (
        ServerProcess::start(&[]),
        ServerProcess::start(&["--delay", "1ms"]),
    );
    let (a, b) = (format!("fast={}", fast.url), format!("slow={}", slow.url));
    let doc = json_of(
        &["compare", &a, &b, "-d", "300ms", "--runs", "3"],
        &scratch.0,
    );
    let page = render_and_open("compare", &doc, &scratch.0);
    assert_eq!(table_rows(&page.dom, "verdicts"), 5, "a verdict per metric");
    assert!(
        page.dom.contains("% to +") || page.dom.contains("% to -"),
        "each difference with its interval's bounds"
    );
    assert_eq!(table_rows(&page.dom, "shapes"), 2);
    assert_eq!(table_rows(&page.dom, "repeat ops"), 2);
    expect_charts(&page.dom, "difference", 1);
    let at = |s: &str| page.dom.find(s).unwrap();
    assert!(
        at("data-chart=\"difference\"") < at("<table"),
        "the answer first"
    );
    assert_eq!(expect_charts(&page.dom, "means", 2), 3, "ops/s, p50, p99");
    assert!(
        page.dom.matches("<path class=\"err\"").count() >= 4,
        "error bars"
    );
    // The slower target has fewer ops/s and more latency than the baseline: bars below and
    // above 0, each with its value written, signed, on the screen and on paper.
    let diff = page.dom.split("data-chart=\"difference\"").nth(1).unwrap();
    let values: Vec<&str> = (diff.split("</svg>").next().unwrap())
        .split("<text class=\"value\"")
        .skip(1)
        .filter_map(|t| t.split_once('>')?.1.split('<').next())
        .collect();
    assert!(
        values.iter().any(|v| v.starts_with('-')) && values.iter().any(|v| v.starts_with('+')),
        "both signs labelled: {values:?}"
    );
    for v in &values {
        assert!(page.pdf.contains(v), "{v} not in the printed PDF");
    }
}

#[test]
fn a_peak_search_draws_its_curves_and_objective() {
    let _serial = one_at_a_time();
    let scratch = Scratch::new("peak");
    let srv = ServerProcess::start(&["--max-rate", "4000", "-t", "1"]);
    let args = [
        "peak",
        &srv.url,
        "--slo",
        "p99<=50ms",
        "--step",
        "500ms",
        "--rest",
        "200ms",
    ];
    let doc = json_of(
        &[&args[..], &["--start-rate", "1000", "-c", "32", "-t", "1"]].concat(),
        &scratch.0,
    );
    let steps = doc["steps"].as_array().unwrap().len();
    let page = render_and_open("peak", &doc, &scratch.0);
    assert_eq!(table_rows(&page.dom, "steps"), steps);
    expect_charts(&page.dom, "achieved", 1);
    let at = |s: &str| page.dom.find(s).unwrap();
    assert!(
        at("data-chart=\"latency-by-rate\"") < at("class=\"steps\""),
        "curves first"
    );
    expect_charts(&page.dom, "latency-by-rate", 2);
    expect_panels(&page.dom, "spectrum", steps);
    let lat = page
        .dom
        .split("data-chart=\"latency-by-rate\"")
        .nth(1)
        .unwrap();
    assert!(
        lat.split("</svg>")
            .next()
            .unwrap()
            .contains("class=\"ref\""),
        "the objective's line"
    );
    // The page is a peak search's, not its steps' runs'.
    assert!(page.dom.contains("wirebench.peak/1") && !page.dom.contains("wirebench.result/1"));
    assert!(
        page.dom.contains("open-loop steps"),
        "the lede names the rates searched"
    );
}

/// `wirebench serve http` as a child process, stopped (by its PID) when dropped.
struct ServeHttp {
    child: std::process::Child,
    url: String,
}

impl ServeHttp {
    fn start() -> ServeHttp {
        let mut child = common::serve_process("http", &["-t", "1"]);
        let lines = common::stdout_lines(&mut child);
        let addr = common::first_line_addr(&mut child, &lines, "http", LIMIT);
        ServeHttp {
            child,
            url: format!("http://{addr}"),
        }
    }
}

impl Drop for ServeHttp {
    fn drop(&mut self) {
        common::sigterm(&self.child);
        let _ = common::wait_exit(&mut self.child, Duration::from_secs(5));
    }
}

/// A long line of a plan, words with spaces: on paper it wraps, every word printed.
const LONG_PLAN_LINE: &str = "# the plan's comment runs on well past the printed page's right-hand edge so that a browser which scrolls rather than wraps preformatted text would cut off its closing words: wrapped-at-spaces endmost";

#[test]
fn a_study_wraps_its_document_with_title_and_methodology() {
    let _serial = one_at_a_time();
    let scratch = Scratch::new("study");
    // An HTTP server: the subtitle says what was sent (GET /), not a TCP request's size.
    let srv = ServeHttp::start();
    let sweep = json_of(&["run", &srv.url, "-c", "1,4", "-d", "300ms"], &scratch.0);
    let plan = format!("title = \"c\"\n{LONG_PLAN_LINE}\n[run]\nconnections = \"1,4\"\n");
    // The shape of the plan-file helper's schema/study.v1.json: the command's document under
    // "document", beside the title, the methodology and the targets.
    let doc = serde_json::json!({
        "schema": "wirebench.study/1",
        "title": "Connections <1 & 4>",
        "command": "run",
        "methodology": {
            "date": "2026-11-23 20:00:00 UTC", "command": "wirebench study c.toml --out r",
            "file": "c.toml", "plan": plan,
            "version": "0.1.0", "kernel": "Linux 6.1", "cpu": "a CPU", "cpus": 2,
            "pinning": "not pinned", "link": "none",
        },
        "targets": [{"name": "local", "url": srv.url, "server": "wirebench serve http", "version": null}],
        "document": sweep,
    });
    let page = render_and_open("study", &doc, &scratch.0);
    assert!(
        page.dom.contains("<h1>Connections &lt;1 &amp; 4&gt;</h1>"),
        "the title, as text"
    );
    assert_eq!(table_rows(&page.dom, "sweep ops"), 1);
    expect_charts(&page.dom, "ops", 1);
    assert!(page.dom.contains("Linux 6.1") && page.dom.contains("<pre>title = "));
    assert_eq!(table_rows(&page.dom, "study-list"), 1, "the targets");
    // One section in words, not a dump of keys under "Study methodology" / "methodology".
    assert!(page.dom.contains("<h2>How the study was made</h2>"));
    assert!(
        page.dom.contains("<th>Command line</th>") && page.dom.contains("<th>CPU pinning</th>")
    );
    assert!(!page.dom.contains(">methodology<") && !page.dom.contains("Study methodology"));
    // The subtitle is true to the protocol, on screen and on paper.
    let lede = (page.dom.split("<p class=\"lede\">").nth(1))
        .and_then(|s| s.split("</p>").next())
        .unwrap();
    assert!(lede.contains("http") && lede.contains("GET /"), "{lede}");
    assert!(!lede.contains(" B requests"), "{lede}");
    let printed: Vec<&str> = page.pdf.split_whitespace().collect();
    assert!(
        printed.windows(2).any(|w| w == ["GET", "/,"]),
        "the lede on paper"
    );
    // The plan wraps on paper (the probe finds it not clipped on screen): every word of its
    // long line printed, the last one too.
    for word in LONG_PLAN_LINE.split_whitespace() {
        assert!(printed.contains(&word), "{word:?} of the plan not on paper");
    }
}

/// A size sweep as the issue found it: 15 sizes, two targets whose URLs differ only at the
/// end, two runs each. Every label and legend readable (checked from the DOM's boxes), no
/// y axis below 0, every table's figure in the printed PDF, a colour per series.
#[test]
fn a_sweep_over_15_sizes_reads_on_screen_and_on_paper() {
    let _serial = one_at_a_time();
    let scratch = Scratch::new("sweep15");
    let (a, b) = (ServerProcess::start(&[]), ServerProcess::start(&[]));
    let sizes = "16,32,64,128,256,512,1k,2k,4k,8k,16k,32k,64k,128k,256k";
    let doc = json_of(
        &[
            "run", &a.url, &b.url, "--size", sizes, "--runs", "2", "-d", "50ms",
        ],
        &scratch.0,
    );
    let page = render_and_open("sweep15", &doc, &scratch.0);
    // 15 sizes do not fit across a page: each table has a row per size instead.
    assert_eq!(table_rows(&page.dom, "sweep ops"), 15);
    assert_eq!(
        expect_charts(&page.dom, "means", 2),
        3,
        "bars over 15 sizes"
    );
    // 15 sizes × 2 runs each, for each of the 2 targets: 30 lines a target, drawn as small
    // multiples of at most 8 (8, 8, 7, 7), each on the same axes with a legend of its own.
    assert_eq!(
        expect_panels(&page.dom, "spectrum", 60),
        8,
        "4 panels a target"
    );
    assert!(page.dom.contains("Latency by percentile: ") && page.dom.contains(" (4 of 4)"));
    assert_eq!(page.dom.matches("data-panel=\"1/4\"").count(), 2);
    // Both URLs whole in the legends: they differ only in the port, at the end.
    let (pa, pb) = (
        a.url.rsplit(':').next().unwrap(),
        b.url.rsplit(':').next().unwrap(),
    );
    assert!(page.layout.iter().any(|l| l.starts_with("ytick")));
    let legend = page
        .dom
        .split("class=\"legend\"")
        .skip(1)
        .collect::<String>();
    assert!(
        legend.contains(pa) && legend.contains(pb),
        "the ports in the legend"
    );
    assert!(
        page.dom.contains("16 B–256 KiB requests (15 sizes)"),
        "the lede says what varies"
    );
    assert!(!page.dom.contains("data-chart=\"ops-per-second\""));
    assert!(page
        .dom
        .contains("Not drawn: all 60 runs lasted 1 s or less"));
    // With runs, each line by size carries its mean's 95% CI as a band (issue 17, item 6):
    // ops, bytes and p99, a band per target.
    assert_eq!(
        page.dom.matches("class=\"band\"").count(),
        6,
        "the CI bands"
    );
    // Each band light, between dotted edges, under the lines (the probe checks the order and
    // the fill's opacity).
    assert_eq!(page.dom.matches("class=\"band-edge\"").count(), 12);
    assert!(page.dom.contains("(mean of the runs, 95% CI shaded)"));
}

/// The DCMTK study's question is how far apart its configurations are (22 against 2,191
/// images/s): its page leads with that, as bars on a log scale, before any table.
#[test]
fn a_study_of_targets_decades_apart_leads_with_a_log_chart() {
    let _serial = one_at_a_time();
    let scratch = Scratch::new("decades");
    let (slow, fast) = (
        ServerProcess::start(&["--delay", "20ms"]),
        ServerProcess::start(&[]),
    );
    let targets = [
        format!("shipped={}", slow.url),
        format!("nodelay={}", fast.url),
        format!("buffer={}", fast.url),
    ];
    let sweep = json_of(
        &["run", &targets[0], &targets[1], &targets[2], "-n", "40"],
        &scratch.0,
    );
    let doc = serde_json::json!({
        "schema": "wirebench.study/1",
        "title": "DCMTK-like: one slow configuration, two fast",
        "command": "run",
        "methodology": {"date": "2026-11-24 06:00:00 UTC", "command": "wirebench study d.toml",
            "file": "d.toml", "plan": "[run]\nrequests = 40\n", "version": "0.1.0",
            "kernel": "Linux", "cpu": "a CPU", "cpus": 2, "pinning": "not pinned", "link": "none"},
        "targets": targets.iter().map(|t| {
            let (name, url) = t.split_once('=').unwrap();
            serde_json::json!({"name": name, "url": url, "server": null, "version": null})
        }).collect::<Vec<_>>(),
        "document": sweep,
    });
    let page = render_and_open("decades", &doc, &scratch.0);
    let first = charts(&page.dom).into_iter().next().expect("a chart");
    assert_eq!(
        (first.0.as_str(), first.3),
        ("by-target", 3),
        "leads with a bar per target"
    );
    let lead = page.dom.split("data-chart=\"by-target\"").nth(1).unwrap();
    assert!(
        lead.contains("data-y=\"log\""),
        "a log scale: the values span decades"
    );
    let (at_chart, at_table) = (
        page.dom.find("by-target").unwrap(),
        page.dom.find("<table").unwrap(),
    );
    assert!(at_chart < at_table, "the chart comes before the tables");
}

#[test]
fn the_trap_catches_a_page_that_fetches() {
    let _serial = one_at_a_time();
    let scratch = Scratch::new("trap");
    // An image from another host: only the trap (the proxy) can see this one.
    let html = b"<!DOCTYPE html><html><head><link rel=\"icon\" href=\"data:,\"></head>\
                 <body><img src=\"https://cdn.example.com/logo.png\"></body></html>";
    let result = std::panic::catch_unwind(|| open_in_browser(html, &scratch.0));
    let message = result
        .err()
        .and_then(|e| e.downcast::<String>().ok())
        .expect("the fetches were caught");
    assert!(
        message.contains("fetched from elsewhere") && message.contains("cdn.example.com"),
        "{message}"
    );
}

#[test]
fn bad_input_is_one_line_exit_2_and_writes_nothing() {
    let scratch = Scratch::new("bad");
    let dir = &scratch.0;
    std::fs::write(dir.join("not.json"), "ops/s 5000\n").unwrap();
    std::fs::write(
        dir.join("other.json"),
        r#"{"schema": "wirebench.result/9"}"#,
    )
    .unwrap();
    std::fs::write(dir.join("none.json"), r#"{"ok": 1}"#).unwrap();
    for (file, says) in [
        ("missing.json", "cannot read"),
        ("not.json", "is not JSON"),
        ("other.json", "wirebench.result/9"),
        ("none.json", "no \"schema\""),
    ] {
        let path = dir.join(file);
        let out = common::usage_error(&["report", path.to_str().unwrap()], LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{file}: {err}");
        assert!(
            !path.with_extension("html").exists(),
            "{file}: a page was written"
        );
    }
    // A good document (a real run's: documents are checked on read) to a place that cannot
    // be written: one line, exit 2, nothing left.
    let server = ServerProcess::start(&[]);
    let good = dir.join("good.json");
    let doc = json_of(&["run", &server.url, "-n", "5", "--no-save"], dir);
    std::fs::write(&good, doc.to_string()).unwrap();
    std::fs::remove_file(dir.join("out.json")).unwrap(); // json_of's, not the test's
    let to = dir.join("no-such-dir/page.html");
    let out = common::usage_error(
        &["report", good.to_str().unwrap(), "-o", to.to_str().unwrap()],
        LIMIT,
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write"));
    std::fs::remove_file(&good).unwrap();
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 3, "no temporary file left: {left:?}");
}

/// A result merged from shards (issue 19) shows its per-rank table: one row per rank, with
/// its host, and the caption of how far apart the shards began.
#[test]
fn a_merged_result_shows_a_row_per_shard() {
    let _serial = one_at_a_time();
    let scratch = Scratch::new("shards");
    let srv = ServerProcess::start(&[]);
    let out = scratch.0.join("shard-%r.json").display().to_string();
    let shards: Vec<_> = (0..2)
        .map(|r| {
            let shard = format!("{r}/2");
            common::bin()
                .args(["run", &srv.url, "-c", "4", "-d", "1s", "-q", "--no-save"])
                .args(["--shard", &shard, "--start-at", "+1s", "--out", &out])
                .env("WIREBENCH_T0", wirebench::store::now_ms().to_string())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in shards {
        assert!(common::wait_exit(&mut c, LIMIT).success());
    }
    let files: Vec<String> = (0..2)
        .map(|r| {
            scratch
                .0
                .join(format!("shard-{r}.json"))
                .display()
                .to_string()
        })
        .collect();
    let (merged, _) = run_bounded(&["merge", &files[0], &files[1]], LIMIT);
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    let doc: Value = serde_json::from_slice(&merged.stdout).unwrap();
    let page = render_and_open("shards", &doc, &scratch.0);
    assert_eq!(table_rows(&page.dom, "shards"), 2);
    let host = doc["shards"]["ranks"][0]["host"].as_str().unwrap();
    let table = page.dom.split("<table class=\"shards\"").nth(1).unwrap();
    assert!(table.contains(host), "{table}");
    assert!(page.dom.contains("merged from 2 shards"), "the caption");
}
