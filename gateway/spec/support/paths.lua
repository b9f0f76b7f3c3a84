-- Locates the repository and the plugins (gateway/plugins/<name>/handler.lua, schema.lua),
-- whatever directory busted was started from.
local M = {}

local function dirname(path)
  return (path:gsub("/[^/]*$", ""))
end

local here = debug.getinfo(1, "S").source:sub(2)
if here:sub(1, 1) ~= "/" then
  local pwd = os.getenv("PWD") or io.popen("pwd"):read("*l")
  here = pwd .. "/" .. here
end

M.support = dirname(here)
M.spec = dirname(M.support)
M.gateway = dirname(M.spec)
M.root = dirname(M.gateway)
M.plugins = M.gateway .. "/plugins"
M.kong_conf = M.gateway .. "/kong/kong.conf"
M.auth_cases = M.spec .. "/auth-cases.json"

function M.read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

-- A fresh copy of a plugin module (each call re-runs the file, so module-level caches and the
-- globals it captured belong to the caller's double). plugin: "job-scopes"; name: "handler".
function M.load_plugin_module(plugin, name)
  return assert(loadfile(M.plugins .. "/" .. plugin .. "/" .. name .. ".lua"))()
end

return M
