-- job-rate-limits: the API's minute and hour limits, counted for every Kong node in one Redis round
-- trip per request (shared with the worker's other requests of the moment), with no timer per
-- request (docs/decisions.md, "Rate limiting and Kong's cost").
--
-- Modelled on Kong 3.9's rate-limiting (kong/plugins/rate-limiting/handler.lua, policies/init.lua):
-- the same Redis keys, clock windows, identity and RateLimit-* choice, so a rolling change between
-- the two keeps the counts. Where that plugin makes a round trip and an EVAL per window and then a
-- timer, this one sends one EVALSHA that counts the request in every window only when all have
-- room (envoyproxy/ratelimit counts a request's descriptors in one pipelined round trip:
-- src/redis/fixed_cache_impl.go). One light thread per worker writes the calls waiting at once
-- in one write, and under load holds them a moment for more to share it (implicit pipelining).
-- Redis down or slow: requests pass uncounted (no headers) after a bounded wait.

local to_hex = require("resty.string").to_hex
local semaphore = require "ngx.semaphore"
local exporter = require "kong.plugins.prometheus.exporter"


local kong = kong
local ngx = ngx
local tcp = ngx.socket.tcp
local time = ngx.time
local now = ngx.now
local max = math.max
local find = string.find
local sub = string.sub
local byte = string.byte
local tonumber = tonumber
local concat = table.concat
local setmetatable = setmetatable
local pairs = pairs
local pcall = pcall
local exiting = ngx.worker.exiting
local null = ngx.null
local resp_header = ngx.header

local node_state = ngx.shared.kong_rate_limiting_counters

local EMPTY_UUID = "00000000-0000-0000-0000-000000000000"
local OUTAGE = "job-rate-limits:redis-down"
-- After a failure a worker leaves Redis alone this long, so an outage costs one wait a second.
local RETRY_SECONDS = 1
local KEEPALIVE_MS = 60000
local SENDER_IDLE_SECONDS = 1
-- Under load (the last batch, sent within BUSY_SECONDS, held more than one call) a batch waits up to
-- PIPELINE_WINDOW or until PIPELINE_LIMIT calls wait (envoyproxy/ratelimit: REDIS_PIPELINE_WINDOW, _LIMIT).
local PIPELINE_WINDOW = 0.001
local PIPELINE_LIMIT = 8
local BUSY_SECONDS = 0.01
local POOL_SIZE = 256

local WINDOWS = { { "second", 1 }, { "minute", 60 }, { "hour", 3600 } }

-- KEYS: the windows' counters; ARGV: their limits, then their lifetimes. Counts the request in every
-- window and takes it back out of all of them when one is over its limit (atomic: no request sees
-- the step between). Answers one status line, every count then the index of a full window (0:
-- counted), space-separated: one line to read instead of an array of integers.
local SCRIPT = [[
local n = #KEYS
local counts, full = {}, 0
for i = 1, n do
  counts[i] = redis.call("INCR", KEYS[i])
  if counts[i] == 1 then redis.call("EXPIRE", KEYS[i], ARGV[n + i]) end
  if counts[i] > tonumber(ARGV[i]) then full = i end
end
if full ~= 0 then
  for i = 1, n do counts[i] = redis.call("DECR", KEYS[i]) end
end
counts[n + 1] = full
return { ok = table.concat(counts, " ") }
]]
local SCRIPT_SHA = to_hex(ngx.sha1_bin(SCRIPT))

local CRLF = "\r\n"
local PLUS = byte("+")

-- What each configuration needs on every request, built once; weak keys drop replaced configurations.
local plans = setmetatable({}, { __mode = "k" })

-- When this worker may try Redis again, and whether it saw it fail.
local retry_at = 0
local failed = false

-- Requests let through uncounted, on this node's /metrics (job-metrics' registry: the bundled
-- exporter's, kong/plugins/prometheus/exporter.lua get_prometheus): the log says so once, this per request.
local uncounted


local JobRateLimitsHandler = {
  VERSION = "1.0.0",
  PRIORITY = 910,
}


local function id_or_empty(id)
  if id == nil or id == null then
    return EMPTY_UUID
  end
  return id
end


-- One RESP bulk string.
local function bulk(value)
  value = tostring(value)
  return "$" .. #value .. CRLF .. value .. CRLF
end


-- A whole RESP command, for the rare ones (AUTH, SELECT).
local function command(...)
  local parts = { "*" .. select("#", ...) .. CRLF }
  for i = 1, select("#", ...) do
    parts[i + 1] = bulk((select(i, ...)))
  end
  return concat(parts)
end


local function plan_of(conf)
  local plan = plans[conf]
  if plan then
    return plan
  end

  local windows, policy = {}, {}
  for i = 1, #WINDOWS do
    local name, seconds = WINDOWS[i][1], WINDOWS[i][2]
    local limit = conf[name]
    if limit and limit ~= null then
      windows[#windows + 1] = { name = name, seconds = seconds, limit = limit }
      policy[#policy + 1] = '"' .. name .. '";q=' .. limit .. ";w=" .. seconds
    end
  end

  -- The request around the keys, written once: EVALSHA (or EVAL) and the key count before them,
  -- every limit then every lifetime after them.
  local n = #windows
  local head = "*" .. (3 + 3 * n) .. CRLF
  local args = {}
  for i = 1, n do
    args[i] = bulk(windows[i].limit)
    args[n + i] = bulk(windows[i].seconds)
  end

  local r = conf.redis
  plan = {
    windows = windows,
    evalsha = head .. bulk("EVALSHA") .. bulk(SCRIPT_SHA) .. bulk(n),
    eval = head .. bulk("EVAL") .. bulk(SCRIPT) .. bulk(n),
    args = concat(args),
    policy = concat(policy, ", "),
    -- Kong's key (policies/init.lua get_local_key): ratelimit:<route>:<service>:<who>:<start ms>:<period>.
    prefix = "ratelimit:" .. id_or_empty(conf.route_id) .. ":" .. id_or_empty(conf.service_id) .. ":",
    sock_opts = {
      pool = r.host .. ":" .. r.port .. ";" .. r.database .. (r.ssl and ";ssl" or ""),
    },
  }
  plans[conf] = plan
  return plan
end


-- Whose count this is: the consumer, else its credential, else the address (Kong's get_identifier).
local function identity(conf)
  if conf.limit_by == "consumer" then
    local entity = kong.client.get_consumer() or kong.client.get_credential()
    if entity and entity.id then
      return entity.id
    end
  end
  return kong.client.get_forwarded_ip()
end


local function present(value)
  return value ~= nil and value ~= null and value ~= ""
end


-- Sends a request and reads the one-line answer: the line, or nil and Redis' error or the socket's.
local function ask(sock, request)
  local ok, err = sock:send(request)
  if not ok then
    return nil, err
  end

  local line
  line, err = sock:receive()
  if not line then
    return nil, err
  end
  if byte(line) ~= PLUS then
    return nil, sub(line, 2)
  end
  return line
end


-- A connection from the worker's pool, with TLS, authenticated and on its database the first time it
-- is used (as lua-resty-redis' connect: Kong's redis settings, kong/tools/redis/schema.lua).
local function connect(r, sock_opts)
  local sock = tcp()
  sock:settimeouts(r.timeout, r.timeout, r.timeout)

  local ok, err = sock:connect(r.host, r.port, sock_opts)
  if not ok then
    return nil, "cannot connect: " .. err
  end

  if sock:getreusedtimes() == 0 then
    if r.ssl then
      ok, err = sock:sslhandshake(false, r.server_name ~= null and r.server_name or nil, r.ssl_verify)
      if not ok then
        sock:close()
        return nil, "cannot start TLS: " .. err
      end
    end

    if present(r.password) then
      if present(r.username) then
        ok, err = ask(sock, command("AUTH", r.username, r.password))
      else
        ok, err = ask(sock, command("AUTH", r.password))
      end
      if not ok then
        sock:close()
        return nil, "cannot authenticate: " .. err
      end
    end

    if r.database ~= 0 then
      ok, err = ask(sock, command("SELECT", r.database))
      if not ok then
        sock:close()
        return nil, "cannot select database " .. r.database .. ": " .. err
      end
    end
  end

  return sock
end


-- The numbers of a script answer, "+<count> ... <full>".
local function parse(line, n)
  local res, from = {}, 2
  for i = 1, n + 1 do
    local stop = find(line, " ", from, true)
    res[i] = tonumber(sub(line, from, stop and stop - 1))
    from = stop and stop + 1
  end
  return res
end


-- Sends one batch of requests for one Redis in one write and reads their answers in order; a
-- request Redis lacks the script for is sent again with it. Each job gets its answer or error.
local function run_batch(batch)
  local first = batch[1]
  local sock, err = connect(first.r, first.plan.sock_opts)
  if sock then
    local requests = {}
    for i = 1, #batch do
      requests[i] = batch[i].request
    end
    local ok
    ok, err = sock:send(requests)
    if ok then
      for i = 1, #batch do
        local job = batch[i]
        local line
        line, err = sock:receive()
        if not line then
          break
        end
        if byte(line) == PLUS then
          job.line = line
        else
          job.err = sub(line, 2)
        end
      end
    end
    if not err then
      for i = 1, #batch do
        local job = batch[i]
        if job.err and find(job.err, "NOSCRIPT", 1, true) == 1 then
          job.request[1] = job.plan.eval
          job.line, job.err = ask(sock, job.request)
          if not job.line and not job.err then
            job.err = "no answer"
          end
        end
      end
    end
    if err then
      sock:close()
    else
      sock:setkeepalive(KEEPALIVE_MS, POOL_SIZE)
    end
  end

  for i = 1, #batch do
    local job = batch[i]
    if err and not job.line then
      job.err = job.err or err
    end
    job.done:post(1)
  end
end


-- This worker's requests waiting for Redis, sent together by one light thread: requests that reach
-- this plugin in the same event loop turn share one write and one wake-up of Redis (envoyproxy/
-- ratelimit batches its Redis commands likewise). Every script call stays atomic on its own.
local pending = {}
local wakeup = semaphore.new()
local filled = semaphore.new()
local holding = false

local function sender(premature)
  if premature then
    return
  end
  local last_size, last_at = 0, 0
  while not exiting() do
    wakeup:wait(SENDER_IDLE_SECONDS)
    while #pending > 0 do
      if last_size > 1 and #pending < PIPELINE_LIMIT and now() - last_at < BUSY_SECONDS then
        holding = true
        filled:wait(PIPELINE_WINDOW)
        holding = false
      end
      local batch = pending
      pending = {}
      last_size, last_at = #batch, now()
      -- Batches by Redis (every route of ours has the same one).
      local by_pool = {}
      for i = 1, #batch do
        local pool = batch[i].plan.sock_opts.pool
        local group = by_pool[pool]
        if not group then
          group = {}
          by_pool[pool] = group
        end
        group[#group + 1] = batch[i]
      end
      for _, group in pairs(by_pool) do
        local ok, err = pcall(run_batch, group)
        if not ok then
          kong.log.err("cannot count in Redis: ", err)
          for i = 1, #group do
            group[i].err = group[i].err or "internal error"
            group[i].done:post(1)
          end
        end
      end
    end
  end
end


-- In a timer, once every plugin's init_worker ran: the exporter's counters start in its own
-- (prometheus runs after ours, by priority). Exported as 0 from the start, so that the first
-- outage is an increase in a series Prometheus already has.
local function register_metrics(premature)
  local prometheus = not premature and exporter.get_prometheus()
  if prometheus then
    uncounted = prometheus:counter("jobs_rate_limits_uncounted_total",
      "Requests let through without counting them because Redis did not answer")
    uncounted:inc(0)
  end
end


function JobRateLimitsHandler:init_worker()
  ngx.timer.at(0, register_metrics)
  local ok, err = ngx.timer.at(0, sender)
  if not ok then
    kong.log.err("cannot start the Redis sender: ", err)
  end
end


-- The script's answer for these counters, { count, ..., full window }, from the next batch.
local function count(r, plan, keys)
  local n = #keys
  local request = { plan.evalsha }
  for i = 1, n do
    local key = keys[i]
    request[#request + 1] = "$" .. #key .. CRLF
    request[#request + 1] = key
    request[#request + 1] = CRLF
  end
  request[#request + 1] = plan.args

  local job = { r = r, plan = plan, request = request, done = semaphore.new() }
  local waiting = #pending + 1
  pending[waiting] = job
  if waiting == 1 then
    wakeup:post(1)
  elseif holding and waiting == PIPELINE_LIMIT then
    filled:post(1)
  end

  -- Connect, write and read each wait at most the timeout.
  local ok = job.done:wait(3 * r.timeout / 1000 + 0.1)
  if not ok then
    return nil, "no answer within " .. 3 * r.timeout .. " ms"
  end
  if not job.line then
    return nil, job.err
  end
  return parse(job.line, n)
end


local function pass_uncounted()
  if uncounted then
    uncounted:inc(1)
  end
end


-- Requests pass uncounted for a while; the node logs the outage once, not per request or worker.
local function outage(err)
  pass_uncounted()
  retry_at = now() + RETRY_SECONDS
  failed = true
  if node_state:add(OUTAGE, true) then
    kong.log.err("Redis unreachable, requests pass uncounted until it answers: ", err)
  end
end


local function recovered()
  failed = false
  if node_state:get(OUTAGE) then
    node_state:delete(OUTAGE)
    kong.log.notice("Redis answers again, requests are counted")
  end
end


function JobRateLimitsHandler:access(conf)
  if retry_at > 0 and now() < retry_at then
    return pass_uncounted()
  end

  local plan = plan_of(conf)
  local windows = plan.windows
  local n = #windows
  local t = time()
  local base = plan.prefix .. identity(conf) .. ":"

  local keys, starts = {}, {}
  for i = 1, n do
    local w = windows[i]
    local start = t - t % w.seconds
    starts[i] = start
    keys[i] = base .. start * 1000 .. ":" .. w.name
  end

  local res, err = count(conf.redis, plan, keys)
  if not res then
    return outage(err)
  end
  if failed then
    recovered()
  end

  -- RateLimit-* describe the window with the fewest requests left, a tie going to the longer.
  local limit, left, reset
  local current = {}
  for i = 1, n do
    local w = windows[i]
    local w_left = max(0, w.limit - res[i])
    local w_reset = starts[i] + w.seconds - t
    if not left or w_left <= left then
      limit, left, reset = w.limit, w_left, w_reset
    end
    current[i] = '"' .. w.name .. '";r=' .. w_left .. ";t=" .. w_reset
  end

  resp_header["RateLimit-Limit"] = limit
  resp_header["RateLimit-Remaining"] = left
  resp_header["RateLimit-Reset"] = reset
  resp_header["RateLimit-Policy"] = plan.policy
  resp_header["RateLimit"] = concat(current, ", ")

  if res[n + 1] ~= 0 then
    resp_header["Retry-After"] = reset
    return kong.response.error(conf.error_code, conf.error_message)
  end
end


return JobRateLimitsHandler
