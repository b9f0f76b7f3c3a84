-- auth-guard: limits failed authentication attempts per client IP, so keys cannot be guessed,
-- without ever refusing a partner's valid key (docs/decisions.md, "auth-guard").
--
-- Runs before key-auth (1250). Once a client IP has used up its attempts in the current clock
-- minute, a request from it goes on only when the key it carries (found as key-auth finds it:
-- key_names in order, header then query) is a credential Kong's cache already holds; anything else
-- gets 429 {"error":"Too many failed authentication attempts"} with Retry-After (seconds to the
-- window's end), and no key is looked up beyond that cache. With a database, kong.conf's
-- db_cache_warmup_entities loads every credential into the cache when Kong starts, so a valid key
-- is found there; DB-less, the cache's loader reads Kong's local LMDB copy, never a database.
--
-- A failed attempt is a 401 the gateway answered itself (job-scopes' missing, unknown and
-- duplicate key answers; kong.response.get_source() == "exit"), counted in the log phase. A 401
-- from the service does not count, nor does any other status. Counters live in the node's
-- kong_rate_limiting_counters shared dictionary (kong/templates/nginx_kong.lua), key
-- "auth-guard:<ip>:<window start>", 60 s ttl: per node, so N nodes allow N x limit.
--
-- The client IP is kong.client.get_forwarded_ip(): $remote_addr after nginx's realip module, so
-- behind a load balancer set trusted_ips and real_ip_header, or every client shares one IP.

local kong = kong
local ngx = ngx
local type = type
local tostring = tostring

local WINDOW = 60
local KEY_PREFIX = "auth-guard:"

local counters = ngx.shared.kong_rate_limiting_counters

local TOO_MANY = { error = "Too many failed authentication attempts" }


local AuthGuardHandler = {
  VERSION = "1.1.0",
  PRIORITY = 1260,
}


-- The counter of this client IP in the window that holds `now`, and that window's start.
local function window_key(ip, now)
  local start = now - now % WINDOW
  return KEY_PREFIX .. tostring(ip) .. ":" .. start, start
end


-- The key as key-auth finds it (kong/plugins/key-auth/handler.lua do_authentication): the first
-- key name with a header, else a query argument; nil when missing, empty or sent twice.
local function presented_key(conf)
  local headers = kong.request.get_headers()
  local query = kong.request.get_query()
  for _, name in ipairs(conf.key_names) do
    local v = headers[name]
    if not v then
      v = query[name]
    end
    if type(v) == "string" then
      return v ~= "" and v or nil
    end
    if type(v) == "table" then
      return nil
    end
  end
end


-- What key-auth's loader returns for a key (load_credential in its handler.lua): the credential,
-- unless it has expired. Only ever called DB-less, where select_by_key reads LMDB.
local function load_credential(key)
  local credential, err = kong.db.keyauth_credentials:select_by_key(key)
  if not credential then
    return nil, err
  end
  if credential.ttl == 0 then
    return nil
  end
  return credential, nil, credential.ttl
end


-- Whether the key is a credential Kong knows without asking a database.
local function known_credential(key)
  local cache_key = kong.db.keyauth_credentials:cache_key(key)
  if kong.configuration.database == "off" then
    local credential = kong.cache:get(cache_key, nil, load_credential, key)
    return credential ~= nil
  end
  local _, _, credential = kong.cache:probe(cache_key)
  return credential ~= nil
end


function AuthGuardHandler:access(conf)
  local now = ngx.time()
  local key, start = window_key(kong.client.get_forwarded_ip(), now)

  -- The log phase counts into the window the request arrived in.
  kong.ctx.plugin.key = key

  local failures = counters:get(key)
  if not failures or failures < conf.limit then
    return
  end

  local api_key = presented_key(conf)
  if api_key and known_credential(api_key) then
    return
  end

  return kong.response.exit(429, TOO_MANY, { ["Retry-After"] = tostring(start + WINDOW - now) })
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
