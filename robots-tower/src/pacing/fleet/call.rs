//! A script call written straight into one command buffer.
//!
//! Hand-written on purpose: `redis::ScriptInvocation` keeps each key and argument in a `Vec` of
//! its own and copies them all again into the command it sends. An acquire carries about twenty
//! (more with the settles riding on it), and in the `fleet` bench those allocations and copies
//! were the largest item of a worker's own CPU. Here every key and argument is written once,
//! into the `redis::Cmd` that goes on the wire; a server that does not know the script yet gets
//! it loaded and the call sent again, as `ScriptInvocation` does.

use redis::{Cmd, FromRedisValue, RedisResult, ToRedisArgs};

/// One `EVALSHA`: its keys first, then its arguments.
pub(super) struct ScriptCall {
    script: &'static redis::Script,
    command: Cmd,
    /// Keys still to be written before the first argument.
    keys_left: usize,
}

impl ScriptCall {
    /// A call of `script` with exactly `keys` keys (written with [`ScriptCall::key`] before any
    /// argument).
    pub(super) fn new(script: &'static redis::Script, keys: usize) -> ScriptCall {
        let mut command = redis::cmd("EVALSHA");
        command.arg(script.get_hash()).arg(keys);
        ScriptCall {
            script,
            command,
            keys_left: keys,
        }
    }

    /// Writes the next key (`KEYS[i]` in the script).
    pub(super) fn key(&mut self, key: &str) -> &mut ScriptCall {
        debug_assert!(self.keys_left > 0, "more keys than the call said");
        self.keys_left = self.keys_left.saturating_sub(1);
        self.command.arg(key);
        self
    }

    /// Writes the next argument (`ARGV[i]` in the script), after every key.
    pub(super) fn arg<T: ToRedisArgs>(&mut self, arg: T) -> &mut ScriptCall {
        debug_assert_eq!(self.keys_left, 0, "an argument before the last key");
        self.command.arg(arg);
        self
    }

    /// Runs the call; a server that does not know the script has it loaded first.
    pub(super) async fn invoke<T: FromRedisValue>(
        &self,
        connection: &mut impl redis::aio::ConnectionLike,
    ) -> RedisResult<T> {
        match self.command.query_async(connection).await {
            Err(error)
                if error.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) =>
            {
                self.script.load_async(connection).await?;
                self.command.query_async(connection).await
            }
            answer => answer,
        }
    }
}
