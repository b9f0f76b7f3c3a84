-- job-rate-limits: the API's second, minute and hour limits, counted in the node and shared by every
-- Kong node through Redis every sync_rate seconds (policies/init.lua; the bound in
-- docs/guides/rate-limits.md, the decision in docs/decisions.md, "Rate limiting and Kong's cost").
--
-- Laid out as Kong 3.9's rate-limiting (kong/plugins/rate-limiting/handler.lua, policies/init.lua),
-- with its Redis keys, clock windows, identity and RateLimit-* choice, so a rolling change between
-- the two, or from an earlier version of this plugin, keeps the counts. A request is counted in
-- every window only when all have room. Redis away: each node enforces the limits on its own counts.

local policy = require "kong.plugins.job-rate-limits.policies"
local exporter = require "kong.plugins.prometheus.exporter"


local kong = kong
local ngx = ngx
local time = ngx.time
local max = math.max
local concat = table.concat
local setmetatable = setmetatable
local null = ngx.null
local resp_header = ngx.header

local EMPTY_UUID = "00000000-0000-0000-0000-000000000000"

local WINDOWS = { { "second", 1 }, { "minute", 60 }, { "hour", 3600 } }

-- What each configuration needs on every request, built once; weak keys drop replaced configurations.
local plans = setmetatable({}, { __mode = "k" })

-- Requests checked on the node's own counts while Redis is away, on this node's /metrics (job-metrics'
-- registry: the bundled exporter's, kong/plugins/prometheus/exporter.lua get_prometheus).
local alone_total


local JobRateLimitsHandler = {
  VERSION = "2.0.0",
  PRIORITY = 910,
}


local function id_or_empty(id)
  if id == nil or id == null then
    return EMPTY_UUID
  end
  return id
end


local function plan_of(conf)
  local plan = plans[conf]
  if plan then
    return plan
  end

  local windows, quotas = {}, {}
  for i = 1, #WINDOWS do
    local name, seconds = WINDOWS[i][1], WINDOWS[i][2]
    local limit = conf[name]
    if limit and limit ~= null then
      windows[#windows + 1] = { name = name, seconds = seconds, limit = limit }
      quotas[#quotas + 1] = '"' .. name .. '";q=' .. limit .. ";w=" .. seconds
    end
  end

  local r = conf.redis
  plan = {
    windows = windows,
    policy = concat(quotas, ", "),
    -- Kong's key (policies/init.lua get_local_key): ratelimit:<route>:<service>:<who>:<start ms>:<period>.
    prefix = "ratelimit:" .. id_or_empty(conf.route_id) .. ":" .. id_or_empty(conf.service_id) .. ":",
    redis = r,
    pool = r.host .. ":" .. r.port .. ";" .. r.database .. (r.ssl and ";ssl" or ""),
    sync_rate = conf.sync_rate,
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


-- In a timer, once every plugin's init_worker ran: the exporter's counters start in its own
-- (prometheus runs after ours, by priority). Exported as 0 from the start, so that the first
-- outage is an increase in a series Prometheus already has.
local function register_metrics(premature)
  local prometheus = not premature and exporter.get_prometheus()
  if prometheus then
    alone_total = prometheus:counter("jobs_rate_limits_uncounted_total",
      "Requests whose limits this Kong node checked on its own counts, because Redis did not answer")
    alone_total:inc(0)
  end
end


function JobRateLimitsHandler:init_worker()
  ngx.timer.at(0, register_metrics)
end


function JobRateLimitsHandler:access(conf)
  local plan = plan_of(conf)
  local windows = plan.windows
  local n = #windows
  local t = time()
  local base = plan.prefix .. identity(conf) .. ":"

  local keys, ends = {}, {}
  for i = 1, n do
    local w = windows[i]
    local start = t - t % w.seconds
    ends[i] = start + w.seconds
    keys[i] = base .. start * 1000 .. ":" .. w.name
  end

  local totals, full = policy.count(plan, keys, ends)
  if alone_total and policy.alone() then
    alone_total:inc(1)
  end

  -- RateLimit-* describe the window with the fewest requests left, a tie going to the longer.
  local limit, left, reset
  local current = {}
  for i = 1, n do
    local w = windows[i]
    local w_left = max(0, w.limit - totals[i])
    local w_reset = ends[i] - t
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

  if full ~= 0 then
    resp_header["Retry-After"] = reset
    return kong.response.error(conf.error_code, conf.error_message)
  end
end


return JobRateLimitsHandler
