-- job-scopes: turns key-auth's verdict into the API's own answers and enforces the route's scope
-- (the consumer's ACL groups, read as Kong's acl plugin reads them: kong/plugins/acl/handler.lua).

local groups = require "kong.plugins.acl.groups"


local kong = kong
local type = type
local ipairs = ipairs
local setmetatable = setmetatable
local sort = table.sort
local concat = table.concat
local gsub = string.gsub
local sub = string.sub
local lower = string.lower
local rawget = rawget


local AUTH_HEADERS = { ["WWW-Authenticate"] = 'Key realm="kong"' }
local ERR_MISSING = { error = "Missing API key. Pass your key in the X-API-Key header." }
local ERR_INVALID = { error = "Invalid API key" }

-- Built once per configuration and per cached group list; weak keys drop replaced ones.
local WEAK_KEYS = { __mode = "k" }
local spellings_of_names = setmetatable({}, WEAK_KEYS)
local scopes_of_groups = setmetatable({}, WEAK_KEYS)


local JobScopesHandler = {
  VERSION = "1.1.0",
  PRIORITY = 990,
}


-- Whether the client sent a key at all, searched as key-auth searches (a header, then the query;
-- an empty value is no key, a repeated one is an invalid key).
local function key_sent(key_names, headers, query)
  for i = 1, #key_names do
    local name = key_names[i]
    local v = headers[name] or query[name]
    if type(v) == "table" or type(v) == "string" then
      return v ~= ""
    end
  end
  return false
end


-- The identity headers and every spelling of the key names ("_" as "-" and back), as get_headers() names them.
local function spellings(key_names)
  local list = spellings_of_names[key_names]
  if not list then
    list = { "x-consumer-groups", "x-gateway-secret" }
    local seen = {}
    for i = 1, #key_names do
      local name = lower(key_names[i])
      for _, spelling in ipairs({ name, (gsub(name, "_", "-")), (gsub(name, "-", "_")) }) do
        if not seen[spelling] then
          seen[spelling] = true
          list[#list + 1] = spelling
        end
      end
    end
    spellings_of_names[key_names] = list
  end
  return list
end


-- The key never reaches the service, whatever name or spelling carried it, nor do identity headers
-- the client made up. Only what the request has is cleared (rawget: without get_headers' "_"-as-"-"
-- lookup), everything when get_headers cut its list short; clear_query_arg re-encodes the query.
local function strip(key_names, headers, headers_cut, query, query_cut)
  local request = kong.service.request
  local list = spellings(key_names)
  for i = 1, #list do
    if headers_cut or rawget(headers, list[i]) ~= nil then
      request.clear_header(list[i])
    end
  end
  for i = 1, #key_names do
    if query_cut or query[key_names[i]] ~= nil then
      request.clear_query_arg(key_names[i])
    end
  end
end


-- The consumer's jobs:* groups, sorted, in the acl plugin's header format ("a, b").
local function scopes_header(consumer_groups)
  local header = scopes_of_groups[consumer_groups]
  if not header then
    local scopes = {}
    for i = 1, #consumer_groups do
      if sub(consumer_groups[i], 1, 5) == "jobs:" then
        scopes[#scopes + 1] = consumer_groups[i]
      end
    end
    sort(scopes)
    header = concat(scopes, ", ")
    scopes_of_groups[consumer_groups] = header
  end
  return header
end


function JobScopesHandler:access(conf)
  local query, query_err = kong.request.get_query()
  local headers, headers_err = kong.request.get_headers()
  local sent = key_sent(conf.key_names, headers, query)
  -- Before answering, so a rejected key does not linger in the request either (log serializers read it).
  strip(conf.key_names, headers, headers_err == "truncated", query, query_err == "truncated")

  -- key-auth authenticates with a credential; its anonymous fallback sets a consumer without one.
  local consumer = kong.client.get_consumer()
  if not kong.client.get_credential() or not consumer or not consumer.id then
    return kong.response.exit(401, sent and ERR_INVALID or ERR_MISSING, AUTH_HEADERS)
  end

  -- Through the acl plugin's cached loader (invalidated when an ACL changes); nil: no group at all.
  local consumer_groups, err = groups.get_consumer_groups(consumer.id)
  if err then
    kong.log.err("cannot load the groups of consumer ", consumer.id, ": ", err)
    return kong.response.exit(500, { error = "Internal server error" })
  end
  consumer_groups = consumer_groups or {}
  if consumer_groups.disabled then
    return kong.response.exit(403, { error = "API key disabled" })
  end
  local scope = conf.required_scope
  if not consumer_groups[scope] then
    return kong.response.exit(403, { error = "Missing scope " .. scope, requiredScope = scope })
  end

  local request = kong.service.request
  local scopes = scopes_header(consumer_groups)
  if scopes ~= "" then
    request.set_header("X-Consumer-Groups", scopes)
  end
  -- Unset (or null) when its vault reference did not resolve.
  local secret = conf.gateway_secret
  if type(secret) == "string" and secret ~= "" then
    request.set_header("X-Gateway-Secret", secret)
  end
end


return JobScopesHandler
