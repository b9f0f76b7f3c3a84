-- A small stand-in for the parts of Kong 3.9.1's PDK that auth-guard, key-auth and job-scopes use,
-- built around one request the way nginx holds it: a single list of request headers and the raw
-- query string (ngx.var.args). As in Kong, kong.service.request.* edits that same request and
-- kong.request.get_* reads it back (kong/pdk/request.lua reads ngx.req.get_headers and
-- ngx.req.get_uri_args; kong/pdk/service/request.lua writes ngx.req.clear_header/set_header and,
-- for clear_query_arg, ngx.var.args through resty.ada.search.remove: support/query_string.lua).
local query_string = require "support.query_string"
local shared_dict = require "support.shared_dict"

local M = {}

local lower = string.lower
local floor = math.floor

local function copy(v)
  if type(v) ~= "table" then
    return v
  end
  local out = {}
  for k, x in pairs(v) do
    out[k] = copy(x)
  end
  return out
end

-- ngx.req.get_headers(): lower-cased names, repeated headers as arrays, and a lookup that
-- lower-cases the key and maps "_" to "-" on a miss (lua-resty-core, req_headers_mt).
local HEADERS_MT = {
  __index = function(t, k)
    return rawget(t, (lower(k):gsub("_", "-")))
  end,
}

local EXIT = {}

-- Shared across requests when a spec passes the same node: the clock, the
-- kong_rate_limiting_counters dictionary and the entity cache (kong.cache) of one Kong node,
-- its `database` setting, and how many key lookups reached the database (db_lookups).
function M.node(start, database)
  local clock = { now = start or 1700000000 }
  return {
    clock = clock, counters = shared_dict.new(clock), cache = {}, database = database or "postgres", db_lookups = 0,
  }
end

-- A cached miss (mlcache keeps "not found" too, so a second lookup of the same key is free).
local NEGATIVE = {}

-- kong.db.keyauth_credentials:cache_key(key) (kong/db/dao/init.lua cache_key, no workspace).
local function credential_cache_key(key)
  return "keyauth_credentials:" .. key .. ":::::"
end

-- What kong.conf's db_cache_warmup_entities = keyauth_credentials does when Kong starts
-- (kong/cache/warmup.lua): every credential in the node's cache under its cache key.
function M.warm_credentials(node, credentials_by_key)
  for key, credential in pairs(credentials_by_key) do
    node.cache[credential_cache_key(key)] = credential
  end
end

-- request: { method, path, headers = {name = value|{values}}, query = table, rawQuery = string }
-- opts: { groups_of = fn(consumer_id) -> list, groups_error = string, client_ip = string,
--         node = M.node(), credentials_by_key = { [key] = credential } (the database's) }
function M.new(request, opts)
  opts = opts or {}
  local node = opts.node or M.node()
  local state = {
    method = request.method,
    path = request.path,
    headers = {},            -- list of { name, value }, in the order sent
    args = request.rawQuery or query_string.encode(request.query),
    response_headers = {},
    consumer = nil,
    credential = nil,
    logs = {},
    cleared_query_args = {}, -- names passed to clear_query_arg, in order
    exited = false,          -- ctx.KONG_EXITED: a plugin answered with kong.response.exit
    status = nil,
    client_ip = opts.client_ip or "198.51.100.7",
  }

  local names = {}
  for name in pairs(request.headers or {}) do
    names[#names + 1] = name
  end
  table.sort(names)
  for _, name in ipairs(names) do
    local v = request.headers[name]
    if type(v) == "table" then
      for _, x in ipairs(v) do
        state.headers[#state.headers + 1] = { name = name, value = x }
      end
    else
      state.headers[#state.headers + 1] = { name = name, value = v }
    end
  end

  local function clear_header(name)
    assert(type(name) == "string", "header must be a string")
    local kept = {}
    for _, h in ipairs(state.headers) do
      -- nginx compares header names case-insensitively but literally ("_" is not "-").
      if lower(h.name) ~= lower(name) then
        kept[#kept + 1] = h
      end
    end
    state.headers = kept
  end

  local function log(level)
    return function(...)
      local parts = { level }
      for _, x in ipairs({ ... }) do
        parts[#parts + 1] = tostring(x)
      end
      state.logs[#state.logs + 1] = table.concat(parts, " ")
    end
  end

  local kong = {
    request = {
      get_method = function()
        return state.method
      end,
      get_headers = function()
        local t = {}
        for _, h in ipairs(state.headers) do
          local k = lower(h.name)
          local existing = t[k]
          if existing == nil then
            t[k] = h.value
          elseif type(existing) == "table" then
            existing[#existing + 1] = h.value
          else
            t[k] = { existing, h.value }
          end
        end
        return setmetatable(t, HEADERS_MT)
      end,
      -- A fresh table each call, plus "truncated" past 100 arguments, like get_uri_args.
      get_query = function(max_args)
        return query_string.parse(state.args, max_args)
      end,
      get_body = function()
        error("key_in_body is off: the body must not be read")
      end,
    },
    service = {
      request = {
        clear_header = clear_header,
        set_header = function(name, value)
          assert(type(name) == "string", "header must be a string")
          clear_header(name)
          state.headers[#state.headers + 1] = { name = name, value = tostring(value) }
        end,
        -- kong/pdk/service/request.lua: errors on a non-string name; rewrites a non-empty query.
        clear_query_arg = function(name)
          if type(name) ~= "string" then
            error("query argument name must be a string", 2)
          end
          state.cleared_query_args[#state.cleared_query_args + 1] = name
          if state.args and state.args ~= "" then
            state.args = query_string.remove(state.args, name)
          end
        end,
      },
    },
    client = {
      authenticate = function(consumer, credential)
        state.consumer = consumer
        state.credential = credential
      end,
      get_consumer = function()
        return state.consumer
      end,
      get_credential = function()
        return state.credential
      end,
      -- $remote_addr after the realip module (kong/pdk/client.lua).
      get_forwarded_ip = function()
        return state.client_ip
      end,
    },
    response = {
      set_header = function(name, value)
        state.response_headers[name] = value
      end,
      exit = function(status, body, headers)
        local h = copy(state.response_headers)
        for k, v in pairs(headers or {}) do
          h[k] = v
        end
        state.exited = true
        state.status = status
        error(setmetatable({ status = status, body = copy(body), headers = h }, EXIT), 0)
      end,
      -- kong/pdk/response.lua: "exit" when a plugin answered, "service" when it was proxied.
      get_source = function()
        if state.exited then
          return "exit"
        end
        if state.status then
          return "service"
        end
        return "error"
      end,
      get_status = function()
        return state.status
      end,
    },
    log = { err = log("err"), warn = log("warn"), info = log("info"), debug = log("debug") },
    ctx = { shared = {}, plugin = {} },
    configuration = { database = node.database },
    db = {
      keyauth_credentials = {
        cache_key = function(_, key)
          return credential_cache_key(key)
        end,
        -- A database query with a database; DB-less, a read of Kong's LMDB copy.
        select_by_key = function(_, key)
          if node.database ~= "off" then
            node.db_lookups = node.db_lookups + 1
          end
          return (opts.credentials_by_key or {})[key]
        end,
      },
    },
    -- kong.cache (resty.mlcache): get loads a miss through the callback and caches what it
    -- returns, nil included; probe only reads the cache (ttl, err, value).
    cache = {
      get = function(_, cache_key, _, loader, ...)
        local v = node.cache[cache_key]
        if v == nil then
          local loaded, err = loader(...)
          if err then
            return nil, err
          end
          v = loaded == nil and NEGATIVE or loaded
          node.cache[cache_key] = v
        end
        if v == NEGATIVE then
          return nil
        end
        return v
      end,
      probe = function(_, cache_key)
        local v = node.cache[cache_key]
        if v == nil then
          return nil
        end
        return 0, nil, v ~= NEGATIVE and v or nil
      end,
    },
  }

  -- The ACL plugin's groups module (kong/plugins/acl/groups.lua at 3.9.1): get_consumer_groups
  -- returns an array of group names that is also indexed by name; nil and an error when the
  -- lookup fails; and nil WITHOUT an error when the consumer has no group at all (the cached
  -- EMPTY table is turned into nil before it is returned).
  local groups = {
    get_consumer_groups = function(consumer_id)
      if opts.groups_error then
        return nil, opts.groups_error
      end
      local list = opts.groups_of and opts.groups_of(consumer_id) or {}
      if #list == 0 then
        return nil
      end
      local t = {}
      for i, g in ipairs(list) do
        t[i] = g
        t[g] = g
      end
      return t
    end,
    get_authenticated_groups = function()
      return nil
    end,
  }

  -- The ngx API the plugins use: the cached clock (ngx.time, whole seconds) and the shared
  -- dictionaries Kong declares (kong/templates/nginx_kong.lua).
  local ngx = {
    time = function()
      return floor(node.clock.now)
    end,
    now = function()
      return node.clock.now
    end,
    shared = { kong_rate_limiting_counters = node.counters },
  }

  local double = { kong = kong, groups = groups, ngx = ngx, node = node, state = state }

  -- Runs fn(kong) as one plugin phase: returns nil when the phase ended normally, or the response
  -- when the plugin called kong.response.exit (which ends the request, like ngx.exit).
  function double.run_phase(fn)
    local ok, err = pcall(fn)
    if ok then
      return nil
    end
    if getmetatable(err) == EXIT then
      return err
    end
    error(err, 0)
  end

  -- The request was proxied and the service answered `status` (ctx.KONG_PROXIED).
  function double.proxied(status)
    state.status = status
  end

  -- What the service would receive: one value per header name (nil if absent).
  function double.upstream_header(name)
    local values = {}
    for _, h in ipairs(state.headers) do
      if lower(h.name) == lower(name) then
        values[#values + 1] = h.value
      end
    end
    if #values == 0 then
      return nil
    end
    if #values == 1 then
      return values[1]
    end
    return values
  end

  -- The query the service would receive, decoded the way the service's own parser would see it.
  function double.upstream_query()
    return (query_string.parse(state.args, 1000))
  end

  return double
end

return M
