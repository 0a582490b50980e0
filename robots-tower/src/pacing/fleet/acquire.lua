-- KEYS: [1] the group's pace state (`pace.lua`; its first place too), [2] its other places'
-- leases (a sorted set), [3] the epoch of its slot, [4] its waiters by first ask
-- and [5] by latest ask (sorted sets).
-- ARGV: [1] interval ms, [2] concurrency, [3] lease ttl ms, [4] lease id, [5] spacing (0: several
-- at a time, 1: one at a time, 2: one at a time and from the end), [6] idle ttl ms, [7] mode
-- (wait, try, peek), [8] the pause this process knows is left for the group, ms (0: none),
-- [9] the server this process talks to (its run_id; empty when unknown; `@node` on a Redis
-- Cluster, whose node says its own id: a replica promoted when its master died is another).
-- KEYS from [6] and ARGV from [10]: requests this process settles on the way (`settle.lua`),
-- first, so that a place one of them frees counts here.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
settle_from(now, 6, 10)
local interval = tonumber(ARGV[1])
local concurrency = tonumber(ARGV[2])
local lease_ttl = tonumber(ARGV[3])
local mode = ARGV[7]
local known_pause = tonumber(ARGV[8])
local me = ARGV[9]
if me == '@node' then me = redis.call('CLUSTER', 'MYID') end
-- The epoch, `<since>:<server>`: since when this state holds, and which server kept it.
-- None: the fleet is new, or the server lost its state (a restart without persistence, a
-- FLUSHALL, an evicted key), which nothing else tells apart: it holds from now. Another server
-- than the one that kept it (a failover to a replica, which may lag behind): from now too.
local stored = redis.call('GET', KEYS[3])
local since, server
if stored then
  local at, id = string.match(stored, '^(%-?%d+):?(.*)$')
  since, server = tonumber(at), id
end
local epoch = stored
if not since then
  -- (Not the server's start by its uptime: a FLUSHALL loses the state of a server up for
  -- days, and the uptime counts whole seconds of the wall clock, up to one too many.)
  since = now
  epoch = since .. ':' .. me
  redis.call('SET', KEYS[3], epoch)
elseif me ~= '' and server ~= me then
  if server ~= '' then since = now end
  epoch = since .. ':' .. me
  redis.call('SET', KEYS[3], epoch)
end
local p = load_pace(KEYS[1], KEYS[2])
local idle = tonumber(ARGV[6])
-- Waiters are served first come, first served; one that stopped asking for 2 s is dropped.
-- (Most groups have none: the state's `queued` says until when some may be, and nothing else
-- about them is read or written after it.)
local queued = 0
if p.queued > now then queued = redis.call('ZCARD', KEYS[4]) end
if queued > 0 then
  local stale = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now - 2000)
  for _, id in ipairs(stale) do
    redis.call('ZREM', KEYS[4], id)
    redis.call('ZREM', KEYS[5], id)
  end
  queued = queued - #stale
end
local function wait_turn(ms)
  if mode == 'wait' then
    redis.call('ZADD', KEYS[4], 'NX', now, ARGV[4])
    redis.call('ZADD', KEYS[5], now, ARGV[4])
    redis.call('PEXPIRE', KEYS[4], 4000)
    redis.call('PEXPIRE', KEYS[5], 4000)
    p.queued = now + 4000
    save_pace(KEYS[1], p, now, idle)
  end
  return {0, ms, 0, epoch}
end
-- The group's first place is in its pace state, which a decision reads anyway (most groups have
-- one place, or one request at a time): no key is made and dropped per request. Places beyond
-- it are leases in the sorted set, and the state's `others` says until when some may be held.
local first_held = p.lease_until > now
local others = 0
if p.others > now then
  -- (Leases that ended are dropped.)
  others = redis.call('ZCARD', KEYS[2])
  if others > 0 then
    others = others - redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  end
end
local free = concurrency - others
if first_held then free = free - 1 end
if free <= 0 then
  local soonest = first_held and p.lease_until or nil
  if others > 0 then
    local first = tonumber(redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2])
    if not soonest or first < soonest then soonest = first end
  end
  return wait_turn(math.max(1, math.min(soonest - now, 50)))
end
-- A free place goes to the longest waiters: this request's rank among them, or the queue's
-- length when it is not in it.
local rank = nil
if queued > 0 then rank = redis.call('ZRANK', KEYS[4], ARGV[4]) end
local ahead = rank or queued
if ahead >= free then
  return wait_turn(5)
end
if known_pause > 0 and p.tat == 0 and p.pause == 0 and p.ended == 0 and p.lease_until == 0
  and p.others == 0 then
  -- A pause this process saw, lost with the server's state: set again.
  p.pause, p.paused = now + known_pause, now
  save_pace(KEYS[1], p, now, idle)
end
local pause = p.pause
local start = math.max(now, p.tat, pause)
-- This request's own interval from the last start that went (a group's origins may ask for
-- different intervals; the reservation's `tat` holds the previous one's).
if p.start > 0 then start = math.max(start, p.start + interval) end
-- Fenced: less than an interval after the state began (a loss, a failover), a request may have
-- started just before, unrecorded, so no start comes before an interval after it.
if now < since + interval then
  start = math.max(start, since + interval)
end
if ARGV[5] ~= '0' and p.ended > 0 then
  local after_end = p.adaptive
  if ARGV[5] == '2' then after_end = math.max(after_end, interval) end
  start = math.max(start, p.ended + after_end)
end
if mode ~= 'wait' and start > now then
  local paused = 0
  if pause > now and pause >= start then paused = 1 end
  return {2, start - now, paused, epoch}
end
if mode == 'peek' then
  return {2, 0, 0, epoch}
end
-- A start that is now goes now; a later one is recorded when it goes (START_CHECK). The lease
-- takes the first place when it is free, another one otherwise.
p.tat = start + interval
if start == now then p.start = now end
local ends = start + lease_ttl
if first_held then
  redis.call('ZADD', KEYS[2], string.format('%d', ends), ARGV[4])
  redis.call('PEXPIRE', KEYS[2], string.format('%d', ends - now))
  p.others = math.max(p.others, ends)
else
  p.lease, p.lease_until = ARGV[4], ends
end
if rank then
  redis.call('ZREM', KEYS[4], ARGV[4])
  redis.call('ZREM', KEYS[5], ARGV[4])
end
-- (It outlives the reservation by the idle ttl, and every place held.)
save_pace(KEYS[1], p, now, idle)
return {1, start - now, 0, epoch}
