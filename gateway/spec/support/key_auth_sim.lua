-- Kong 3.9.1's key-auth access phase (kong/plugins/key-auth/handler.lua), re-stated for the PDK
-- double so that each auth case runs the real chain key-auth -> job-scopes:
--   * for each key name: header (if key_in_header), else query argument (if key_in_query);
--     the first string stops the search; hide_credentials then removes that name from the query
--     (clear_query_arg) and the headers (clear_header) before the key is validated;
--     a table (name sent twice) fails at once as a duplicate, nothing hidden;
--   * no key or "" fails; an unknown key fails; the failure carries WWW-Authenticate "Key" (or
--     'Key realm="<realm>"' when realm is configured), used only when key-auth answers itself;
--   * a failure with `anonymous` set authenticates the anonymous consumer (looked up by id, else by
--     username) with no credential; without `anonymous` key-auth answers itself;
--   * success authenticates consumer + credential and sets the X-Consumer-* /
--     X-Credential-Identifier headers, clearing X-Anonymous-Consumer.
local M = {}

local function set_consumer(kong, consumer, credential)
  kong.client.authenticate(consumer, credential)

  local set_header = kong.service.request.set_header
  local clear_header = kong.service.request.clear_header

  if consumer and consumer.id then
    set_header("X-Consumer-ID", consumer.id)
  else
    clear_header("X-Consumer-ID")
  end
  if consumer and consumer.custom_id then
    set_header("X-Consumer-Custom-ID", consumer.custom_id)
  else
    clear_header("X-Consumer-Custom-ID")
  end
  if consumer and consumer.username then
    set_header("X-Consumer-Username", consumer.username)
  else
    clear_header("X-Consumer-Username")
  end
  if credential and credential.id then
    set_header("X-Credential-Identifier", credential.id)
  else
    clear_header("X-Credential-Identifier")
  end
  if credential then
    clear_header("X-Anonymous-Consumer")
  else
    set_header("X-Anonymous-Consumer", true)
  end
end

local function unauthorized(message, www_auth)
  return { status = 401, message = message, headers = { ["WWW-Authenticate"] = www_auth } }
end

local function authenticate(kong, conf, db)
  local www_auth = conf.realm and ('Key realm="' .. conf.realm .. '"') or "Key"
  local headers = kong.request.get_headers()
  local query = kong.request.get_query()
  local key

  for i = 1, #conf.key_names do
    local name = conf.key_names[i]
    local v
    if conf.key_in_header then
      v = headers[name]
    end
    if not v and conf.key_in_query then
      v = query[name]
    end
    assert(not conf.key_in_body, "key_in_body is not simulated")

    if type(v) == "string" then
      key = v
      if conf.hide_credentials then
        kong.service.request.clear_query_arg(name)
        kong.service.request.clear_header(name)
      end
      break
    elseif type(v) == "table" then
      return nil, unauthorized("Duplicate API key found", www_auth)
    end
  end

  if not key or key == "" then
    return nil, unauthorized("No API key found in request", www_auth)
  end

  -- Through the node's cache, as key-auth does (its handler.lua: cache:get(credential_cache_key,
  -- ..., load_credential, key)); the double's select_by_key reads `db`.
  local credential = kong.cache:get(kong.db.keyauth_credentials:cache_key(key), nil, function(k)
    return kong.db.keyauth_credentials:select_by_key(k)
  end, key)
  if not credential then
    return nil, unauthorized("Unauthorized", www_auth)
  end

  local entry = db.consumers_by_id[credential.consumer.id]
  set_consumer(kong, entry and entry.consumer, credential)
  return true
end

-- db: support.kong_config.load(); conf: key-auth's config from kong.yaml.
function M.access(kong, conf, db)
  if not conf.run_on_preflight and kong.request.get_method() == "OPTIONS" then
    return
  end
  if conf.anonymous and kong.client.get_credential() then
    return
  end

  local ok, err = authenticate(kong, conf, db)
  if ok then
    return
  end

  if conf.anonymous then
    local entry = db.consumers_by_id[conf.anonymous] or db.consumers_by_username[conf.anonymous]
    assert(entry, "anonymous consumer not found: " .. conf.anonymous)
    set_consumer(kong, entry.consumer, nil)
    return
  end

  return kong.response.exit(err.status, { message = err.message }, err.headers)
end

return M
