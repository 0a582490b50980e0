-- KEYS: [1] the group's pace state (with its first place), [2] the leases of its other places.
-- ARGV: [1] lease id, [2] backs off (1/0: distress, or a rate limit exhausted without a reset),
-- [3] ends the back-off streak (1/0), [4] Retry-After ms (-1: none), [5] back-off base ms, [6] back-off max ms, [7] longest pause ms, [8] idle ttl ms,
-- [9] jitter factor (0.9 to 1.1, drawn by the caller), [10] rate-limit pause ms (-1: none),
-- [11] adaptive delay ms (-1: none), [12] the lease's life from now, ms, when only the response
-- head came (the lease stays while its body is read; -1: the request ended, the lease goes).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local head = tonumber(ARGV[12])
local p = load_pace(KEYS[1], KEYS[2])
-- The lease: the group's first place (in the pace state), or one in the set.
if p.lease == ARGV[1] then
  if p.lease_until > now then
    -- (The grace can shorten the lease, never lengthen it; 0: the place is free.)
    if head >= 0 then
      p.lease_until = math.min(p.lease_until, now + head)
    else
      p.lease_until = 0
    end
  end
else
  if head >= 0 then
    -- (LT: the grace can shorten the lease, never lengthen it.)
    redis.call('ZADD', KEYS[2], 'XX', 'LT', now + head, ARGV[1])
  else
    redis.call('ZREM', KEYS[2], ARGV[1])
  end
end
p.ended = now
local max_retry = tonumber(ARGV[7])
local pause_ms, reason, failures = 0, 0, 0
local function pause_until(ms)
  if now + ms > p.pause then p.pause, p.paused = now + ms, now end
end
if ARGV[2] == '1' then
  p.failures = p.failures + 1
  failures = p.failures
  -- The back-off the streak calls for; a longer Retry-After lengthens it, a shorter one does not
  -- shorten it. The jitter comes before the cap.
  local max_backoff = tonumber(ARGV[6])
  local backoff = math.min(tonumber(ARGV[5]) * math.pow(2, math.min(failures - 1, 40)), max_backoff)
  pause_ms = math.floor(math.min(backoff * tonumber(ARGV[9]), max_backoff))
  reason = 2
  local retry = tonumber(ARGV[4])
  if retry >= 0 then
    retry = math.min(retry, max_retry)
    if retry >= pause_ms then
      pause_ms = retry
      reason = 1
    end
  end
  pause_until(pause_ms)
elseif ARGV[3] == '1' then
  p.failures, p.pause, p.paused = 0, 0, 0
end
local limited = tonumber(ARGV[10])
if limited >= 0 then
  limited = math.floor(math.min(limited, max_retry))
  pause_until(limited)
  if limited > pause_ms or reason == 0 then
    pause_ms = limited
    reason = 3
  end
end
local adaptive = tonumber(ARGV[11])
if adaptive >= 0 then p.adaptive = adaptive end
-- (Never sooner than the acquire set it: the reservations ahead keep their `tat`; nor before a
-- place held ends, or the waiters it says may be queued.)
save_pace(KEYS[1], p, now, tonumber(ARGV[8]))
return {pause_ms, reason, failures}
