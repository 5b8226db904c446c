//! A plan file (`wirebench study FILE.toml`), parsed: its title, named targets and `run` flags,
//! each with the line and column it came from, so a bad value can be pointed at. Pure: the
//! flags are handed to clap as an argument list by `app::study`, which validates them as it
//! validates a command line (one validation path).

use std::ops::Range;
use toml_edit::{Document, Item, Table, TableLike, Value};

/// A place in the file, both from 1 (as editors and compilers count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub col: usize,
}

/// What is wrong with a plan file, and where.
#[derive(Debug, PartialEq, Eq)]
pub struct FileError {
    /// Where.
    pub at: Pos,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// One named target of `[targets]`.
#[derive(Debug, PartialEq, Eq)]
pub struct Target {
    /// Its name, the row label in the tables.
    pub name: String,
    /// Its URL, as on the command line.
    pub url: String,
    /// What serves it, for the methodology (e.g. "nginx 1.22").
    pub server: Option<String>,
    /// Its version, for the methodology.
    pub version: Option<String>,
    /// Its own flags (`run = { mode = "source" }`), replacing `[run]`'s of the same name for
    /// this target only.
    pub flags: Vec<Flag>,
    /// Where its key is.
    pub at: Pos,
}

/// One `[run]` key: a `wirebench run` flag by its long name.
#[derive(Debug, PartialEq, Eq)]
pub struct Flag {
    /// The long name with `--`, underscores as hyphens (`discard_first` → `--discard-first`).
    pub flag: String,
    /// The command-line values: none for a switch set to true, one per repetition of a
    /// repeatable flag (`header`), else one (a list joined with commas, as a sweep is written).
    pub values: Vec<String>,
    /// Where its key is.
    pub at: Pos,
}

/// A parsed plan file.
#[derive(Debug, PartialEq, Eq)]
pub struct PlanFile {
    /// `title`, if given.
    pub title: Option<String>,
    /// `command` (`run`, `compare` or `peak`; checked by `app::study`) and where it is; `run`
    /// when not given.
    pub command: Option<(String, Pos)>,
    /// `diagnose = true`: after the runs, `wirebench diagnose` on each target, its findings in
    /// the report; and where the key is.
    pub diagnose: Option<(bool, Pos)>,
    /// `[targets]`, in file order.
    pub targets: Vec<Target>,
    /// `[run]`, in file order; switches set to false are left out.
    pub flags: Vec<Flag>,
    /// Where `[run]` starts (for errors that no one key caused).
    pub run_at: Pos,
}

/// Flags given once per value on the command line: a list in the file repeats the flag.
pub const REPEATED: [&str; 2] = ["--header", "--slo"];

/// The line and column of byte offset `at` in `text`.
pub fn pos(text: &str, at: usize) -> Pos {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    Pos {
        line,
        col: before[start..].chars().count() + 1,
    }
}

/// Where each line of a text starts, to turn byte offsets into lines and columns without
/// scanning from the start each time: a plan of 100,000 keys, each placed by [`pos`], took
/// minutes (each look-up read the text up to its key).
struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Lines { text, starts }
    }

    /// [`pos`] of byte offset `at`, in the time of a binary search and its line's length.
    fn pos(&self, at: usize) -> Pos {
        let at = at.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= at);
        let start = self.starts[line - 1];
        let col = self
            .text
            .get(start..at)
            .map_or(at - start, |s| s.chars().count());
        Pos { line, col: col + 1 }
    }
}

/// Parses a plan file's text.
pub fn parse(text: &str) -> Result<PlanFile, FileError> {
    let doc = Document::parse(text).map_err(|e| FileError {
        at: pos(text, e.span().map_or(0, |s| s.start)),
        message: format!(
            "not valid TOML: {}; fix the syntax (e.g. size = \"4,128\", strings in quotes)",
            e.message().trim()
        ),
    })?;
    let lines = Lines::new(text);
    let at = |span: Option<Range<usize>>| lines.pos(span.map_or(0, |s| s.start));
    let root = doc.as_table();
    let mut file = PlanFile {
        title: None,
        command: None,
        diagnose: None,
        targets: Vec::new(),
        flags: Vec::new(),
        run_at: Pos { line: 1, col: 1 },
    };
    let mut mix = None;
    for (key, item) in root.iter() {
        let key_at = at(root.key(key).and_then(|k| k.span()));
        match key {
            "title" => file.title = Some(string(item, key_at, "title")?),
            "command" => file.command = Some((string(item, key_at, "command")?, key_at)),
            "diagnose" => {
                let yes = item.as_bool().ok_or_else(|| FileError {
                    at: key_at,
                    message: "'diagnose' must be true or false, e.g. diagnose = true".into(),
                })?;
                file.diagnose = Some((yes, key_at));
            }
            "targets" => file.targets = targets(table(item, key_at, "targets")?, &at)?,
            "run" => {
                let t = table(item, key_at, "run")?;
                file.run_at = at(t.span()).max_line(key_at);
                file.flags = flags(t, &at)?;
            }
            "mix" => mix = Some(mix_flag(table(item, key_at, "mix")?, key_at, &at)?),
            other => {
                return Err(FileError {
                    at: key_at,
                    message: format!(
                        "unknown key '{other}': {}a plan file has title, command, diagnose, [targets], [run] and [mix.NAME] tables (the command's flags go under [run])",
                        crate::error::did_you_mean(other, &["title", "command", "diagnose", "targets", "run", "mix"])
                    ),
                })
            }
        }
    }
    file.flags.extend(mix);
    if file.targets.is_empty() {
        return Err(FileError {
            at: Pos { line: 1, col: 1 },
            message: "no targets: add a [targets] table, e.g. [targets] then local = \"tcp://127.0.0.1:7000\"".into(),
        });
    }
    Ok(file)
}

impl Pos {
    /// `self`, or `other` when `self` is the file's start (a table without a span of its own).
    fn max_line(self, other: Pos) -> Pos {
        if self.line == 1 && self.col == 1 {
            other
        } else {
            self
        }
    }
}

/// `[mix.NAME]` tables (weight, method, url, headers, body): the `--mix` flag, each kind's
/// table as a JSON object after its name (checked where the command line's is).
fn mix_flag(
    t: &Table,
    key_at: Pos,
    at: &dyn Fn(Option<Range<usize>>) -> Pos,
) -> Result<Flag, FileError> {
    let mut values = Vec::new();
    for (name, item) in t.iter() {
        let name_at = at(t.key(name).and_then(|k| k.span()));
        let kind = item.as_table_like().ok_or_else(|| FileError {
            at: name_at,
            message: format!(
                "mix.{name} must be a table: write [mix.{name}] then weight = 80, url = \"/path\""
            ),
        })?;
        let mut json = serde_json::Map::new();
        for (key, v) in kind.iter() {
            let v_at = at(kind.key(key).and_then(|k| k.span()));
            let bad = || {
                FileError {
                at: v_at,
                message: format!("mix.{name}.{key}: a kind takes weight (a number), method, url and body (strings) and headers (a list of strings)"),
            }
            };
            let value = match (key, v.as_value().ok_or_else(bad)?) {
                ("weight", Value::Integer(n)) => serde_json::Value::from(*n.value()),
                ("method" | "url" | "body", Value::String(t)) => t.value().as_str().into(),
                ("headers", Value::Array(list)) => list
                    .iter()
                    .map(|h| h.as_str().map(serde_json::Value::from).ok_or_else(bad))
                    .collect::<Result<Vec<_>, _>>()?
                    .into(),
                _ => return Err(bad()),
            };
            json.insert(key.to_string(), value);
        }
        values.push(format!("{name}={}", serde_json::Value::Object(json)));
    }
    Ok(Flag {
        flag: "--mix".into(),
        values,
        at: key_at,
    })
}

/// `item` as a table (`[name]` or an inline table).
fn table<'a>(item: &'a Item, at: Pos, name: &str) -> Result<&'a Table, FileError> {
    item.as_table().ok_or_else(|| FileError {
        at,
        message: format!("'{name}' must be a table: write [{name}] on a line of its own, then one key = value per line"),
    })
}

/// A target's `run`: an inline table (`run = { mode = "source" }`) or a `[targets.NAME.run]`
/// table.
fn own_flags<'a>(item: &'a Item, at: Pos, name: &str) -> Result<&'a dyn TableLike, FileError> {
    item.as_table_like().ok_or_else(|| FileError {
        at,
        message: format!(
            "'{name}' must be a table of flags, e.g. {name} = {{ mode = \"source\" }}"
        ),
    })
}

/// `item` as a string.
fn string(item: &Item, at: Pos, name: &str) -> Result<String, FileError> {
    item.as_str().map(str::to_string).ok_or_else(|| FileError {
        at,
        message: format!("'{name}' must be a string in quotes, e.g. {name} = \"...\""),
    })
}

/// `[targets]`: `name = "url"` or `name = { url = "...", server = "...", version = "..." }`.
fn targets(t: &Table, at: &dyn Fn(Option<Range<usize>>) -> Pos) -> Result<Vec<Target>, FileError> {
    let mut out = Vec::new();
    for (name, item) in t.iter() {
        let key_at = at(t.key(name).and_then(|k| k.span()));
        let mut target = Target {
            name: name.to_string(),
            url: String::new(),
            server: None,
            version: None,
            flags: Vec::new(),
            at: key_at,
        };
        if let Some(url) = item.as_str() {
            target.url = url.to_string();
        } else if let Some(inner) = item.as_table_like() {
            for (k, v) in inner.iter() {
                let field = format!("{name}.{k}");
                if k == "run" {
                    target.flags = flags(own_flags(v, key_at, &field)?, at)?;
                    continue;
                }
                let value = string(v, key_at, &field)?;
                match k {
                    "url" => target.url = value,
                    "server" => target.server = Some(value),
                    "version" => target.version = Some(value),
                    _ => {
                        return Err(FileError {
                            at: key_at,
                            message: format!(
                                "unknown key '{field}': {}a target has url, server, version and run (its own flags)",
                                crate::error::did_you_mean(k, &["url", "server", "version", "run"])
                            ),
                        })
                    }
                }
            }
        }
        if target.url.is_empty() {
            return Err(FileError {
                at: key_at,
                message: format!(
                    "target '{name}' has no URL: write {name} = \"tcp://HOST:PORT\" or {name} = {{ url = \"tcp://HOST:PORT\", server = \"...\" }}"
                ),
            });
        }
        out.push(target);
    }
    Ok(out)
}

/// `[run]`: every key a flag; strings, numbers and booleans as on the command line, arrays
/// joined with commas (a sweep's list) or repeated (`header`).
fn flags(
    t: &dyn TableLike,
    at: &dyn Fn(Option<Range<usize>>) -> Pos,
) -> Result<Vec<Flag>, FileError> {
    let mut out = Vec::new();
    for (key, item) in t.iter() {
        let key_at = at(t.key(key).and_then(|k| k.span()));
        let flag = format!("--{}", key.replace('_', "-"));
        let bad = |what: &str| {
            FileError {
            at: key_at,
            message: format!(
                "{key} = {what} is not a flag's value: give a string, a number, true, or a list, e.g. {key} = \"1s\""
            ),
        }
        };
        let Some(value) = item.as_value() else {
            return Err(bad("a table"));
        };
        let values = match value {
            Value::Boolean(b) if *b.value() => Vec::new(),
            Value::Boolean(_) => continue,
            Value::Array(list) => {
                let parts = list
                    .iter()
                    .map(|v| scalar(v).ok_or_else(|| bad("a list of lists or tables")))
                    .collect::<Result<Vec<_>, _>>()?;
                match REPEATED.contains(&flag.as_str()) {
                    true if parts.is_empty() => {
                        return Err(FileError {
                            at: key_at,
                            message: format!("{key} = [] gives no value: list at least one, e.g. {key} = [\"...\"], or leave the key out"),
                        })
                    }
                    true => parts,
                    false => vec![parts.join(",")],
                }
            }
            v => vec![scalar(v).ok_or_else(|| bad("a date or a table"))?],
        };
        out.push(Flag {
            flag,
            values,
            at: key_at,
        });
    }
    Ok(out)
}

/// A string, integer or float as its command-line text.
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.value().clone()),
        Value::Integer(i) => Some(i.value().to_string()),
        Value::Float(f) => Some(f.value().to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(line: usize, col: usize) -> Pos {
        Pos { line, col }
    }

    fn err(text: &str) -> (Pos, String) {
        let e = parse(text).expect_err("a bad plan");
        (e.at, e.message)
    }

    #[test]
    fn the_example_plan_becomes_flags_in_file_order() {
        let text = "title = \"DIM\"\n[targets]\nlocal = \"tcp://127.0.0.1:7000\"\nnginx = { url = \"http://127.0.0.1:8080/\", server = \"nginx 1.22\" }\n[run]\nmode = \"rr\"\nsize = \"4,128,512..64k\"\nruns = 3\ndiscard = 1\nquiet = true\njson = false\nconnections = [1, 4]\nheader = [\"A: 1\", \"B: 2\"]\n";
        let f = parse(text).unwrap();
        assert_eq!(f.title.as_deref(), Some("DIM"));
        assert_eq!(f.targets.len(), 2);
        assert_eq!(f.targets[0].url, "tcp://127.0.0.1:7000");
        assert_eq!(f.targets[0].at, p(3, 1));
        assert_eq!(f.targets[1].server.as_deref(), Some("nginx 1.22"));
        let flags: Vec<(&str, Vec<&str>)> = f
            .flags
            .iter()
            .map(|x| {
                (
                    x.flag.as_str(),
                    x.values.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            flags,
            [
                ("--mode", vec!["rr"]),
                ("--size", vec!["4,128,512..64k"]),
                ("--runs", vec!["3"]),
                ("--discard", vec!["1"]),
                ("--quiet", vec![]),
                ("--connections", vec!["1,4"]),
                ("--header", vec!["A: 1", "B: 2"]),
            ]
        );
        assert_eq!(f.flags[1].at, p(7, 1));
        assert_eq!(f.run_at.line, 5);
    }

    #[test]
    fn command_and_repeated_objectives() {
        let f = parse("command = \"peak\"\n[targets]\na = \"tcp://x:1\"\n[run]\nslo = [\"p99<=5ms\", \"errors<=1%\"]\n").unwrap();
        assert_eq!(f.command, Some(("peak".to_string(), p(1, 1))));
        assert_eq!(f.flags[0].values, ["p99<=5ms", "errors<=1%"]);
        let e = parse("[targets]\na = \"u\"\n[run]\nheader = []\n").unwrap_err();
        assert_eq!(
            (e.at, e.message.contains("header = [] gives no value")),
            (p(4, 1), true)
        );
    }

    #[test]
    fn underscores_are_hyphens() {
        let f = parse("[targets]\na = \"tcp://x:1\"\n[run]\ndiscard_first = true\n").unwrap();
        assert_eq!(f.flags[0].flag, "--discard-first");
    }

    #[test]
    fn bad_plans_say_where_and_what() {
        let table: [(&str, Pos, &str); 8] = [
            (
                "[targets]\na = \"tcp://x:1\"\nsize = 4\n[run\n",
                p(4, 5),
                "not valid TOML",
            ),
            (
                "colour = 1\n[targets]\na = \"u\"\n",
                p(1, 1),
                "unknown key 'colour'",
            ),
            (
                "titel = \"x\"\n[targets]\na = \"u\"\n",
                p(1, 1),
                "unknown key 'titel': did you mean 'title'? a plan file has",
            ),
            ("[run]\nsize = 4\n", p(1, 1), "no targets"),
            ("[targets]\n  a = 3\n", p(2, 3), "target 'a' has no URL"),
            (
                "[targets]\na = { url = \"u\", os = \"x\" }\n",
                p(2, 1),
                "unknown key 'a.os'",
            ),
            (
                "[targets]\na = \"u\"\n[run]\nsize = 1979-05-27\n",
                p(4, 1),
                "size = a date",
            ),
            (
                "title = 3\n[targets]\na = \"u\"\n",
                p(1, 1),
                "'title' must be a string",
            ),
        ];
        for (text, at, says) in table {
            let (got, message) = err(text);
            assert_eq!(got, at, "{text:?}: {message}");
            assert!(message.contains(says), "{text:?}: {message}");
        }
    }

    #[test]
    fn lines_place_offsets_as_pos_does() {
        let text = "a = 1\n\nß = \"é\"\nlast";
        let lines = Lines::new(text);
        for at in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            assert_eq!(lines.pos(at), pos(text, at), "{at}");
        }
    }

    #[test]
    fn columns_count_characters_from_one() {
        assert_eq!(pos("ab\ncdé f", 8), p(2, 5));
        assert_eq!(pos("", 0), p(1, 1));
    }
}
