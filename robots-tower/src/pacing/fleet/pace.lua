-- A group's pace state is one string: its fields packed in a fixed order, so that a script
-- reads it with one call and writes it, with its expiry, with one more, and no number is turned
-- into text and back (in Redis's scripts, that cost more than the calls). Each number is a whole
-- one in 6 bytes (Unix ms fit until the year 6400); an unset field is 0 (the lease: ''). Times
-- are the server clock's Unix ms.
--   tat          the reservation ahead: no start before it
--   start        the last start that went
--   ended        the last request's end
--   pause        until when the group is paused (back-off, Retry-After, rate limit)
--   paused       when that pause was set
--   failures     the back-off streak
--   adaptive     the adaptive delay (ms)
--   lease_until  until when the group's first place is held, and
--   lease        by which request
--   others       until when its set of leases may hold one of its other places
--   queued       until when waiters may be queued for it
local PACE = '<i6i6i6i6i6i6i6i6i6i6s'
local PACE_SIZE = 61

-- A group's pace state at `key` (all unset when the group has none, or what is stored is not
-- one); `leases`: the set of its other places (read only when it finds a hash an earlier release
-- left).
local function load_pace(key, leases)
  local raw = redis.pcall('GET', key)
  if type(raw) == 'string' and #raw >= PACE_SIZE and string.byte(raw, -1) == 0 then
    local tat, start, ended, pause, paused, failures, adaptive, lease_until, others, queued, lease =
      struct.unpack(PACE, raw)
    return {tat = tat, start = start, ended = ended, pause = pause, paused = paused,
      failures = failures, adaptive = adaptive, lease_until = lease_until, others = others,
      queued = queued, lease = lease}
  end
  local p = {tat = 0, start = 0, ended = 0, pause = 0, paused = 0, failures = 0, adaptive = 0,
    lease_until = 0, others = 0, queued = 0, lease = ''}
  if type(raw) == 'table' and redis.call('TYPE', key).ok == 'hash' then
    -- A hash: the state as earlier releases kept it, read once (the next write replaces it), so
    -- that a fleet stopped and started again on this release keeps its reservations, pauses and
    -- back-off streaks.
    local h = redis.call('HMGET', key, 'tat', 'start', 'end', 'pause', 'paused', 'failures',
      'adaptive', 'until', 'others', 'queued', 'lease')
    for i, field in ipairs({'tat', 'start', 'ended', 'pause', 'paused', 'failures', 'adaptive',
      'lease_until', 'others', 'queued'}) do
      p[field] = tonumber(h[i]) or 0
    end
    p.lease = h[11] or ''
    -- (They held every place in the set, which the state did not announce: until when it may
    -- hold one, its latest lease says.)
    if leases then
      local last = redis.call('ZRANGE', leases, -1, -1, 'WITHSCORES')[2]
      p.others = math.max(p.others, tonumber(last) or 0)
    end
  end
  return p
end

-- A group's pace state as stored.
local function pack_pace(p)
  return struct.pack(PACE, p.tat, p.start, p.ended, p.pause, p.paused, p.failures, p.adaptive,
    p.lease_until, p.others, p.queued, p.lease)
end

-- Writes a group's pace state, to expire once nothing in it matters: the idle ttl after the
-- latest of now, the pause and the reservation ahead; never before a place it holds or announces
-- ends, nor while it says waiters may be queued; and at least `at_least` ms from now. (The
-- expiry as an integer: Redis writes a Lua number with "%.17g", at several times the cost.)
local function save_pace(key, p, now, idle, at_least)
  local ms = math.max(now, p.pause, p.tat) + idle
  ms = math.max(ms, p.lease_until, p.others, p.queued, now + (at_least or 0))
  redis.call('SET', key, pack_pace(p), 'PX', string.format('%d', ms - now))
end
