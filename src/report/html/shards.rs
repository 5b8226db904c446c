//! The per-rank table of a merged result in the HTML report: the rows of the terminal's
//! ([`crate::report::shards`]), read through the summary's typed `shards` section.

use super::page::{table, Page};
use crate::summary::Summary;

/// Writes the section of a merged result `r`; nothing when it holds no `shards`.
pub fn render(page: &mut Page, r: &Summary) {
    let Some(shards) = &r.shards else {
        return;
    };
    page.heading(2, "Shards");
    page.para(&crate::report::shards::caption(shards));
    let head: Vec<String> = crate::report::shards::HEAD
        .iter()
        .map(|h| h.to_string())
        .collect();
    page.raw(&table(
        "shards",
        &head,
        &crate::report::shards::rows(shards),
    ));
}
