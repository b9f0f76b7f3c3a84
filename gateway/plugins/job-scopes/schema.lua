-- Configuration schema of the job-scopes plugin (see handler.lua and gateway/README.md).
local typedefs = require "kong.db.schema.typedefs"
local route_schema = require "kong.plugins.job-scopes.route_schema"


return route_schema("job-scopes", {
  { required_scope = {
      description = "The ACL group a consumer needs to use this route.",
      type = "string",
      required = true,
      one_of = { "jobs:read", "jobs:write" },
  }, },
  { gateway_secret = {
      description = "Sent upstream as X-Gateway-Secret on every forwarded request, so the "
                 .. "service can refuse requests that bypassed the gateway. Use a vault "
                 .. "reference such as {vault://env/jobs-gateway-secret}.",
      type = "string",
      required = false,
      referenceable = true,
      encrypted = true,
  }, },
  { key_names = {
      description = "Where clients put their key. Must equal key-auth's key_names: the "
                 .. "plugin repeats key-auth's search to tell a missing key from an unknown "
                 .. "one, and strips every one of these names from the upstream request.",
      type = "array",
      required = true,
      default = { "X-API-Key", "api_key" },
      elements = typedefs.header_name,
      len_min = 1,
  }, },
})
