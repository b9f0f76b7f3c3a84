-- Configuration schema of the auth-guard plugin (see handler.lua and gateway/README.md).
local typedefs = require "kong.db.schema.typedefs"


local PLUGIN_NAME = "auth-guard"


return {
  name = PLUGIN_NAME,
  fields = {
    -- It runs before authentication, when no consumer is known yet.
    { consumer = typedefs.no_consumer },
    { protocols = typedefs.protocols_http },
    { config = {
        type = "record",
        fields = {
          { limit = {
              description = "Failed authentication attempts a client IP may make per clock minute "
                         .. "before every request from it gets 429 until the minute ends.",
              type = "integer",
              required = true,
              default = 10,
              gt = 0,
          }, },
        },
    }, },
  },
}
