-- Settles requests this process made, folded into a call it makes anyway (the acquire of its
-- next request, or one call for all that wait): one script call per decision in the common case.
-- From KEYS[k] on, two keys per request: its group's pace hash (with the first place) and the
-- leases of its other places. From ARGV[a] on, six
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
    local state = redis.call('HMGET', pace, 'end', 'pause', 'paused', 'failures', 'tat', 'lease',
      'until', 'others', 'queued')
    local set = {}
    -- The lease: the group's first place (in the hash), or one in the set.
    local first_ends = tonumber(state[7]) or 0
    if state[6] == id then
      if first_ends > now then
        -- (The grace can shorten the lease, never lengthen it; 0: the place is free.)
        local ends = 0
        if grace >= 0 then ends = math.min(first_ends, at + grace) end
        set[#set + 1] = 'until'
        set[#set + 1] = ends
        first_ends = ends
      end
    elseif grace >= 0 then
      -- (LT: the grace can shorten the lease, never lengthen it.)
      redis.call('ZADD', leases, 'XX', 'LT', at + grace, id)
    else
      redis.call('ZREM', leases, id)
    end
    if at > (tonumber(state[1]) or 0) then
      set[#set + 1] = 'end'
      set[#set + 1] = at
    end
    local pause = tonumber(state[2]) or 0
    -- A success ends the streak and its pause, but not a pause set after it came (another
    -- process's 429 meanwhile).
    if ARGV[a + 3] == '1' and (state[2] or state[4]) and (tonumber(state[3]) or 0) <= at then
      redis.call('HDEL', pace, 'failures', 'pause', 'paused')
      pause = 0
    end
    if ARGV[a + 4] ~= '-1' then
      set[#set + 1] = 'adaptive'
      set[#set + 1] = ARGV[a + 4]
    end
    if #set > 0 then redis.call('HSET', pace, unpack(set)) end
    -- (Never sooner than the acquire set it: reservations may reach further ahead than the
    -- idle ttl, and their `tat` must outlive them; nor before a place held ends, or the waiters
    -- the hash says may be queued.)
    keep_pace(pace, now, tonumber(ARGV[a + 5]), pause, state[5], first_ends, state[8], state[9])
    k, a = k + 2, a + 6
  end
end
