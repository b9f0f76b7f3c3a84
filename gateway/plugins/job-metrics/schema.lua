-- Configuration schema of the job-metrics plugin (see handler.lua and gateway/README.md): configured
-- globally, it measures every route; upstream_health_metrics as the bundled prometheus plugin's.
local route_schema = require "kong.plugins.job-scopes.route_schema"


return route_schema("job-metrics", {
  { upstream_health_metrics = {
      description = "Export kong_upstream_target_health: each upstream target's health as Kong's balancer sees it.",
      type = "boolean",
      required = true,
      default = false,
  }, },
})
