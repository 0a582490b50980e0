-- Settles requests this process made, folded into a call it makes anyway (the acquire of its
-- next request, or one call for all that wait): one script call per decision in the common case.
-- From KEYS[k] on, two keys per request: its group's pace hash and leases. From ARGV[a] on, six
-- arguments per request: its lease id; the unread-body grace in ms when only the response head
-- came (the lease stays for at most that; -1: the request ended, the lease goes); how many ms ago
-- that was; whether it ends the back-off streak (1/0); the adaptive delay in ms (-1: none); the
-- group's idle ttl in ms. Nothing here pauses a group: a response that does is released on its
-- own call, at once (`release.lua`).
local function settle_from(now, k, a)
  while KEYS[k] do
    local pace, leases, id = KEYS[k], KEYS[k + 1], ARGV[a]
    local grace = tonumber(ARGV[a + 1])
    local at = now - tonumber(ARGV[a + 2])
    if grace >= 0 then
      -- (LT: the grace can shorten the lease, never lengthen it.)
      redis.call('ZADD', leases, 'XX', 'LT', at + grace, id)
    else
      redis.call('ZREM', leases, id)
    end
    local state = redis.call('HMGET', pace, 'end', 'pause', 'paused', 'failures', 'tat')
    if at > (tonumber(state[1]) or 0) then redis.call('HSET', pace, 'end', at) end
    local pause = tonumber(state[2]) or 0
    -- A success ends the streak and its pause, but not a pause set after it came (another
    -- process's 429 meanwhile).
    if ARGV[a + 3] == '1' and (state[2] or state[4]) and (tonumber(state[3]) or 0) <= at then
      redis.call('HDEL', pace, 'failures', 'pause', 'paused')
      pause = 0
    end
    if ARGV[a + 4] ~= '-1' then redis.call('HSET', pace, 'adaptive', ARGV[a + 4]) end
    -- (Never sooner than the acquire set it: reservations may reach further ahead than the
    -- idle ttl, and their `tat` must outlive them.)
    local tat = tonumber(state[5]) or 0
    redis.call('PEXPIRE', pace, math.max(pause, tat, now) - now + tonumber(ARGV[a + 5]))
    k, a = k + 2, a + 6
  end
end
