//! A group's pace state in the fleet's Redis, read and written field by field: it is one packed
//! string (robots-tower's `pace.lua`, whose layout these helpers run in Redis itself, so that a
//! test never depends on a copy of it).

use crate::redis_server::RedisServer;

/// The layout and its readers and writers, as the fleet's scripts have them.
const PACE_LUA: &str = include_str!("../../robots-tower/src/pacing/fleet/pace.lua");

/// Answers a field's value: a number as an integer, the lease as its id; nothing when unset.
const GET: &str = "
local v = load_pace(KEYS[1])[ARGV[1]]
if v == nil then return redis.error_reply('no such field: ' .. ARGV[1]) end
if v == 0 or v == '' then return false end
if type(v) == 'number' then return string.format('%d', v) end
return v
";

/// Sets fields (name, value, ...), keeping the key's expiry.
const SET: &str = "
local p = load_pace(KEYS[1])
for i = 1, #ARGV, 2 do
  local field = ARGV[i]
  if p[field] == nil then return redis.error_reply('no such field: ' .. field) end
  if field == 'lease' then p[field] = ARGV[i + 1] else p[field] = tonumber(ARGV[i + 1]) end
end
redis.call('SET', KEYS[1], pack_pace(p), 'KEEPTTL')
return 1
";

impl RedisServer {
    /// A field of the pace state at `key` (`tat`, `start`, `ended`, `pause`, `paused`,
    /// `failures`, `adaptive`, `lease_until`, `others`, `queued`, `lease`), as text; `None`
    /// when unset (or the group has no state).
    ///
    /// # Panics
    /// When the field is not one of the state's, or Redis answers otherwise.
    pub fn pace_field(&self, key: &str, field: &str) -> Option<String> {
        let script = format!("{PACE_LUA}{GET}");
        let reply = self.command(&["EVAL", &script, "1", key, field]);
        let mut lines = reply.lines();
        match lines.next() {
            Some("$-1") => None,
            Some(head) if head.starts_with('$') => lines.next().map(str::to_string),
            _ => panic!("reading {field} of {key}: {reply}"),
        }
    }

    /// Sets fields of the pace state at `key` (created when the group has none), keeping its
    /// expiry.
    ///
    /// # Panics
    /// When a field is not one of the state's, or Redis answers otherwise.
    pub fn set_pace(&self, key: &str, fields: &[(&str, &str)]) {
        let script = format!("{PACE_LUA}{SET}");
        let mut args = vec!["EVAL", &script, "1", key];
        for (field, value) in fields {
            args.extend([*field, *value]);
        }
        let reply = self.command(&args);
        assert_eq!(reply.trim(), ":1", "setting {fields:?} of {key}");
    }
}
