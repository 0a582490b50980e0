-- KEYS: [1] the group's pace hash, [2] the epoch of its slot.
-- ARGV: [1] the epoch at the grant, [2] interval ms, [3] idle ttl ms.
-- Returns {verdict, ms}: 0 go (the start is recorded), 1 ask again (the state changed), 2 ask
-- again (a pause set meanwhile, ms left), 3 check again after ms (a start that went late is
-- less than an interval before).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return {1, 0}
end
local state = redis.call('HMGET', KEYS[1], 'pause', 'start')
local pause = tonumber(state[1]) or 0
if pause > now then
  return {2, pause - now}
end
local interval = tonumber(ARGV[2])
local last = tonumber(state[2])
if last and now < last + interval then
  return {3, last + interval - now}
end
-- The start as it goes, which may be later than reserved (a process busy, a timer late): the
-- next reservations (the acquire script reads it) and checks count from it.
redis.call('HSET', KEYS[1], 'start', now)
if redis.call('PTTL', KEYS[1]) < interval + tonumber(ARGV[3]) then
  redis.call('PEXPIRE', KEYS[1], interval + tonumber(ARGV[3]))
end
return {0, 0}
