-- auth-guard: limits failed authentication per client IP, never refusing a partner's valid key.

local kong = kong
local ngx = ngx
local type = type
local tostring = tostring
local floor = math.floor
local time = ngx.time
local start_time = ngx.req.start_time
local get_status = kong.response.get_status
local get_source = kong.response.get_source

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


-- The key as key-auth finds it (kong/plugins/key-auth/handler.lua do_authentication).
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


-- What key-auth's loader returns for a key (load_credential in its handler.lua): the credential, unless it has expired.
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
  local now = time()
  local key, start = window_key(kong.client.get_forwarded_ip(), now)

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


-- Only Kong's own 401s count, into the window the request arrived in; every other answer returns at once.
function AuthGuardHandler:log()
  if get_status() ~= 401 or get_source() ~= "exit" then
    return
  end

  local key = window_key(kong.client.get_forwarded_ip(), floor(start_time()))
  local _, err = counters:incr(key, 1, 0, WINDOW)
  if err then
    kong.log.err("auth-guard: cannot count a failed attempt: ", err)
  end
end


return AuthGuardHandler
