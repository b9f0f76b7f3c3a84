-- A small stand-in for the parts of Kong's PDK that key-auth and job-scopes use, built around one
-- request the way nginx holds it: a single list of request headers and a single table of query
-- arguments. As in Kong, kong.service.request.* edits that same request, and kong.request.get_*
-- reads it back (kong/pdk/request.lua reads ngx.req.get_headers/get_uri_args;
-- kong/pdk/service/request.lua writes ngx.req.clear_header/set_header/set_uri_args).
local M = {}

local lower = string.lower

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

function M.new(request, opts)
  opts = opts or {}
  local state = {
    method = request.method,
    path = request.path,
    headers = {},            -- list of { name, value }, in the order sent
    query = copy(request.query or {}),
    response_headers = {},
    consumer = nil,
    credential = nil,
    logs = {},
    set_query_calls = 0,
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
      get_query = function()
        return copy(state.query)
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
        set_query = function(args)
          assert(type(args) == "table", "args must be a table")
          state.set_query_calls = state.set_query_calls + 1
          state.query = copy(args)
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
        error(setmetatable({ status = status, body = copy(body), headers = h }, EXIT), 0)
      end,
    },
    log = { err = log("err"), warn = log("warn"), info = log("info"), debug = log("debug") },
    ctx = { shared = {} },
  }

  -- The ACL plugin's groups module (kong/plugins/acl/groups.lua): get_consumer_groups returns an
  -- array of group names that is also indexed by name, or nil and an error.
  local groups = {
    get_consumer_groups = function(consumer_id)
      if opts.groups_error then
        return nil, opts.groups_error
      end
      local list = opts.groups_of and opts.groups_of(consumer_id) or {}
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

  local double = { kong = kong, groups = groups, state = state }

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

  -- What the service would receive: one value per header name (nil if absent), the query table.
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

  return double
end

return M
