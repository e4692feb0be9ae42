-- One wrk script for every scenario, so every server is driven by the same client code.
-- Arguments (after `--`): method, path template, body template or "-", count, start, step.
-- "{n}" in the path or body is replaced by start, start+step, ... (count values); the
-- requests are formatted once in init() and replayed in turn, so per-request Lua work is
-- one table read (the same small cost for the product, the ceiling and the peer).
-- done() prints one line "WRKJSON {...}" with exact counts and latency percentiles (us).
local reqs = {}
local i = 0
local n = 0

function init(args)
  local method = args[1] or "GET"
  local path = args[2] or "/"
  local body = args[3]
  local count = tonumber(args[4]) or 1
  local start = tonumber(args[5]) or 1
  local step = tonumber(args[6]) or 1
  if body == nil or body == "-" then body = nil end
  for k = 0, count - 1 do
    local v = tostring(start + k * step)
    local p = (path:gsub("{n}", v))
    local headers = { }
    local b = nil
    if body then
      b = (body:gsub("{n}", v))
      headers["Content-Type"] = "application/json"
    end
    reqs[#reqs + 1] = wrk.format(method, p, headers, b)
  end
  n = #reqs
end

function request()
  i = i % n + 1
  return reqs[i]
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,' ..
    '"mean_us":%.1f,"p50_us":%d,"p75_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency:percentile(50), latency:percentile(75), latency:percentile(90), latency:percentile(99), latency.max))
end
