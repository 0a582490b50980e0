-- KEYS: [1] the group's pace state (`pace.lua`), [2] the epoch of its slot.
-- ARGV: [1] the epoch at the grant, [2] interval ms, [3] idle ttl ms.
-- Returns {verdict, ms}: 0 go (the start is recorded), 1 ask again (the state changed), 2 ask
-- again (a pause set meanwhile, ms left), 3 check again after ms (a start that went late is
-- less than an interval before).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return {1, 0}
end
local p = load_pace(KEYS[1])
if p.pause > now then
  return {2, p.pause - now}
end
local interval = tonumber(ARGV[2])
local last = p.start
if last > 0 and now < last + interval then
  return {3, last + interval - now}
end
-- The start as it goes, which may be later than reserved (a process busy, a timer late): the
-- next reservations (the acquire script reads it) and checks count from it.
p.start = now
local idle = tonumber(ARGV[3])
save_pace(KEYS[1], p, now, idle, interval + idle)
return {0, 0}
