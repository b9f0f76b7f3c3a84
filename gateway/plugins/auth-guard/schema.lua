-- Configuration schema of the auth-guard plugin (see handler.lua and gateway/README.md).
local typedefs = require "kong.db.schema.typedefs"
local route_schema = require "kong.plugins.job-scopes.route_schema"


return route_schema("auth-guard", {
  { limit = {
      description = "Failed authentication attempts a client IP may make per clock minute "
                 .. "before its requests get 429 until the minute ends, unless they carry "
                 .. "a key Kong's cache holds as a credential.",
      type = "integer",
      required = true,
      default = 10,
      gt = 0,
  }, },
  { key_names = {
      description = "Where the key is looked for, as key-auth's key_names (header, then "
                 .. "query argument, in this order); give key-auth's own list.",
      type = "array",
      required = true,
      default = { "apikey" },
      elements = typedefs.header_name,
      len_min = 1,
  }, },
})
