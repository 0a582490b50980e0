-- Settles the requests that no acquire carried (see `settle.lua`): KEYS and ARGV from 1.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
settle_from(now, 1, 1)
return 0
