-- Sets a group's pace hash to expire once nothing in it matters: the idle ttl after the latest of
-- now, the pause and the reservations ahead (`tat`); never before a place it holds or announces
-- ends (`until`, `others`), nor while it says waiters may be queued (`queued`); and at least
-- `at_least` ms from now. Every script that writes the hash sets its expiry here. (Values as
-- read: strings, numbers or nil.)
local function keep_pace(key, now, idle, pause, tat, first, others, queued, at_least)
  local ms = math.max(now, tonumber(pause) or 0, tonumber(tat) or 0) + idle
  ms = math.max(ms, tonumber(first) or 0, tonumber(others) or 0, tonumber(queued) or 0,
    now + (at_least or 0))
  redis.call('PEXPIRE', key, ms - now)
end
