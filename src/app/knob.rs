//! The fields of `wirebench run` a sweep varies: each a [`Knob`], set on a copy of the parsed
//! arguments for each point, so the point is validated as a command line is (one validation).

use crate::cli::RunArgs;
use crate::load::sweep::Kind;

/// A field of the run's arguments a sweep may vary, in the order their axes take: the first
/// swept one gives the tables' columns, the others one table per value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Knob {
    /// The message size (`--size`).
    Size,
    /// Concurrent connections (`--connections`).
    Connections,
    /// The open loop's rate (`--rate`).
    Rate,
    /// Requests in flight per connection (`--pipeline`).
    Pipeline,
    /// The pause between a reply and the next request (`--think`).
    Think,
    /// SO_SNDBUF (`--sndbuf`).
    Sndbuf,
    /// SO_RCVBUF (`--rcvbuf`).
    Rcvbuf,
    /// A file set's data set size (`--dataset`).
    Dataset,
}

impl Knob {
    /// Every knob, in axis order.
    pub const ALL: [Knob; 8] = [
        Knob::Size,
        Knob::Connections,
        Knob::Rate,
        Knob::Pipeline,
        Knob::Think,
        Knob::Sndbuf,
        Knob::Rcvbuf,
        Knob::Dataset,
    ];

    /// The flag that sets it, as the tables name an axis.
    pub fn flag(self) -> &'static str {
        match self {
            Knob::Size => "--size",
            Knob::Connections => "--connections",
            Knob::Rate => "--rate",
            Knob::Pipeline => "--pipeline",
            Knob::Think => "--think",
            Knob::Sndbuf => "--sndbuf",
            Knob::Rcvbuf => "--rcvbuf",
            Knob::Dataset => "--dataset",
        }
    }

    /// What its values are.
    pub fn kind(self) -> Kind {
        match self {
            Knob::Size | Knob::Sndbuf | Knob::Rcvbuf | Knob::Dataset => Kind::Bytes,
            Knob::Connections | Knob::Pipeline => Kind::Count,
            Knob::Rate => Kind::Rate,
            Knob::Think => Kind::Duration,
        }
    }

    /// The field of `a` it varies, as given (a list or range is a sweep).
    pub fn get(self, a: &RunArgs) -> Option<&str> {
        match self {
            Knob::Size => a.protocol.message.size.as_deref(),
            Knob::Connections => Some(&a.connections),
            Knob::Rate => a.load.rate.as_deref(),
            Knob::Pipeline => a.pipeline.as_deref(),
            Knob::Think => a.think.as_deref(),
            Knob::Sndbuf => a.socket.sndbuf.as_deref(),
            Knob::Rcvbuf => a.socket.rcvbuf.as_deref(),
            Knob::Dataset => a.protocol.file_set.dataset.as_deref(),
        }
    }

    /// Sets the field of `a` it varies to one value.
    pub fn set(self, a: &mut RunArgs, value: String) {
        match self {
            Knob::Size => a.protocol.message.size = Some(value),
            Knob::Connections => a.connections = value,
            Knob::Rate => a.load.rate = Some(value),
            Knob::Pipeline => a.pipeline = Some(value),
            Knob::Think => a.think = Some(value),
            Knob::Sndbuf => a.socket.sndbuf = Some(value),
            Knob::Rcvbuf => a.socket.rcvbuf = Some(value),
            Knob::Dataset => a.protocol.file_set.dataset = Some(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(line: &str) -> RunArgs {
        match crate::cli::Cli::parse_from(line.split(' ')).command {
            crate::cli::Command::Run(a) => a,
            _ => unreachable!("a run line"),
        }
    }

    #[test]
    fn each_knob_sets_the_field_its_flag_sets() {
        for knob in Knob::ALL {
            let given = args(&format!(
                "wirebench run tcp://127.0.0.1:1 {} 7",
                knob.flag()
            ));
            let mut set = args("wirebench run tcp://127.0.0.1:1");
            assert_ne!(knob.get(&set), Some("7"), "{knob:?}");
            knob.set(&mut set, "7".into());
            assert_eq!(knob.get(&set), Some("7"), "{knob:?}");
            assert_eq!(format!("{set:?}"), format!("{given:?}"), "{knob:?}");
        }
    }

    #[test]
    fn a_swept_size_is_each_plan_s_request_size() {
        let batch = crate::app::sweep::batch(&args(
            "wirebench run tcp://127.0.0.1:1 --size 16,128 -c 1,2",
        ))
        .unwrap();
        let flags: Vec<&str> = batch.axes.iter().map(|a| a.flag.as_ref()).collect();
        assert_eq!(flags, [Knob::Size.flag(), Knob::Connections.flag()]);
        let got: Vec<(usize, usize)> = batch
            .runs
            .iter()
            .map(|r| (r.plan.workload.request.len(), r.plan.connections))
            .collect();
        assert_eq!(got, [(16, 1), (128, 1), (16, 2), (128, 2)]);
    }
}
