-- job-scopes: turns key-auth's verdict into the API's own answers and enforces the route's scope.

local groups = require "kong.plugins.acl.groups"


local kong = kong
local type = type
local setmetatable = setmetatable
local sort = table.sort
local concat = table.concat
local gsub = string.gsub
local sub = string.sub
local lower = string.lower
local rawget = rawget


-- The challenge of our 401s.
local REALM = 'Key realm="kong"'

local CONSUMER_GROUPS = "X-Consumer-Groups"
local GATEWAY_SECRET = "X-Gateway-Secret"
-- As get_headers() names them.
local CONSUMER_GROUPS_LOWER = "x-consumer-groups"
local GATEWAY_SECRET_LOWER = "x-gateway-secret"

local GROUP_DISABLED = "disabled"
local SCOPE_PREFIX = "jobs:"

-- What the client sent, as key-auth sees it.
local KEY_MISSING = "missing"
local KEY_SENT = "sent"
local KEY_DUPLICATE = "duplicate"

local AUTH_HEADERS = { ["WWW-Authenticate"] = REALM }

local ERR_MISSING = {
  status = 401,
  body = { error = "Missing API key. Pass your key in the X-API-Key header." },
  headers = AUTH_HEADERS,
}
local ERR_INVALID = { status = 401, body = { error = "Invalid API key" }, headers = AUTH_HEADERS }
local ERR_DISABLED = { status = 403, body = { error = "API key disabled" } }
local ERR_INTERNAL = { status = 500, body = { error = "Internal server error" } }

local NO_GROUPS = {}

local scope_errors = {}

-- Per configuration and per cached group list, what every request would otherwise rebuild.
local WEAK_KEYS = { __mode = "k" }
local header_spellings = setmetatable({}, WEAK_KEYS)
local scopes_headers = setmetatable({}, WEAK_KEYS)


local JobScopesHandler = {
  VERSION = "1.0.0",
  PRIORITY = 990,
}


local function scope_error(scope)
  local err = scope_errors[scope]
  if not err then
    err = {
      status = 403,
      body = { error = "Missing scope " .. scope, requiredScope = scope },
    }
    scope_errors[scope] = err
  end

  return err
end


-- key-auth's search, step for step.
local function find_key(key_names, headers, query)
  for i = 1, #key_names do
    local name = key_names[i]
    local v = headers[name]
    if not v then
      v = query[name]
    end

    if type(v) == "string" then
      if v == "" then
        return KEY_MISSING
      end

      return KEY_SENT

    elseif type(v) == "table" then
      return KEY_DUPLICATE
    end
  end

  return KEY_MISSING
end


-- Every header spelling of the key names (as given, "_" as "-", "-" as "_"), lower case as
-- get_headers() names them, built once per configuration.
local function spellings_of(key_names)
  local spellings = header_spellings[key_names]
  if not spellings then
    spellings = {}
    for i = 1, #key_names do
      local name = lower(key_names[i])
      spellings[#spellings + 1] = name
      local dashed = gsub(name, "_", "-")
      if dashed ~= name then
        spellings[#spellings + 1] = dashed
      end
      local underscored = gsub(name, "-", "_")
      if underscored ~= name then
        spellings[#spellings + 1] = underscored
      end
    end
    header_spellings[key_names] = spellings
  end

  return spellings
end


-- Whether the request has this header (rawget: get_headers' table without its "_"-as-"-" lookup);
-- always true when that table was cut short.
local function has_header(headers, truncated, name)
  return truncated or rawget(headers, name) ~= nil
end


-- The key never reaches the service, whatever name or spelling carried it.
local function strip_keys(key_names, headers, headers_truncated, query, query_truncated)
  local request = kong.service.request

  local spellings = spellings_of(key_names)
  for i = 1, #spellings do
    local spelling = spellings[i]
    if has_header(headers, headers_truncated, spelling) then
      request.clear_header(spelling)
    end
  end

  for i = 1, #key_names do
    local name = key_names[i]
    if query_truncated or query[name] ~= nil then
      request.clear_query_arg(name)
    end
  end
end


-- The consumer's jobs:* groups, sorted, in the ACL plugin's header format ("a, b").
local function scopes_header(consumer_groups)
  local header = scopes_headers[consumer_groups]
  if header then
    return header
  end

  local scopes = {}
  for i = 1, #consumer_groups do
    local group = consumer_groups[i]
    if sub(group, 1, #SCOPE_PREFIX) == SCOPE_PREFIX then
      scopes[#scopes + 1] = group
    end
  end

  sort(scopes)
  header = concat(scopes, ", ")
  scopes_headers[consumer_groups] = header
  return header
end


-- Returns the X-Consumer-Groups value for an authorised request, or nil and the error to answer.
local function authorize(conf, key_state)
  local consumer = kong.client.get_consumer()
  local credential = kong.client.get_credential()

  -- key-auth authenticates with a credential; its anonymous fallback sets a consumer without one.
  if not credential or not consumer or not consumer.id then
    if key_state == KEY_MISSING then
      return nil, ERR_MISSING
    end

    return nil, ERR_INVALID
  end

  -- The consumer's own groups, through the ACL plugin's cached loader (invalidated when an ACL changes).
  local consumer_groups, err = groups.get_consumer_groups(consumer.id)
  if err then
    kong.log.err("job-scopes: cannot load the groups of consumer ", consumer.id, ": ", err)
    return nil, ERR_INTERNAL
  end

  -- nil without an error: the consumer belongs to no group, so it has no scope.
  consumer_groups = consumer_groups or NO_GROUPS

  if consumer_groups[GROUP_DISABLED] then
    return nil, ERR_DISABLED
  end

  local scope = conf.required_scope
  if not consumer_groups[scope] then
    return nil, scope_error(scope)
  end

  return scopes_header(consumer_groups)
end


function JobScopesHandler:access(conf)
  local query, query_err = kong.request.get_query()
  local headers, headers_err = kong.request.get_headers()
  local headers_truncated = headers_err == "truncated"
  local key_state = find_key(conf.key_names, headers, query)

  -- Before answering, so a rejected key does not linger in the request either (log serializers read it).
  strip_keys(conf.key_names, headers, headers_truncated, query, query_err == "truncated")

  local request = kong.service.request
  if has_header(headers, headers_truncated, CONSUMER_GROUPS_LOWER) then
    request.clear_header(CONSUMER_GROUPS)
  end
  if has_header(headers, headers_truncated, GATEWAY_SECRET_LOWER) then
    request.clear_header(GATEWAY_SECRET)
  end

  local scopes, err = authorize(conf, key_state)
  if not scopes then
    return kong.response.exit(err.status, err.body, err.headers)
  end

  if scopes ~= "" then
    request.set_header(CONSUMER_GROUPS, scopes)
  end

  local secret = conf.gateway_secret
  if type(secret) == "string" and secret ~= "" then
    request.set_header(GATEWAY_SECRET, secret)
  end
end


return JobScopesHandler
