-- kong.yaml, read the way Kong would see it after `deck gateway sync`: services, routes with their
-- plugins, consumers with their key-auth credentials and ACL groups.
local lyaml = require "lyaml"
local paths = require "support.paths"

local M = {}

function M.load(path)
  local doc = lyaml.load(paths.read(path or paths.kong_yaml))
  local cfg = { doc = doc, routes = {}, consumers_by_id = {}, consumers_by_username = {},
                credentials_by_key = {} }

  for _, service in ipairs(doc.services or {}) do
    for _, route in ipairs(service.routes or {}) do
      local plugins = {}
      -- Global, then service, then route plugins; for one plugin name the most specific config wins.
      for _, scope in ipairs({ doc.plugins or {}, service.plugins or {}, route.plugins or {} }) do
        for _, p in ipairs(scope) do
          plugins[p.name] = p
        end
      end
      cfg.routes[route.name] = { route = route, service = service, plugins = plugins }
    end
  end

  for _, c in ipairs(doc.consumers or {}) do
    local consumer = { id = c.id, username = c.username, custom_id = c.custom_id }
    local groups = {}
    for _, acl in ipairs(c.acls or {}) do
      groups[#groups + 1] = acl.group
    end
    cfg.consumers_by_id[c.id] = { consumer = consumer, groups = groups, raw = c }
    cfg.consumers_by_username[c.username] = cfg.consumers_by_id[c.id]
    for _, cred in ipairs(c.keyauth_credentials or {}) do
      cfg.credentials_by_key[cred.key] = { id = cred.id, key = cred.key, consumer = { id = c.id } }
    end
  end

  return cfg
end

-- Kong's router, reduced to what kong.yaml uses: method list and "~" regex paths (which Kong
-- anchors at the start of the path). Returns true when `route` would match the request.
function M.route_matches(route, method, path)
  local method_ok = false
  for _, m in ipairs(route.methods or {}) do
    if m == method then
      method_ok = true
    end
  end
  if not method_ok then
    return false
  end
  for _, p in ipairs(route.paths or {}) do
    assert(p:sub(1, 1) == "~", "only regex paths are used in kong.yaml: " .. p)
    local pattern = "^" .. p:sub(2)
    assert(not pattern:find("[%(%)%%%.%*%-]"), "regex too rich for the Lua translation: " .. p)
    if path:find(pattern) then
      return true
    end
  end
  return false
end

-- Kong's env vault: {vault://env/jobs-gateway-secret} reads JOBS_GATEWAY_SECRET (upper case,
-- dashes turned into underscores).
function M.resolve_reference(value, env)
  if type(value) ~= "string" then
    return value
  end
  local name = value:match("^{vault://env/([^/}]+)}$")
  if not name then
    return value
  end
  return env[(name:upper():gsub("-", "_"))]
end

return M
