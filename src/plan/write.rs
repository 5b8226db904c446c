//! A study written down as a plan file (`wirebench study FILE.toml`): the targets, the command
//! and its flags, serialized with serde, so a plan can be saved, sent to another machine and
//! read back by the one path that reads plan files ([`super::file`], then clap and the plan's
//! validation).

use serde::Serialize;
use serde_json::Value;

/// The field that is not a `[run]` key: the targets have their own table.
const URLS: &str = "urls";

/// The field of `--mix`: several kinds are written as `[mix.NAME]` tables, not under `[run]`
/// (where a list is one value joined with commas).
const MIX: &str = "mix";

/// Why arguments cannot be written as a plan file.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// A flag given several times that a plan file's `[run]` gives once (a list there is one
    /// value joined with commas).
    #[error("{0} is given {1} times; a plan file gives it once: give one value")]
    Repeated(String, usize),
    /// A `--mix` value that is no kind, so no `[mix.NAME]` table can say it.
    #[error("--mix '{0}' is not NAME=WEIGHT [METHOD] PATH, so no [mix.NAME] table can say it: write e.g. --mix 'read=80 GET /item/{{zipf:1000:1}}'")]
    Mix(String),
}

/// The plan file of `command` (`run`, `compare` or `peak`) with `args`, the command's parsed
/// arguments: `[targets]` from their URLs (`NAME=URL`, or a bare URL named by its place),
/// `[run]` from every flag that differs from nothing (a switch that is off and an empty list
/// are left out, as a plan file leaves them out).
pub fn plan_file<A: Serialize>(
    title: Option<&str>,
    command: &str,
    args: &A,
) -> Result<String, WriteError> {
    let fields = match serde_json::to_value(args) {
        Ok(Value::Object(map)) => map,
        _ => unreachable!("a command's arguments serialize to a map"),
    };
    let mut out = String::new();
    if let Some(t) = title {
        out += &format!("title = {}\n", Value::from(t));
    }
    out += &format!("command = {}\n\n[targets]\n", Value::from(command));
    let urls = fields
        .get(URLS)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, url) in urls.iter().filter_map(Value::as_str).enumerate() {
        let (name, url) = split_name(url).unwrap_or((format!("target{}", i + 1), url.to_string()));
        out += &format!("{} = {}\n", key(&name), Value::from(url));
    }
    out += "\n[run]\n";
    let kinds = fields
        .get(MIX)
        .and_then(Value::as_array)
        .filter(|kinds| kinds.len() > 1);
    for (k, v) in &fields {
        let off = matches!(v, Value::Null | Value::Bool(false))
            || v.as_array().is_some_and(|a| a.is_empty());
        if k != URLS && !off && !(k == MIX && kinds.is_some()) {
            out += &format!("{k} = {}\n", value(k, v)?);
        }
    }
    for kind in kinds.into_iter().flatten() {
        out += &mix_table(kind.as_str().unwrap_or_default())?;
    }
    Ok(out)
}

/// One `--mix` kind as its `[mix.NAME]` table, which the plan file's reader turns back into
/// the same kind (as JSON: `--mix NAME={...}`).
fn mix_table(text: &str) -> Result<String, WriteError> {
    let (name, keys) =
        crate::driver::http::mix::table(text).ok_or_else(|| WriteError::Mix(text.into()))?;
    let mut out = format!("\n[mix.{name}]\n");
    for (k, v) in keys {
        // JSON writes a number, a string and a list of strings as TOML does.
        out += &format!("{k} = {v}\n");
    }
    Ok(out)
}

/// A `[run]` value as TOML: a string, `true`, or a list of strings for a flag the file repeats.
/// Numbers are written as strings (the file hands them to clap as text; a seed may be past
/// TOML's integers), and JSON writes strings, booleans and lists as TOML does (a basic
/// string's escapes are JSON's).
fn value(key: &str, v: &Value) -> Result<Value, WriteError> {
    let text = |v: &Value| match v {
        Value::Number(n) => Value::from(n.to_string()),
        other => other.clone(),
    };
    let repeated = super::file::REPEATED.contains(&format!("--{}", key.replace('_', "-")).as_str());
    Ok(match v {
        Value::Array(list) if repeated => Value::Array(list.iter().map(text).collect()),
        Value::Array(list) if list.len() == 1 => text(&list[0]),
        Value::Array(list) => return Err(WriteError::Repeated(key.into(), list.len())),
        other => text(other),
    })
}

/// `NAME=URL` split, when the part before `=` is a name, not part of the URL.
fn split_name(text: &str) -> Option<(String, String)> {
    let (name, url) = text.split_once('=')?;
    (!name.is_empty() && !name.contains("://")).then(|| (name.to_string(), url.to_string()))
}

/// A TOML key: bare when it can be, else quoted.
fn key(name: &str) -> String {
    let bare = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match bare && !name.is_empty() {
        true => name.to_string(),
        false => Value::from(name).to_string(),
    }
}
