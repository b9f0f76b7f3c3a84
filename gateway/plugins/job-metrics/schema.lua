-- Configuration schema of the job-metrics plugin (see handler.lua and gateway/README.md): nothing
-- to set; configured globally, it measures every route.
local route_schema = require "kong.plugins.job-scopes.route_schema"


return route_schema("job-metrics", {})
