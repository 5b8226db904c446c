//! The flag group of `wirebench run` that Redis reads: the command each request sends. clap
//! parses it (`cli::RunArgs` flattens this group); [`super::Redis`] validates it.

use clap::Args;

/// Redis: the command of every request.
#[derive(Debug, Args, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RedisArgs {
    /// Redis: the command each request sends, its words split at spaces, e.g. 'GET key' or
    /// 'SET key value' [default: PING]
    #[arg(long, value_name = "COMMAND")]
    pub redis_cmd: Option<String>,
}

/// The group's name in [`crate::driver::Protocol::FLAGS`].
pub const REDIS: &str = "redis";

impl crate::driver::FlagGroup for RedisArgs {
    fn name(&self) -> &'static str {
        REDIS
    }

    fn given(&self) -> Option<&'static str> {
        self.redis_cmd.is_some().then_some("--redis-cmd")
    }

    fn fits(&self) -> &'static str {
        "redis://"
    }

    fn plan(&self) -> Vec<(&'static str, String)> {
        let command = self.redis_cmd.as_deref().unwrap_or("unset");
        vec![("--redis-cmd", command.to_string())]
    }
}
