-- Configuration schema of the job-rate-limits plugin (see handler.lua and gateway/README.md). Set on
-- routes and services (route_schema.lua); limit_by consumer counts each consumer on its own.
local typedefs = require "kong.db.schema.typedefs"
local redis_schema = require "kong.tools.redis.schema"
local route_schema = require "kong.plugins.job-scopes.route_schema"


-- Kong's shared Redis settings (kong/tools/redis/schema.lua), with a host required: no Redis, no count.
local redis_fields = {}
for i, field in ipairs(redis_schema.config_schema.fields) do
  redis_fields[i] = field.host and { host = typedefs.host { required = true } } or field
end


local function window(seconds)
  return {
    description = "Requests allowed per clock " .. seconds .. " (UTC); unset: no such window.",
    type = "integer",
    required = false,
    gt = 0,
  }
end


return route_schema("job-rate-limits", {
  { second = window("second") },
  { minute = window("minute") },
  { hour = window("hour") },
  { limit_by = {
      description = "Whom a count belongs to: the consumer key-auth found (its credential, else "
                 .. "the client IP, as Kong's rate-limiting), or the client IP.",
      type = "string",
      required = true,
      default = "consumer",
      one_of = { "consumer", "ip" },
  }, },
  { error_code = {
      description = "The status of a refused request.",
      type = "integer",
      required = true,
      default = 429,
      between = { 400, 499 },
  }, },
  { error_message = {
      description = "The error of a refused request's body.",
      type = "string",
      required = true,
      default = "Rate limit exceeded",
  }, },
  { sync_rate = {
      description = "Seconds between a worker's first count not yet in Redis and its adding "
                 .. "it there (reading back every node's totals): the longer, the more a partner "
                 .. "can get past a limit across nodes (docs/guides/rate-limits.md).",
      type = "number",
      required = true,
      default = 0.2,
      between = { 0.02, 60 },
  }, },
  { redis = {
      description = "The Redis every Kong node shares its counts in. Unreachable, or slower "
                 .. "than its timeout: each node enforces the limits on its own counts and logs "
                 .. "why once.",
      type = "record",
      required = true,
      fields = redis_fields,
  }, },
}, {
  { at_least_one_of = { "config.second", "config.minute", "config.hour" } },
})
