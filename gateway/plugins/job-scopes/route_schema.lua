-- The shape both of our plugins' schemas share (job-scopes and auth-guard: their schema.lua).
local typedefs = require "kong.db.schema.typedefs"


-- A plugin set on services and routes, never on a consumer, for HTTP only, with these settings.
return function(name, config_fields)
  return {
    name = name,
    fields = {
      { consumer = typedefs.no_consumer },
      { protocols = typedefs.protocols_http },
      { config = {
          type = "record",
          fields = config_fields,
      }, },
    },
  }
end
