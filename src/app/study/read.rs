//! A plan file read, parsed ([`crate::plan::file`]) and validated as the command line it stands
//! for: `wirebench COMMAND NAME=URL … --flag=value …` parsed by clap, then checked by the
//! command's own validation (`sweep::batch`, `compare::prepare`, `peak::setup`), so a plan file and
//! a command line can never disagree about what is valid.

use super::super::compare::{self, Prepared};
use super::super::peak;
use crate::cli::{Cli, Command, CompareArgs, PeakArgs, RunArgs};
use crate::error::UsageError;
use crate::plan::file::{self, Flag, PlanFile, Pos, Target};
use crate::plan::write::{plan_file, WriteError};
use crate::plan::Plan;
use crate::study::peak::Bounds;
use crate::study::sweep::Points;

/// A bad plan: where, and what is wrong.
pub struct Located(pub Pos, pub String);

/// A plan, validated: the arguments of its command and what they expand to.
pub enum Checked {
    /// `command = "run"`: the runs of a sweep or repeated runs.
    Run(Box<RunArgs>, Box<Points>),
    /// `command = "compare"`.
    Compare(Box<CompareArgs>, Box<Prepared>),
    /// `command = "peak"`.
    Peak(Box<PeakArgs>, Box<Bounds>),
}

impl Checked {
    /// The run flags the command repeats.
    pub fn run_args(&self) -> &RunArgs {
        match self {
            Checked::Run(a, _) => a,
            Checked::Compare(a, _) => &a.run,
            Checked::Peak(a, _) => &a.run,
        }
    }
}

impl Checked {
    /// The plan written down again as a plan file (`title` its title), from the typed
    /// arguments: reading it back gives the same arguments.
    pub fn write(&self, title: Option<&str>) -> Result<String, WriteError> {
        match self {
            Checked::Run(a, _) => plan_file(title, "run", a),
            Checked::Compare(a, _) => plan_file(title, "compare", a),
            Checked::Peak(a, _) => plan_file(title, "peak", a),
        }
    }
}

/// The commands a plan may stand for.
const COMMANDS: [&str; 3] = ["run", "compare", "peak"];

/// Reads, parses and validates the plan file `path`.
pub fn read(path: &str) -> Result<(String, PlanFile, Checked), Located> {
    let start = Pos { line: 1, col: 1 };
    let text = crate::sys::file::read_text(path, crate::sys::file::PLAN_LIMIT).map_err(|e| {
        Located(
            start,
            format!("the plan file: {e}; give the path of a .toml plan, e.g. wirebench study examples/dim.toml"),
        )
    })?;
    let (plan, checked) = read_text(&text)?;
    Ok((text, plan, checked))
}

/// A plan file's text parsed and validated, as [`read`] does with a file's.
pub fn read_text(text: &str) -> Result<(PlanFile, Checked), Located> {
    let plan = file::parse(text).map_err(|e| Located(e.at, e.message))?;
    let command = command(&plan)?;
    if command == "peak" && plan.targets.len() > 1 {
        return Err(Located(
            plan.targets[1].at,
            "a peak plan searches one target: keep one under [targets] (compare targets with command = \"compare\")".into(),
        ));
    }
    let checked = match plan.targets.iter().find(|t| !t.flags.is_empty()) {
        Some(t) if command != "run" => {
            return Err(Located(
                t.at,
                format!("target '{}' has flags of its own: only a run study (command = \"run\") takes them; give {command}'s flags under [run]", t.name),
            ))
        }
        Some(_) => each_target(&plan)?,
        None => check(&plan, parse(&plan, command, &plan.targets, &[])?)?,
    };
    Ok((plan, checked))
}

/// The plan that `text`, a plan file of one run (as [`Plan::plan_file`] writes it), stands
/// for: read and validated by the one path of the command line and of plan files.
pub fn plan_from_text(text: &str) -> Result<Plan, Located> {
    let at = Pos { line: 1, col: 1 };
    let (_, checked) = read_text(text)?;
    let Checked::Run(args, _) = checked else {
        return Err(Located(
            at,
            "the plan file is not one run's: give command = \"run\" and one target".into(),
        ));
    };
    // A plan file names its target (`[targets]`); the plan measures its URL.
    let mut args = *args;
    for url in &mut args.urls {
        *url = crate::load::sweep::named(url).1.to_string();
    }
    Plan::try_from(&args).map_err(|e| Located(at, e.to_string()))
}

/// The command's own validation of its parsed arguments.
fn check(plan: &PlanFile, command: Command) -> Result<Checked, Located> {
    let checked = match command {
        Command::Run(a) => super::super::sweep::batch(&a)
            .and_then(|mut s| {
                s.sharded = super::super::shards::sharded(&a.fleet, &s, None)?;
                Ok(s)
            })
            .map(|s| Checked::Run(Box::new(a), Box::new(s))),
        Command::Compare(a) => {
            compare::prepare(&a).map(|p| Checked::Compare(Box::new(a), Box::new(p)))
        }
        Command::Peak(a) => peak::setup(&a).map(|s| Checked::Peak(Box::new(a), Box::new(s))),
        _ => unreachable!("the argument list names run, compare or peak"),
    };
    checked.map_err(|e| Located(blame(plan, &[], &e), e.0))
}

/// A run study whose targets have flags of their own: each target's command line parsed and
/// expanded alone (its flags replacing `[run]`'s), then the studies merged into one.
fn each_target(plan: &PlanFile) -> Result<Checked, Located> {
    let (mut parts, mut first) = (Vec::new(), None);
    for t in &plan.targets {
        let Command::Run(a) = parse(plan, "run", std::slice::from_ref(t), &t.flags)? else {
            unreachable!("the argument list names run")
        };
        parts.push(
            super::super::sweep::batch(&a).map_err(|e| Located(blame(plan, &t.flags, &e), e.0))?,
        );
        first.get_or_insert(a);
    }
    let batch =
        super::super::sweep::merge(parts).map_err(|e| Located(blame(plan, &[], &e), e.0))?;
    let Some(args) = first else {
        return Err(Located(plan.run_at, "the plan names no target".into()));
    };
    if args.fleet.shards.is_some() {
        return Err(Located(
            plan.run_at,
            "shards = N takes a plan whose targets share [run]'s flags: give the targets' own flags under [run], or run them as separate studies".into(),
        ));
    }
    Ok(Checked::Run(Box::new(args), Box::new(batch)))
}

/// `command`, checked: `run` when not given.
fn command(plan: &PlanFile) -> Result<&'static str, Located> {
    let Some((name, at)) = &plan.command else {
        return Ok("run");
    };
    COMMANDS.into_iter().find(|c| c == name).ok_or_else(|| {
        Located(
            *at,
            format!("command = \"{name}\" is not a study: give \"run\" (sweeps, repeated runs), \"compare\" or \"peak\""),
        )
    })
}

/// The command line a plan stands for: `wirebench COMMAND NAME=URL … --flag=value …` (a peak
/// search takes its one URL without a name).
fn argv(targets: &[Target], command: &str, flags: &[&Flag]) -> Vec<String> {
    let mut argv = vec!["wirebench".to_string(), command.to_string()];
    argv.extend(targets.iter().map(|t| match command {
        "peak" => t.url.clone(),
        _ => format!("{}={}", t.name, t.url),
    }));
    for f in flags {
        match f.values.is_empty() {
            true => argv.push(f.flag.clone()),
            // `--flag=value`, so a value starting with '-' is not taken for a flag.
            false => argv.extend(f.values.iter().map(|v| format!("{}={v}", f.flag))),
        }
    }
    argv
}

/// `words` parsed as `Cli::try_parse_from` does, with one clap command built once per thread
/// and reused: building it (every subcommand's every flag) took 0.5 ms, once per target of a
/// plan whose targets have flags of their own (10,000 targets: 6 CPU-seconds).
fn parse_words(words: Vec<String>) -> Result<Command, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    thread_local! {
        static CLI: std::cell::RefCell<clap::Command> = std::cell::RefCell::new(Cli::command());
    }
    CLI.with_borrow_mut(|cmd| {
        let mut matches = cmd.try_get_matches_from_mut(words)?;
        Cli::from_arg_matches_mut(&mut matches)
            .map(|c| c.command)
            .map_err(|e| e.format(cmd))
    })
}

/// Parses the plan's flags for `targets` with clap, `own` replacing `[run]`'s flags of the same
/// name; an error points at the first key that makes it fail.
fn parse(
    plan: &PlanFile,
    command: &str,
    targets: &[Target],
    own: &[Flag],
) -> Result<Command, Located> {
    let flags: Vec<&Flag> = plan
        .flags
        .iter()
        .filter(|f| own.iter().all(|o| o.flag != f.flag))
        .chain(own)
        .collect();
    let parse = |flags: &[&Flag]| parse_words(argv(targets, command, flags));
    let whole = match parse(&flags) {
        Ok(c) => {
            // The shards of a `shards = N` plan run the flags of this command line.
            super::super::shards::stand_for(argv(targets, command, &flags));
            return Ok(c);
        }
        Err(e) => e,
    };
    let help = format!("(see 'wirebench {command} --help')");
    // The first prefix of the keys that clap refuses ends with the culprit; none when no key
    // at all is refused too (a required flag, such as peak's --slo, is missing).
    let culprit = match parse(&[]) {
        Ok(_) => {
            (1..=flags.len()).find_map(|k| parse(&flags[..k]).err().map(|e| (flags[k - 1], e)))
        }
        Err(_) => None,
    };
    // Where to read more when clap names no usage: this command's help.
    let fallback = format!("wirebench {command} --help");
    let Some((key, refused)) = culprit else {
        let line = super::super::one_line(&whole, &fallback);
        return Err(Located(plan.run_at, line));
    };
    let name = key.flag.trim_start_matches('-');
    let message = match whole.kind() {
        clap::error::ErrorKind::UnknownArgument => format!(
            "unknown key '{name}' in [run]: {}not a `wirebench {command}` flag; use a flag's long name without --, e.g. size = \"64\" {help}",
            suggested(name, &refused)
        ),
        _ => format!("{name}: {}", super::super::one_line(&whole, &fallback)),
    };
    Err(Located(key.at, message))
}

/// `did you mean 'connections'? ` for an unknown key clap finds a flag spelled close to;
/// empty when it finds none (or only flags of another meaning, [`crate::error::close`]).
fn suggested(name: &str, e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    let flags: Vec<String> = match e.get(ContextKind::SuggestedArg) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(all)) => all.clone(),
        _ => Vec::new(),
    };
    let keys: Vec<&str> = (flags.iter())
        .filter_map(|f| f.split_whitespace().next())
        .filter(|f| f.starts_with("--"))
        .map(|f| f.trim_start_matches('-'))
        .collect();
    crate::error::did_you_mean(name, &keys)
}

/// Where a validation error belongs: the key of the first flag it is about that the plan sets
/// (a target's own keys first), else the target it is about, else `[run]`. The error says
/// what it is about as typed values ([`crate::error::About`]); its message is not searched.
fn blame(plan: &PlanFile, own: &[Flag], e: &UsageError) -> Pos {
    let about = &e.1;
    let key = about
        .flags
        .iter()
        .find_map(|name| own.iter().chain(&plan.flags).find(|f| f.flag == *name));
    if let Some(f) = key {
        return f.at;
    }
    // By name first (two targets may share a URL; a peak's one target is named by its URL).
    let named = |t: &&Target| about.name.as_ref().is_some_and(|n| t.name == *n);
    let at_url = |t: &&Target| about.target.as_ref().is_some_and(|u| t.url == *u);
    let target = plan
        .targets
        .iter()
        .find(named)
        .or_else(|| plan.targets.iter().find(at_url));
    target.map_or(plan.run_at, |t| t.at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// Reads `text` as a plan file.
    fn checked_of(text: &str) -> Checked {
        match read_text(text) {
            Ok((_, checked)) => checked,
            Err(Located(at, e)) => panic!("{}:{}: {e}\n{text}", at.line, at.col),
        }
    }

    /// The plan of `wirebench run ARGS`.
    fn plan_of_args(args: &[&str]) -> Plan {
        let argv = ["wirebench", "run"].iter().chain(args).copied();
        let Command::Run(run) = Cli::try_parse_from(argv).unwrap().command else {
            unreachable!("the words name run")
        };
        Plan::try_from(&run).unwrap()
    }

    /// An open-loop HTTP run with random keys, a header and a socket option.
    const RATED_HTTP_RUN: &[&str] = &[
        "http://127.0.0.1:8080/{zipf:100:1.0}",
        "-c",
        "8",
        "--rate",
        "2000",
        "--arrival",
        "poisson",
        "-d",
        "3s",
        "-H",
        "X-Trace: 1",
        "--sndbuf",
        "64k",
    ];

    #[test]
    fn a_plan_written_as_a_plan_file_reads_back_as_the_same_plan() {
        let plan = plan_of_args(RATED_HTTP_RUN);
        let text = plan.plan_file(Some("one run")).unwrap();
        let back = plan_from_text(&text)
            .unwrap_or_else(|Located(at, e)| panic!("{}:{}: {e}\n{text}", at.line, at.col));
        // The same arguments (the drawn seed written in, so the same random draws) validate
        // into the same plan: every validated part compares equal by its Debug form.
        assert_eq!(back.seed, plan.seed);
        assert_eq!(format!("{:?}", back.args), format!("{:?}", plan.args));
        assert_eq!(format!("{back:?}"), format!("{plan:?}"));
        // Its serde form is the typed arguments, the drawn seed written in.
        let json = serde_json::to_value(&plan).unwrap();
        assert_eq!(json["seed"], serde_json::json!(plan.seed));
        assert_eq!(json["urls"][0], "http://127.0.0.1:8080/{zipf:100:1.0}");
        assert_eq!(back.plan_file(Some("one run")).unwrap(), text);
    }

    /// Issue 41, item 2: a plan is a document: its serde form (JSON here) reads back into the
    /// same plan, with no argument list in between, for every kind of run.
    #[test]
    fn a_plan_serialized_deserializes_into_the_same_plan() {
        let runs: [&[&str]; 5] = [
            RATED_HTTP_RUN,
            &[
                "tcp://127.0.0.1:9000",
                "--size",
                "1k",
                "--runs",
                "3",
                "--tag",
                "a=b",
                "--fail-if",
                "p99>20ms",
                "--units",
                "MB",
            ],
            &[
                "udp://127.0.0.1:9000",
                "--mode",
                "stream",
                "-b",
                "8Mbit",
                "-z",
                "2s",
            ],
            &[
                "tcp://127.0.0.1:9000",
                "--shards",
                "2",
                "--launcher",
                "srun -n 2",
                "-n",
                "100",
            ],
            &[
                "http://127.0.0.1:8080/",
                "--mix",
                "a=3 GET /a",
                "--mix",
                "b=1 GET /b",
                "--think",
                "10ms",
            ],
        ];
        for args in runs {
            let plan = plan_of_args(args);
            let json = serde_json::to_string(&plan).unwrap();
            let back: Plan = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
            assert_eq!(format!("{back:?}"), format!("{plan:?}"), "{args:?}");
            assert_eq!(serde_json::to_string(&back).unwrap(), json, "{args:?}");
        }
        // A document that does not validate is refused as the command line would be.
        let bad = serde_json::to_string(&plan_of_args(&["tcp://127.0.0.1:9000"]))
            .unwrap()
            .replace(r#""connections":"1""#, r#""connections":"0""#);
        let e = serde_json::from_str::<Plan>(&bad).expect_err("-c 0 refused");
        assert!(e.to_string().contains("connection"), "{e}");
    }

    #[test]
    fn several_mix_kinds_are_written_as_mix_tables_and_read_back_as_the_same_plan() {
        let write = r#"write={"weight": 20, "method": "PUT", "url": "/item/{seq}", "headers": ["X-A: 1"], "body": "v"}"#;
        let plan = plan_of_args(&[
            "http://127.0.0.1:8080/",
            "--mix",
            "read=80 GET /item/{zipf:100:1.0}",
            "--mix",
            write,
            "-d",
            "1s",
        ]);
        let text = plan.plan_file(Some("mix")).unwrap();
        // Each table's keys in name order (serde_json's map), which the reader takes in any.
        let read = "\n[mix.read]\nmethod = \"GET\"\nurl = \"/item/{zipf:100:1.0}\"\nweight = 80\n";
        assert!(text.contains(read), "{text}");
        let write = "\n[mix.write]\nbody = \"v\"\nheaders = [\"X-A: 1\"]\nmethod = \"PUT\"\nurl = \"/item/{seq}\"\nweight = 20\n";
        assert!(text.contains(write), "{text}");
        let back = plan_from_text(&text)
            .unwrap_or_else(|Located(at, e)| panic!("{}:{}: {e}\n{text}", at.line, at.col));
        // The kinds come back written as JSON (`--mix read={...}`), the same requests: every
        // validated part compares equal, and the plan file it writes is the same file.
        assert_eq!(back.args.protocol.http.mix.len(), 2);
        let same = Plan {
            args: plan.args.clone(),
            ..back.clone()
        };
        assert_eq!(format!("{same:?}"), format!("{plan:?}"));
        assert_eq!(back.plan_file(Some("mix")).unwrap(), text);
    }

    #[test]
    fn a_plan_file_of_several_runs_is_not_one_plan() {
        let text = "command = \"compare\"\n[targets]\na = \"tcp://127.0.0.1:1\"\nb = \"tcp://127.0.0.1:2\"\n[run]\nduration = \"1s\"\n";
        let Err(Located(_, e)) = plan_from_text(text) else {
            panic!("a compare plan read as one run")
        };
        assert!(e.contains("one run"), "{e}");
    }

    /// Plan file → typed arguments → plan file → the same typed arguments.
    fn round_trip(text: &str) -> String {
        let first = checked_of(text);
        let written = first.write(Some("again")).unwrap();
        let second = checked_of(&written);
        assert_eq!(
            format!("{:?}", first.run_args()),
            format!("{:?}", second.run_args()),
            "{written}"
        );
        assert_eq!(second.write(Some("again")).unwrap(), written);
        written
    }

    #[test]
    fn a_run_plan_reads_back_as_the_same_arguments() {
        let written = round_trip(
            r#"
title = "sizes"
[targets]
local = "tcp://127.0.0.1:7000"
remote = "tcp://127.0.0.1:7001"
[run]
size = [16, 128]
connections = "1..4"
duration = "1s"
mode = "rr"
warmup = "auto"
runs = 3
discard_first = true
think = "exp:1ms"
seed = "18446744073709551615"
no_nodelay = true
sndbuf = "64k"
units = "kB"
tag = "commit=3f2a"
fail_if = "p99>20ms"
"#,
        );
        assert!(written.contains("size = \"16,128\""), "{written}");
        assert!(
            written.contains("seed = \"18446744073709551615\""),
            "{written}"
        );
    }

    #[test]
    fn an_http_compare_plan_reads_back_as_the_same_arguments() {
        let written = round_trip(
            r#"
command = "compare"
[targets]
a = "https://127.0.0.1:8080/x?q=\"1\""
b = "https://127.0.0.1:8443/"
[run]
method = "POST"
header = ["X-A: 1", "X-B: \"two\""]
body = "k={seq}\n"
accept = "2xx,3xx"
insecure = true
http2 = true
rate = "1000"
arrival = "poisson"
runs = "auto"
precision = "2%"
threshold = "5%"
"#,
        );
        assert!(written.contains("header = ["), "{written}");
    }

    #[test]
    fn a_flag_given_twice_that_a_plan_file_gives_once_is_refused() {
        let Ok(Command::Run(a)) = Cli::try_parse_from([
            "wirebench",
            "run",
            "tcp://127.0.0.1:1",
            "--tag",
            "a=1",
            "--tag",
            "b=2",
        ])
        .map(|c| c.command) else {
            unreachable!("a run line")
        };
        let e = plan_file(None, "run", &a).unwrap_err();
        assert_eq!(e, WriteError::Repeated("tag".into(), 2));
    }
}
