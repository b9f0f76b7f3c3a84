-- The state files, read the way Kong would see them after a `deck gateway sync` of each one:
-- services, routes with their plugins, consumers with their key-auth credentials and ACL groups.
-- decK templates (${{ env "DECK_..." }}) stay as text: nothing here reads a partner key.
local lyaml = require "lyaml"
local paths = require "support.paths"

local M = {}

-- files: paths relative to the repository root (default: kong.yaml alone).
function M.load(files)
  files = files or { "kong.yaml" }
  local cfg = { docs = {}, routes = {}, consumers_by_id = {}, consumers_by_username = {},
                credentials_by_key = {}, plugins = {}, services = {} }

  for _, file in ipairs(files) do
    local doc = lyaml.load(paths.read(paths.root .. "/" .. file))
    cfg.docs[file] = doc
    for _, p in ipairs(doc.plugins or {}) do
      cfg.plugins[#cfg.plugins + 1] = p
    end
    for _, service in ipairs(doc.services or {}) do
      cfg.services[#cfg.services + 1] = service
    end
    for _, c in ipairs(doc.consumers or {}) do
      local consumer = { id = c.id, username = c.username, custom_id = c.custom_id }
      local groups = {}
      for _, acl in ipairs(c.acls or {}) do
        groups[#groups + 1] = acl.group
      end
      assert(not cfg.consumers_by_id[c.id], "consumer id used twice: " .. tostring(c.id))
      cfg.consumers_by_id[c.id] = { consumer = consumer, groups = groups, raw = c, file = file }
      cfg.consumers_by_username[c.username] = cfg.consumers_by_id[c.id]
      for _, cred in ipairs(c.keyauth_credentials or {}) do
        cfg.credentials_by_key[cred.key] = { id = cred.id, key = cred.key, consumer = { id = c.id } }
      end
    end
  end

  for _, service in ipairs(cfg.services) do
    for _, route in ipairs(service.routes or {}) do
      local plugins = {}
      -- Global, then service, then route plugins; for one plugin name the most specific config wins.
      for _, scope in ipairs({ cfg.plugins, service.plugins or {}, route.plugins or {} }) do
        for _, p in ipairs(scope) do
          plugins[p.name] = p
        end
      end
      cfg.routes[route.name] = { route = route, service = service, plugins = plugins }
    end
  end

  return cfg
end

-- Kong's router, reduced to what kong.yaml uses: an optional method list and "~" regex paths
-- (which Kong anchors at the start of the path). Returns true when `route` would match the request.
function M.route_matches(route, method, path)
  if route.methods then
    local method_ok = false
    for _, m in ipairs(route.methods) do
      if m == method then
        method_ok = true
      end
    end
    if not method_ok then
      return false
    end
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

-- The route Kong picks: of the matching routes, the one with the highest priority. Kong 3.9's
-- default router (router_flavor = traditional_compatible, kong/templates/kong_defaults.lua)
-- ranks routes by kong/router/transform.lua get_priority, whose top bits count the match fields
-- a route sets (methods, paths, hosts, headers, ...): a route with methods and paths outranks one
-- with paths alone, whatever the order they were created in.
function M.match(cfg, method, path)
  local best, best_weight
  for name, entry in pairs(cfg.routes) do
    local r = entry.route
    if M.route_matches(r, method, path) then
      local weight = 0
      for _, field in ipairs({ "methods", "paths", "hosts", "headers", "snis", "sources", "destinations" }) do
        if r[field] and next(r[field]) ~= nil then
          weight = weight + 1
        end
      end
      assert(weight ~= best_weight, "two routes of equal priority match " .. method .. " " .. path)
      if not best_weight or weight > best_weight then
        best, best_weight = name, weight
      end
    end
  end
  return best
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
