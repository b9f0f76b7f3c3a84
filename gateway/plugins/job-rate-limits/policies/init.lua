-- job-rate-limits' counting: in the node's shared dictionary on the request path (no network call),
-- added to Redis every sync_rate seconds with every node's totals read back. Modelled on Kong 3.9's
-- rate-limiting redis policy with a sync_rate (kong/plugins/rate-limiting/policies/init.lua:
-- rate_limited_sync, sync_to_redis, get_redis_connection); here the node's workers share their counts
-- and the totals come back. The overshoot bound is in docs/guides/rate-limits.md.
--
-- Per counter key (the Redis key) the dictionary holds "n|" .. key, what the node counted and has not
-- yet added to Redis, and "r|" .. key, the cluster's total as Redis last answered it; a request is
-- counted against r + n. Each worker adds what it counted itself (pending) in one pipeline.

local redis = require "resty.redis"


local kong = kong
local ngx = ngx
local now = ngx.now
local max = math.max
local timer_at = ngx.timer.at
local null = ngx.null
local pairs = pairs
local next = next
local pcall = pcall
local tonumber = tonumber

local shm = ngx.shared.kong_rate_limiting_counters
-- The sync runs in a timer, outside the plugin's phases: its lines name the plugin all the same.
local log = kong.log.new("job-rate-limits")

local OUTAGE = "job-rate-limits:redis-down"
-- After a failed sync a worker tries again this much later: an outage costs one attempt a second.
local RETRY_SECONDS = 1
-- Kong's pool options for Redis (policies/init.lua: set_keepalive(10000, 100)).
local KEEPALIVE_MS = 10000
local POOL_SIZE = 100

-- This worker's counts not yet in Redis: key -> { plan, count, ends (window end, epoch s) }.
local pending = {}
local scheduled = false
-- Not before this (after a failed sync), however many counts wait.
local retry_at = 0

local policy = {}


local function present(value)
  return value ~= nil and value ~= null and value ~= ""
end


-- A connection from the worker's pool, authenticated and on its database the first time it is used
-- (as Kong's get_redis_connection: a pool of its own only for a database other than 0).
local function connect(r)
  local red = redis:new()
  red:set_timeout(r.timeout)
  local opts = {
    ssl = r.ssl,
    ssl_verify = r.ssl_verify,
    server_name = present(r.server_name) and r.server_name or nil,
    pool = r.database ~= 0 and (r.host .. ":" .. r.port .. ";" .. r.database) or nil,
  }
  local ok, err = red:connect(r.host, r.port, opts)
  if not ok then
    return nil, "cannot connect: " .. err
  end

  if red:get_reused_times() == 0 then
    if present(r.password) then
      if present(r.username) then
        ok, err = red:auth(r.username, r.password)
      else
        ok, err = red:auth(r.password)
      end
      if not ok then
        red:close()
        return nil, "cannot authenticate: " .. err
      end
    end
    if r.database ~= 0 then
      ok, err = red:select(r.database)
      if not ok then
        red:close()
        return nil, "cannot select database " .. r.database .. ": " .. err
      end
    end
  end
  return red
end


-- Adds one Redis' counts (keys: key -> entry): its totals, key -> total (none for a counter Redis
-- refused), or nil and why nothing was added.
local function push(r, keys)
  local red, err = connect(r)
  if not red then
    return nil, err
  end
  local order = {}
  red:init_pipeline()
  for key, entry in pairs(keys) do
    order[#order + 1] = key
    red:incrby(key, entry.count)
    -- The counter lives until its window ends, however many nodes add to it.
    red:expireat(key, entry.ends)
  end
  local res
  res, err = red:commit_pipeline()
  if not res then
    red:close()
    return nil, err
  end
  red:set_keepalive(KEEPALIVE_MS, POOL_SIZE)
  local totals = {}
  for i = 1, #order do
    totals[order[i]] = tonumber(res[2 * i - 1])
  end
  return totals
end


local schedule


-- Adds this worker's pending counts to Redis and takes every node's totals back; what Redis did not
-- take stays pending, counted on this node meanwhile.
local function sync(premature)
  scheduled = false
  local batch, t = pending, now()
  pending = {}
  local by_redis = {}
  for key, entry in pairs(batch) do
    -- A window that has ended is over everywhere: nothing to add.
    if entry.ends > t then
      local group = by_redis[entry.plan.pool] or { redis = entry.plan.redis, keys = {} }
      by_redis[entry.plan.pool] = group
      group.keys[key] = entry
    end
  end

  local failed
  for _, group in pairs(by_redis) do
    local ok, totals, err = pcall(push, group.redis, group.keys)
    if not ok or not totals then
      failed = ok and err or totals
    end
    for key, entry in pairs(group.keys) do
      local total = ok and totals and totals[key]
      if total then
        -- Out of the node's own count first: for a moment the node counts less, never twice.
        shm:incr("n|" .. key, -entry.count)
        local known = shm:get("r|" .. key)
        if not known or total > known then
          shm:set("r|" .. key, total, entry.ends - t)
        end
      elseif not ok or not totals then
        local later = pending[key]
        pending[key] = entry
        entry.count = entry.count + (later and later.count or 0)
      end
    end
  end

  if failed then
    retry_at = now() + RETRY_SECONDS
    if shm:add(OUTAGE, true) then
      log.err("Redis unreachable, this node counts on its own until it answers: ", failed)
    end
  elseif next(by_redis) and shm:get(OUTAGE) then
    shm:delete(OUTAGE)
    log.notice("Redis answers again, this node's counts are merged with the other nodes'")
  end
  -- Shutting down: what could not be added is lost with the worker (at most sync_rate seconds' counts).
  local _, entry = next(pending)
  if entry and not premature then
    schedule(entry.plan.sync_rate)
  end
end


schedule = function(delay)
  if scheduled then
    return
  end
  local ok, err = timer_at(max(delay, retry_at - now()), sync)
  -- A worker shutting down takes no new timer: its last counts stay on the node.
  if not ok and err ~= "process exiting" then
    log.err("cannot schedule the Redis sync: ", err)
  end
  scheduled = ok and true or false
end


-- Counts a request in every window (windows[i] with keys[i]) when all have room. Returns the total of
-- each window, then the index of a full one (0: counted).
function policy.count(plan, keys, ends)
  local windows = plan.windows
  local n = #windows
  local totals = {}
  local full = 0
  for i = 1, n do
    local key = keys[i]
    local counted, err = shm:incr("n|" .. key, 1, 0, ends[i] - now())
    if not counted then
      log.err("cannot count in the node: ", err)
      counted = 1
    end
    totals[i] = counted + (shm:get("r|" .. key) or 0)
    if totals[i] > windows[i].limit then
      full = i
    end
  end

  if full ~= 0 then
    for i = 1, n do
      shm:incr("n|" .. keys[i], -1)
      totals[i] = totals[i] - 1
    end
    return totals, full
  end

  for i = 1, n do
    local key = keys[i]
    local entry = pending[key]
    if entry then
      entry.count = entry.count + 1
    else
      pending[key] = { plan = plan, count = 1, ends = ends[i] }
    end
  end
  schedule(plan.sync_rate)
  return totals, 0
end


-- Whether the node is counting on its own (Redis did not answer its last sync).
function policy.alone()
  return shm:get(OUTAGE) ~= nil
end


return policy
