//! The words of a clap error, from its kind and context: what clap's rich formatter writes
//! (clap_builder's `error/format.rs`), without its layout, so `app` folds them into one line.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::Error;

/// The problem's sentence and what it lists (the missing arguments, the conflicting ones, the
/// possible values), each item as it would stand on a line of its own.
pub fn problem(e: &Error) -> (String, Vec<String>) {
    let listed = match e.kind() {
        ErrorKind::ArgumentConflict => Some(conflict(e)),
        ErrorKind::InvalidValue => invalid_value(e),
        ErrorKind::MissingRequiredArgument => missing_arguments(e),
        ErrorKind::MissingSubcommand => missing_subcommand(e),
        _ => None,
    };
    if let Some(found) = listed {
        return found;
    }
    let head = sentence(e);
    // A source's message may span lines: each is an item, as clap's lines were.
    let mut lines = head.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("bad arguments").to_string();
    (first, lines.map(String::from).collect())
}

/// A text the error holds for `k`.
fn text(e: &Error, k: ContextKind) -> Option<String> {
    match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    }
}

/// A number the error holds for `k`.
fn number(e: &Error, k: ContextKind) -> Option<isize> {
    match e.get(k) {
        Some(ContextValue::Number(n)) => Some(*n),
        _ => None,
    }
}

/// A value that is no value of its flag, and the values it takes.
fn invalid_value(e: &Error) -> Option<(String, Vec<String>)> {
    let a = text(e, ContextKind::InvalidArg)?;
    let v = text(e, ContextKind::InvalidValue)?;
    let head = match v.is_empty() {
        true => format!("a value is required for '{a}' but none was supplied"),
        false => format!("invalid value '{v}' for '{a}'"),
    };
    Some((
        head,
        list("possible values", e.get(ContextKind::ValidValue)),
    ))
}

/// The required arguments not given, each an item.
fn missing_arguments(e: &Error) -> Option<(String, Vec<String>)> {
    match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::Strings(args)) => {
            let head = "the following required arguments were not provided:".to_string();
            Some((head, args.clone()))
        }
        _ => None,
    }
}

/// A command given without the subcommand it needs, and its subcommands.
fn missing_subcommand(e: &Error) -> Option<(String, Vec<String>)> {
    let sub = text(e, ContextKind::InvalidSubcommand)?;
    let head = format!("'{sub}' requires a subcommand but one was not provided");
    Some((
        head,
        list("subcommands", e.get(ContextKind::ValidSubcommand)),
    ))
}

/// The sentence of the kinds whose problem is one sentence (which may span lines).
fn sentence(e: &Error) -> String {
    let (arg, value) = (
        text(e, ContextKind::InvalidArg),
        text(e, ContextKind::InvalidValue),
    );
    match (e.kind(), arg, value) {
        (ErrorKind::NoEquals, Some(a), _) => {
            format!("equal sign is needed when assigning values to '{a}'")
        }
        (ErrorKind::InvalidSubcommand, _, _) => match text(e, ContextKind::InvalidSubcommand) {
            Some(sub) => format!("unrecognized subcommand '{sub}'"),
            None => fallback(e),
        },
        (ErrorKind::TooManyValues, Some(a), Some(v)) => {
            format!("unexpected value '{v}' for '{a}' found; no more were expected")
        }
        (ErrorKind::TooFewValues, Some(a), _) => {
            let min = number(e, ContextKind::MinValues);
            match (number(e, ContextKind::ActualNumValues), min) {
                (Some(n), Some(min)) => {
                    format!("{min} values required by '{a}'; only {n} {}", provided(n))
                }
                _ => fallback(e),
            }
        }
        (ErrorKind::ValueValidation, Some(a), Some(v)) => {
            let mut head = format!("invalid value '{v}' for '{a}'");
            if let Some(source) = std::error::Error::source(e) {
                head += &format!(": {source}");
            }
            head
        }
        (ErrorKind::WrongNumberOfValues, Some(a), _) => {
            let expected = number(e, ContextKind::ExpectedNumValues);
            match (number(e, ContextKind::ActualNumValues), expected) {
                (Some(n), Some(want)) => {
                    format!("{want} values required for '{a}' but {n} {}", provided(n))
                }
                _ => fallback(e),
            }
        }
        (ErrorKind::UnknownArgument, Some(a), _) => format!("unexpected argument '{a}' found"),
        _ => fallback(e),
    }
}

/// Clap's verb for `n` values given.
fn provided(n: isize) -> &'static str {
    match n > 1 {
        true => "were provided",
        false => "was provided",
    }
}

/// "the argument '--a' cannot be used with '--b'" (or with several, listed).
fn conflict(e: &Error) -> (String, Vec<String>) {
    let mut prior = e.get(ContextKind::PriorArg);
    let head = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(a)) if prior == Some(&ContextValue::String(a.clone())) => {
            prior = None;
            format!("the argument '{a}' cannot be used multiple times")
        }
        Some(ContextValue::String(a)) => format!("the argument '{a}' cannot be used with"),
        _ => match e.get(ContextKind::InvalidSubcommand) {
            Some(ContextValue::String(s)) => format!("the subcommand '{s}' cannot be used with"),
            _ => fallback(e),
        },
    };
    match prior {
        Some(ContextValue::Strings(all)) => (format!("{head}:"), all.clone()),
        Some(ContextValue::String(one)) => (format!("{head} '{one}'"), Vec::new()),
        Some(_) => (
            format!("{head} one or more of the other specified arguments"),
            Vec::new(),
        ),
        None => (head, Vec::new()),
    }
}

/// The kind's own words, else the cause's.
fn fallback(e: &Error) -> String {
    match (e.kind().as_str(), std::error::Error::source(e)) {
        (Some(words), _) => words.to_string(),
        (None, Some(source)) => source.to_string(),
        (None, None) => "unknown cause".to_string(),
    }
}

/// `[NAME: a, b]`, clap's list of what is valid; none when there is nothing to list.
fn list(name: &str, values: Option<&ContextValue>) -> Vec<String> {
    match values {
        Some(ContextValue::Strings(v)) if !v.is_empty() => {
            let shown: Vec<String> = v.iter().map(|s| escape(s)).collect();
            vec![format!("[{name}: {}]", shown.join(", "))]
        }
        _ => Vec::new(),
    }
}

/// A value with blanks (or none at all) quoted, as clap lists it.
fn escape(s: &str) -> String {
    match s.is_empty() || s.contains(char::is_whitespace) {
        true => format!("{s:?}"),
        false => s.to_string(),
    }
}

/// The last tip clap gives: a similar subcommand, argument or value, or a suggestion.
pub fn tip(e: &Error) -> Option<String> {
    let similar = |context: &str, v: &ContextValue| match v {
        ContextValue::String(s) => Some(format!("a similar {context} exists: '{s}'")),
        ContextValue::Strings(all) if !all.is_empty() => {
            let quoted: Vec<String> = all.iter().map(|s| format!("'{s}'")).collect();
            let lead = match all.len() {
                1 => format!("a similar {context} exists:"),
                _ => format!("some similar {context}s exist:"),
            };
            Some(format!("{lead} {}", quoted.join(", ")))
        }
        _ => None,
    };
    // A suggested flag only if it is spelled close to the one typed: clap's likeness also
    // offers flags of another meaning (`--latency`: "--rate").
    let typed = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let likely = |kind: ContextKind, v: &ContextValue| -> Option<ContextValue> {
        let (ContextKind::SuggestedArg, Some(typed)) = (kind, typed.as_deref()) else {
            return Some(v.clone());
        };
        let keep =
            |s: &String| super::clash::close(typed, s.split_whitespace().next().unwrap_or(s));
        match v {
            ContextValue::String(s) if keep(s) => Some(v.clone()),
            ContextValue::Strings(all) => {
                let kept: Vec<String> = all.iter().filter(|s| keep(s)).cloned().collect();
                (!kept.is_empty()).then_some(ContextValue::Strings(kept))
            }
            ContextValue::String(_) => None,
            _ => Some(v.clone()),
        }
    };
    let mut last = None;
    for (kind, context) in [
        (ContextKind::SuggestedSubcommand, "subcommand"),
        (ContextKind::SuggestedArg, "argument"),
        (ContextKind::SuggestedValue, "value"),
    ] {
        if let Some(t) = e
            .get(kind)
            .and_then(|v| likely(kind, v))
            .and_then(|v| similar(context, &v))
        {
            last = Some(t);
        }
    }
    if let Some(ContextValue::StyledStrs(all)) = e.get(ContextKind::Suggested) {
        if let Some(t) = all.last() {
            last = Some(t.to_string().trim().to_string());
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use crate::cli::Cli;
    use clap::Parser;

    /// Clap's rendered error folded into one line, as wirebench did before it read the kind
    /// and context: the reference the line built from them must equal.
    fn folded_render(text: &str) -> String {
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let first = lines
            .next()
            .unwrap_or("bad arguments")
            .trim_start_matches("error: ");
        let (mut subjects, mut tip, mut usage) = (Vec::new(), None, None);
        for line in lines {
            if let Some(t) = line.strip_prefix("tip: ") {
                tip = Some(t);
            } else if let Some(u) = line.strip_prefix("Usage: ") {
                usage = Some(u);
            } else if !line.starts_with("For more information") {
                subjects.push(line);
            }
        }
        let mut out = first.to_string();
        if !subjects.is_empty() {
            out = format!("{} {}", out.trim_end(), subjects.join(", "));
        }
        if let Some(t) = tip {
            out += &format!("; {t}");
        }
        let help = match usage {
            Some(u) => {
                out += &format!("; usage: {u}");
                let words: Vec<&str> = u
                    .split_whitespace()
                    .take_while(|w| !w.starts_with(['[', '<', '-']))
                    .collect();
                format!("{} --help", words.join(" "))
            }
            None => "wirebench --help".to_string(),
        };
        format!("{out} (see '{help}')")
    }

    #[test]
    fn the_line_from_kind_and_context_is_the_line_from_clap_s_text() {
        let url = "tcp://127.0.0.1:9";
        let cases: &[&[&str]] = &[
            &["run"],
            &["run", url, "--conections", "4"],
            &["run", url, "--mode", "fast"],
            &["run", url, "--mode"],
            &["run", url, "--size", "8", "--payload", "x"],
            &["run", url, "--runs", "x"],
            &["run", url, "-c", "x"],
            &["run", url, "--units", "TB"],
            &["peak", url],
            &["compare", url, "--runs", "many"],
            &["diagnose", url, "--fail-if", "p99>1ms"],
            &["rn", url],
            &["serve"],
            &["serve", "tcp", "--port"],
            &["history", "--bogus"],
            &["run", url, "--json", "--json"],
        ];
        for args in cases {
            let argv: Vec<&str> = ["wirebench"].iter().chain(args.iter()).copied().collect();
            let Err(e) = Cli::try_parse_from(&argv) else {
                continue;
            };
            if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                continue;
            }
            let want = folded_render(&e.render().to_string());
            assert_eq!(
                super::super::one_line(&e, "wirebench --help"),
                want,
                "{args:?}"
            );
        }
    }
}
