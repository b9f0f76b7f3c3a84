-- Runs one request through a kong.yaml route's auth chain: key-auth, then job-scopes, with the PDK
-- double standing in for Kong. Returns the outcome and the double (for upstream inspection).
local paths = require "support.paths"
local pdk_double = require "support.pdk_double"
local key_auth = require "support.key_auth_sim"
local kong_config = require "support.kong_config"
local validator = require "support.schema_validator"

package.preload["kong.db.schema.typedefs"] = function()
  return require "support.typedefs_stub"
end

local M = {}

-- Loads the plugin against a double: handler.lua captures `kong` and the groups module when it is
-- loaded, exactly as it would inside Kong.
function M.load_plugin(double)
  local saved_kong = rawget(_G, "kong")
  local saved_groups = package.loaded["kong.plugins.acl.groups"]
  _G.kong = double.kong
  package.loaded["kong.plugins.acl.groups"] = double.groups
  local handler = paths.load_plugin_module("handler")
  package.loaded["kong.plugins.acl.groups"] = saved_groups
  _G.kong = saved_kong
  return handler
end

function M.schema()
  return paths.load_plugin_module("schema")
end

-- opts: { db = kong_config, env = { JOBS_GATEWAY_SECRET = ... }, key_auth = overrides,
--         job_scopes = overrides, groups_error = "..." }
function M.run(route_name, request, opts)
  local db = opts.db
  local entry = assert(db.routes[route_name], "no route named " .. tostring(route_name))
  local double = pdk_double.new(request, {
    groups_error = opts.groups_error,
    groups_of = function(id)
      local c = db.consumers_by_id[id]
      return c and c.groups or {}
    end,
  })

  local ka = validator.deep_copy(assert(entry.plugins["key-auth"], "key-auth missing").config)
  for k, v in pairs(opts.key_auth or {}) do
    ka[k] = v
  end

  local js_plugin = assert(entry.plugins["job-scopes"], "job-scopes missing on " .. route_name)
  local js_input = validator.deep_copy(js_plugin.config or {})
  for k, v in pairs(opts.job_scopes or {}) do
    js_input[k] = v
  end
  local js_conf, errs = validator.validate_config(M.schema(), js_input)
  assert(js_conf, "job-scopes config rejected by its schema: " .. tostring(errs and next(errs)))
  js_conf.gateway_secret = kong_config.resolve_reference(js_conf.gateway_secret, opts.env or {})

  local handler = M.load_plugin(double)
  local outcome = {}

  outcome.exit = double.run_phase(function()
    return key_auth.access(double.kong, ka, db)
  end)
  local c = double.kong.client.get_consumer()
  outcome.consumer = c and c.username or nil

  if not outcome.exit then
    local saved = rawget(_G, "kong")
    _G.kong = double.kong
    outcome.exit = double.run_phase(function()
      return handler:access(js_conf)
    end)
    _G.kong = saved
  end

  outcome.status = outcome.exit and outcome.exit.status or 200
  return outcome, double
end

return M
