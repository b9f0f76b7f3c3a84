-- Locates the repository and makes the plugin loadable under the module names Kong uses
-- (kong.plugins.job-scopes.handler / .schema), whatever directory busted was started from.
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
M.plugin = M.gateway .. "/plugins/job-scopes"
M.kong_yaml = M.root .. "/kong.yaml"
M.auth_cases = M.spec .. "/auth-cases.json"

function M.read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

-- Fresh copies of the plugin modules (each call re-runs the files, so module-level caches and the
-- groups module they captured belong to the caller's double).
function M.load_plugin_module(name)
  return assert(loadfile(M.plugin .. "/" .. name .. ".lua"))()
end

return M
