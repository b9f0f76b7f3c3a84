-- job-scopes beyond the shared table: plugin ordering, failures of Kong's own machinery, and the
-- reason key-auth must leave the key in place (hide_credentials = false).
local chain = require "support.chain"
local kong_config = require "support.kong_config"
local pdk_double = require "support.pdk_double"

local db = kong_config.load()
local env = { JOBS_GATEWAY_SECRET = "spec-gateway-secret" }
local READER = "demo-reader-2f6c1a9e"
local WRITER = "demo-writer-7b3d8e41"

local function get(headers, query)
  return { method = "GET", path = "/api/v1/jobs", headers = headers or {}, query = query or {} }
end

describe("job-scopes handler", function()
  local handler = chain.load_plugin(pdk_double.new(get()))

  it("runs after key-auth (1250), before request-size-limiting (951) and rate-limiting (910)", function()
    assert.is_number(handler.PRIORITY)
    assert.is_true(handler.PRIORITY < 1250)
    assert.is_true(handler.PRIORITY > 951)
    assert.is_true(handler.PRIORITY > 910)
    assert.is_string(handler.VERSION)
    assert.is_function(handler.access)
  end)

  it("answers 500 in the API's shape when the groups cannot be loaded", function()
    local outcome = chain.run("jobs-read", get({ ["X-API-Key"] = READER }),
                              { db = db, env = env, groups_error = "db down" })
    assert.equals(500, outcome.status)
    assert.same({ error = "Internal server error" }, outcome.exit.body)
  end)

  it("sends no X-Gateway-Secret, and drops the client's, when no secret is configured", function()
    local outcome, double = chain.run("jobs-read", get({ ["X-API-Key"] = READER, ["X-Gateway-Secret"] = "forged" }),
                                      { db = db, env = {} })
    assert.equals(200, outcome.status)
    assert.is_nil(double.upstream_header("X-Gateway-Secret"))
    assert.equals("jobs:read", double.upstream_header("X-Consumer-Groups"))
  end)

  it("forwards only jobs:* groups, sorted, in the ACL plugin's format", function()
    local entry = db.consumers_by_username["demo-writer"]
    local saved = entry.groups
    entry.groups = { "partners", "jobs:write", "jobs:read" }
    local outcome, double = chain.run("jobs-write", { method = "POST", path = "/api/v1/jobs",
                                      headers = { ["X-API-Key"] = WRITER } }, { db = db, env = env })
    entry.groups = saved
    assert.equals(200, outcome.status)
    assert.equals("jobs:read, jobs:write", double.upstream_header("X-Consumer-Groups"))
  end)

  it("leaves the query string alone when it carried no key", function()
    local outcome, double = chain.run("jobs-read", get({ ["X-API-Key"] = READER }, { status = "active" }),
                                      { db = db, env = env })
    assert.equals(200, outcome.status)
    assert.equals(0, double.state.set_query_calls)
  end)

  it("strips every key name from the query even when key-auth found the key in a header", function()
    local outcome, double = chain.run("jobs-read",
      get({ ["X-API-Key"] = READER }, { api_key = WRITER, ["X-API-Key"] = WRITER, page = "1" }),
      { db = db, env = env })
    assert.equals(200, outcome.status)
    assert.same({ page = "1" }, double.state.query)
  end)

  it("treats a bare ?api_key (no value) as no key, like key-auth", function()
    local outcome = chain.run("jobs-read", get({}, { api_key = true }), { db = db, env = env })
    assert.equals(401, outcome.status)
    assert.equals("Missing API key. Pass your key in the X-API-Key header.", outcome.exit.body.error)
  end)

  it("needs key-auth's hide_credentials off: with it on, an unknown key would read as a missing one", function()
    -- The reason kong.yaml sets hide_credentials: false (see handler.lua). If someone turns it on,
    -- this documents the visible effect; the kong.yaml jest test keeps it off.
    local outcome = chain.run("jobs-read", get({ ["X-API-Key"] = "demo-unknown" }),
                              { db = db, env = env, key_auth = { hide_credentials = true } })
    assert.equals(401, outcome.status)
    assert.equals("Missing API key. Pass your key in the X-API-Key header.", outcome.exit.body.error)

    outcome = chain.run("jobs-read", get({ ["X-API-Key"] = "demo-unknown" }), { db = db, env = env })
    assert.equals("Invalid API key", outcome.exit.body.error)
  end)

  it("still strips the key when key-auth already hid it", function()
    local outcome, double = chain.run("jobs-read", get({ ["X-API-Key"] = READER }, { api_key = WRITER }),
                                      { db = db, env = env, key_auth = { hide_credentials = true } })
    assert.equals(200, outcome.status)
    assert.is_nil(double.upstream_header("X-API-Key"))
    assert.same({}, double.state.query)
  end)
end)
