-- One wrk script for every scenario, so every server is driven by the same client code.
-- Arguments (after `--`): method, path template, body template or "-", count, start, step.
-- "{n}" in the path or body is replaced by start, start+step, ... (count values); the
-- requests are formatted once in init() and replayed in turn, so per-request Lua work is
-- one table read (the same small cost for the product, the ceiling and the peer).
-- done() prints one line "WRKJSON {...}" with exact counts and latency percentiles (us).
--
-- Vary mode (count "vary"; then distinct, choices, pages): every request is formatted anew so
-- no two requests within `distinct` carry the same filter (no cache can help). For request i
-- (0-based): {d} = ((i * 7919) % distinct) / 100 with two decimals, {c} = choices[i % #choices]
-- (comma-separated), {p} = 1 + floor(i / #choices) % pages. benchmarks/lib/uncached.js computes
-- the same sequence for its correctness guard.
-- An Authorization header for every request comes from the environment (WRK_AUTHORIZATION):
-- the access bench (issue #28) sends a JWT; everything else sends none.
local authorization = os.getenv("WRK_AUTHORIZATION")
local reqs = {}
local i = 0
local n = 0
local vary = nil

function init(args)
  local method = args[1] or "GET"
  local path = args[2] or "/"
  local body = args[3]
  if args[4] == "vary" then
    local choices = {}
    for c in string.gmatch(args[6] or "", "[^,]+") do choices[#choices + 1] = c end
    vary = { method = method, path = path, distinct = tonumber(args[5]), choices = choices, pages = tonumber(args[7]) or 1 }
    return
  end
  local count = tonumber(args[4]) or 1
  local start = tonumber(args[5]) or 1
  local step = tonumber(args[6]) or 1
  if body == nil or body == "-" then body = nil end
  for k = 0, count - 1 do
    local v = tostring(start + k * step)
    local p = (path:gsub("{n}", v))
    local headers = { }
    if authorization and authorization ~= "" then headers["Authorization"] = authorization end
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
  if vary then
    local k = i
    i = i + 1
    local v = (k * 7919) % vary.distinct
    local d = string.format("%d.%02d", math.floor(v / 100), v % 100)
    local c = vary.choices[(k % #vary.choices) + 1]
    local p = tostring(1 + math.floor(k / #vary.choices) % vary.pages)
    local path = vary.path:gsub("{d}", d):gsub("{c}", c):gsub("{p}", p)
    return wrk.format(vary.method, path)
  end
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
