-- Settles requests this process made, folded into a call it makes anyway (the acquire of its
-- next request, or one call for all that wait): one script call per decision in the common case.
-- From KEYS[k] on, two keys per request: its group's pace state (with the first place) and the
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
    local p = load_pace(pace, leases)
    -- The lease: the group's first place (in the pace state), or one in the set.
    if p.lease == id then
      if p.lease_until > now then
        -- (The grace can shorten the lease, never lengthen it; 0: the place is free.)
        local ends = 0
        if grace >= 0 then ends = math.min(p.lease_until, at + grace) end
        p.lease_until = ends
      end
    elseif grace >= 0 then
      -- (LT: the grace can shorten the lease, never lengthen it.)
      redis.call('ZADD', leases, 'XX', 'LT', at + grace, id)
    else
      redis.call('ZREM', leases, id)
    end
    if at > p.ended then p.ended = at end
    -- A success ends the streak and its pause, but not a pause set after it came (another
    -- process's 429 meanwhile).
    if ARGV[a + 3] == '1' and (p.pause > 0 or p.failures > 0) and p.paused <= at then
      p.pause, p.paused, p.failures = 0, 0, 0
    end
    if ARGV[a + 4] ~= '-1' then p.adaptive = tonumber(ARGV[a + 4]) end
    -- (Its expiry: never sooner than the acquire set it, as reservations may reach further
    -- ahead than the idle ttl and their `tat` must outlive them; nor before a place held ends,
    -- or the waiters it says may be queued.)
    save_pace(pace, p, now, tonumber(ARGV[a + 5]))
    k, a = k + 2, a + 6
  end
end
