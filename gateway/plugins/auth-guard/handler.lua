-- auth-guard: limits failed authentication attempts per client IP, so keys cannot be guessed.
--
-- Runs before key-auth (1250), so a client IP that has used up its attempts gets
--   429 {"error":"Too many failed authentication attempts"}   Retry-After: <seconds to window end>
-- before any key is looked up, whatever it sends, valid key included.
--
-- A failed attempt is a 401 the gateway answered itself (job-scopes' missing, unknown and
-- duplicate key answers; kong.response.get_source() == "exit"), counted in the log phase. A 401
-- from the service does not count, nor does any other status. Windows are clock minutes (like
-- rate-limiting's minute period); each client IP has one counter per window in the node's
-- kong_rate_limiting_counters shared dictionary (kong/templates/nginx_kong.lua), key
-- "auth-guard:<ip>:<window start>", 60 s ttl. Counters are per node: N nodes allow N x limit.
--
-- The client IP is kong.client.get_forwarded_ip(): $remote_addr after nginx's realip module, so
-- behind a load balancer set trusted_ips and real_ip_header, or every client shares one IP.

local kong = kong
local ngx = ngx
local tostring = tostring

local WINDOW = 60
local KEY_PREFIX = "auth-guard:"

local counters = ngx.shared.kong_rate_limiting_counters

local TOO_MANY = { error = "Too many failed authentication attempts" }


local AuthGuardHandler = {
  VERSION = "1.0.0",
  PRIORITY = 1260,
}


-- The counter of this client IP in the window that holds `now`, and that window's start.
local function window_key(ip, now)
  local start = now - now % WINDOW
  return KEY_PREFIX .. tostring(ip) .. ":" .. start, start
end


function AuthGuardHandler:access(conf)
  local now = ngx.time()
  local key, start = window_key(kong.client.get_forwarded_ip(), now)

  -- The log phase counts into the window the request arrived in.
  local ctx = kong.ctx.plugin
  ctx.key = key

  local failures = counters:get(key)
  if failures and failures >= conf.limit then
    return kong.response.exit(429, TOO_MANY, { ["Retry-After"] = tostring(start + WINDOW - now) })
  end
end


function AuthGuardHandler:log(conf)
  local key = kong.ctx.plugin.key
  if not key or kong.response.get_status() ~= 401 or kong.response.get_source() ~= "exit" then
    return
  end

  local _, err = counters:incr(key, 1, 0, WINDOW)
  if err then
    kong.log.err("auth-guard: cannot count a failed attempt: ", err)
  end
end


return AuthGuardHandler
