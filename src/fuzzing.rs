//! Entry points for the fuzz targets in `fuzz/` (cargo fuzz, see bench/fuzz.sh): the parsers
//! of outside input that the public API does not reach on its own. Not part of the API.

pub use crate::driver::h2::fuzz::request as h2_request;
pub use crate::driver::h2::fuzz::responses as h2_responses;
pub use crate::driver::http::fuzz::responses as http_responses;
pub use crate::serve::http::fuzz::request as http_request;

use crate::summary::Summary;
use std::io::sink;

/// A document as `report`, `merge` and `diff` read it: checked against its schema (what fails
/// is refused there, as the commands refuse it), rendered as a page, and read back into a
/// result that is merged with itself and diffed against itself when it is one. Returns whether
/// it was a result; panics if an invariant breaks.
pub fn document(text: &str) -> bool {
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return false;
    };
    if crate::summary::check::document(&doc).is_err() {
        return false;
    }
    if crate::report::html::schema(&doc).is_ok() {
        let _ = crate::report::html::render(&doc, &mut sink());
    }
    let Ok(result) = serde_json::from_str::<Summary>(text) else {
        return false;
    };
    let pair = [result.clone(), result.clone()];
    for sequential in [false, true] {
        let _ = crate::summary::merge::merge(&pair, sequential);
    }
    let _ = crate::summary::diff::changes(&result, &pair[1], 5.0);
    true
}

/// Several documents as `wirebench merge` reads them (each checked as a result, as the command
/// does), merged at the same time and one after another. Returns whether they were results
/// that merged; panics if an invariant breaks.
pub fn merge(texts: &[&str]) -> bool {
    let mut parts = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        match crate::app::merge::result(&format!("doc{i}"), text.to_string()) {
            Ok(p) => parts.push(p),
            Err(_) => return false,
        }
    }
    if parts.is_empty() {
        return false;
    }
    let mut merged = false;
    for sequential in [false, true] {
        if let Ok(m) = crate::summary::merge::merge(&parts, sequential) {
            let ok: u64 = parts.iter().map(|p| p.ok).sum();
            assert_eq!(m.ok, ok, "a merge adds the ok counts");
            merged = true;
        }
    }
    merged
}

/// A plan file read and validated as `wirebench study FILE --dry-run` does. Returns whether it
/// was valid; panics if an invariant breaks (an error always says where and what).
pub fn plan(text: &str) -> bool {
    match crate::app::study::read::read_text(text) {
        Ok(_) => true,
        Err(crate::app::study::read::Located(at, message)) => {
            assert!(at.line >= 1 && at.col >= 1 && !message.is_empty());
            false
        }
    }
}
