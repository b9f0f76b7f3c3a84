-- The benchmark's load script for wrk (bench/measure.ts runs `wrk -s bench/wrk.lua ... -- <requests file>`).
-- The requests file is a Lua chunk returning a list of whole HTTP requests, each formatted once;
-- every connection cycles through them from a random start, so a request costs one table lookup.
-- Each thread counts answers by status; done() prints one line with the totals and the CPU time
-- wrk itself used (from /proc/self/stat, every thread included), which bench/measure.ts reads.

local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  requests = dofile(args[1])
  math.randomseed(os.time() + id * 7919)
  next_request = math.random(#requests)
  statuses = {}
end

function request()
  next_request = next_request % #requests + 1
  return requests[next_request]
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

local function cpu_ticks()
  local file = io.open("/proc/self/stat", "r")
  if not file then return -1 end
  local stat = file:read("*a")
  file:close()
  -- The fields after the command name (in parentheses, which may hold spaces): utime is the
  -- 12th and stime the 13th of them.
  local after = stat:sub(stat:find("%)[^%)]*$") + 2)
  local fields = {}
  for field in after:gmatch("%S+") do table.insert(fields, field) end
  return tonumber(fields[12]) + tonumber(fields[13])
end

function done(summary, latency, requests)
  local totals = {}
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses")) do totals[status] = (totals[status] or 0) + n end
  end
  local counts = {}
  for status, n in pairs(totals) do table.insert(counts, string.format('"%d":%d', status, n)) end
  local errors = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"microseconds":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,' ..
    '"p50":%d,"p99":%d,"max":%d,"cpuTicks":%d,"statuses":{%s}}\n',
    summary.requests, summary.duration, summary.bytes, errors.connect, errors.read, errors.write, errors.timeout,
    latency:percentile(50), latency:percentile(99), latency.max, cpu_ticks(), table.concat(counts, ",")))
end
