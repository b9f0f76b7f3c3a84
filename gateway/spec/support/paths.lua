-- Locates the repository's gateway/ folder (the log filter the spec loads), whatever directory
-- busted was started from.
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

return M
