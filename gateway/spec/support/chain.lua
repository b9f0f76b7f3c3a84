-- Runs one request through a route's auth chain the way Kong 3.9.1 does, on the PDK double:
--   access phase, highest PRIORITY first: auth-guard (1260), key-auth (1250, support/key_auth_sim),
--   job-scopes (990); the first kong.response.exit ends the phase (kong/init.lua,
--   execute_collecting_plugins_iterator: later plugins are collected but not run);
--   otherwise the request is proxied and the service answers `upstream_status` (default 200);
--   log phase: every collected plugin's log handler, exit or not.
-- Returns the outcome and the double (for upstream inspection).
local paths = require "support.paths"
local pdk_double = require "support.pdk_double"
local key_auth = require "support.key_auth_sim"
local kong_config = require "support.kong_config"
local validator = require "support.schema_validator"

package.preload["kong.db.schema.typedefs"] = function()
  return require "support.typedefs_stub"
end

local M = {}

local KEY_AUTH_PRIORITY = 1250 -- kong/plugins/key-auth/handler.lua

-- Loads a plugin's handler against a double: handler.lua captures `kong`, `ngx` and the groups
-- module when it is loaded, exactly as it would inside Kong.
function M.load_plugin(double, plugin)
  local saved_kong, saved_ngx = rawget(_G, "kong"), rawget(_G, "ngx")
  local saved_groups = package.loaded["kong.plugins.acl.groups"]
  _G.kong, _G.ngx = double.kong, double.ngx
  package.loaded["kong.plugins.acl.groups"] = double.groups
  local handler = paths.load_plugin_module(plugin or "job-scopes", "handler")
  package.loaded["kong.plugins.acl.groups"] = saved_groups
  _G.kong, _G.ngx = saved_kong, saved_ngx
  return handler
end

function M.schema(plugin)
  return paths.load_plugin_module(plugin or "job-scopes", "schema")
end

-- A plugin's config from the state files, overridden, checked against its schema (defaults
-- filled in) and with vault references resolved from env.
local function plugin_config(plugin, entry, overrides, env)
  local input = validator.deep_copy(entry.config or {})
  for k, v in pairs(overrides or {}) do
    input[k] = v
  end
  local conf, errs = validator.validate_config(M.schema(plugin), input)
  assert(conf, plugin .. " config rejected by its schema: " .. tostring(errs and next(errs)))
  for k, v in pairs(conf) do
    conf[k] = kong_config.resolve_reference(v, env or {})
  end
  return conf
end

-- Calls handler[phase](conf) as Kong would: with `kong`/`ngx` in place and kong.ctx.plugin being
-- this plugin's own table for the request.
local function call(double, step, phase)
  local saved_kong, saved_ngx = rawget(_G, "kong"), rawget(_G, "ngx")
  _G.kong, _G.ngx = double.kong, double.ngx
  double.kong.ctx.plugin = step.ctx
  local exit = double.run_phase(function()
    return step.handler[phase](step.handler, step.conf)
  end)
  _G.kong, _G.ngx = saved_kong, saved_ngx
  return exit
end

-- opts: { db = kong_config.load(...), env = { JOBS_GATEWAY_SECRET = ... },
--         key_auth / job_scopes / auth_guard = config overrides, groups_error = "...",
--         node = pdk_double.node() (shared clock and counters), client_ip = "...",
--         upstream_status = 200 }
function M.run(route_name, request, opts)
  local db = opts.db
  local entry = assert(db.routes[route_name], "no route named " .. tostring(route_name))
  local double = pdk_double.new(request, {
    groups_error = opts.groups_error,
    groups_of = function(id)
      local c = db.consumers_by_id[id]
      return c and c.groups or {}
    end,
    node = opts.node,
    client_ip = opts.client_ip,
    credentials_by_key = db.credentials_by_key,
  })

  local steps = {}
  local ka = validator.deep_copy(assert(entry.plugins["key-auth"], "key-auth missing").config)
  for k, v in pairs(opts.key_auth or {}) do
    ka[k] = v
  end
  steps[#steps + 1] = {
    name = "key-auth",
    handler = {
      PRIORITY = KEY_AUTH_PRIORITY,
      access = function()
        return key_auth.access(double.kong, ka, db)
      end,
    },
  }
  for _, plugin in ipairs({ "auth-guard", "job-scopes" }) do
    local p = entry.plugins[plugin]
    if p then
      steps[#steps + 1] = {
        name = plugin,
        handler = M.load_plugin(double, plugin),
        conf = plugin_config(plugin, p, opts[(plugin:gsub("-", "_"))], opts.env),
      }
    end
  end
  assert(entry.plugins["job-scopes"], "job-scopes missing on " .. route_name)
  table.sort(steps, function(a, b)
    return a.handler.PRIORITY > b.handler.PRIORITY
  end)

  local outcome = { ran = {} }
  for _, step in ipairs(steps) do
    step.ctx = {}
    if not outcome.exit and step.handler.access then
      outcome.ran[#outcome.ran + 1] = step.name
      outcome.exit = call(double, step, "access")
    end
  end
  local c = double.kong.client.get_consumer()
  outcome.consumer = c and c.username or nil

  if not outcome.exit then
    double.proxied(opts.upstream_status or 200)
  end
  outcome.status = double.state.status

  for _, step in ipairs(steps) do
    if step.handler.log then
      call(double, step, "log")
    end
  end

  return outcome, double
end

return M
