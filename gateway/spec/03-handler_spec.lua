-- job-scopes beyond the shared table: plugin ordering, failures of Kong's own machinery, and the
-- reason key-auth must leave the key in place (hide_credentials = false).
local chain = require "support.chain"
local kong_config = require "support.kong_config"
local pdk_double = require "support.pdk_double"

local db = kong_config.load({ "kong.yaml", "demo.yaml" })
local env = { JOBS_GATEWAY_SECRET = "spec-gateway-secret" }
local READER = "demo-reader-2f6c1a9e"
local WRITER = "demo-writer-7b3d8e41"
local NO_GROUPS = "demo-no-groups-4e9b2d71"

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
    local outcome, double = chain.run("jobs-read", get({ ["X-API-Key"] = READER }),
                                      { db = db, env = env, groups_error = "db down" })
    assert.equals(500, outcome.status)
    assert.same({ error = "Internal server error" }, outcome.exit.body)
    assert.matches("cannot load the groups", double.state.logs[1], 1, true)
  end)

  it("models Kong's groups module: nil, no error, for a consumer with no group (acl/groups.lua 3.9.1)", function()
    local double = pdk_double.new(get(), { groups_of = function() return {} end })
    local groups, err = double.groups.get_consumer_groups("6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a05")
    assert.is_nil(groups)
    assert.is_nil(err)
    double = pdk_double.new(get(), { groups_of = function() return { "jobs:read" } end })
    groups = double.groups.get_consumer_groups("x")
    assert.same({ "jobs:read", ["jobs:read"] = "jobs:read" }, groups)
  end)

  it("answers a consumer with no group 403 Missing scope, not 500, and logs no error", function()
    local outcome, double = chain.run("jobs-write", { method = "POST", path = "/api/v1/jobs",
                                      headers = { ["X-API-Key"] = NO_GROUPS } }, { db = db, env = env })
    assert.equals(403, outcome.status)
    assert.same({ error = "Missing scope jobs:write", requiredScope = "jobs:write" }, outcome.exit.body)
    assert.same({}, double.state.logs)
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

  it("leaves the query string alone when it carried no key (clear_query_arg would re-encode it)", function()
    local req = get({ ["X-API-Key"] = READER })
    req.rawQuery = "department=Data%20Science&type=contract,full-time"
    local outcome, double = chain.run("jobs-read", req, { db = db, env = env })
    assert.equals(200, outcome.status)
    assert.same({}, double.state.cleared_query_args)
    assert.equals("department=Data%20Science&type=contract,full-time", double.state.args)
  end)

  it("strips every key name from the query even when key-auth found the key in a header", function()
    local outcome, double = chain.run("jobs-read",
      get({ ["X-API-Key"] = READER }, { api_key = WRITER, ["X-API-Key"] = WRITER, page = "1" }),
      { db = db, env = env })
    assert.equals(200, outcome.status)
    assert.same({ page = "1" }, double.upstream_query())
    assert.same({ "X-API-Key", "api_key" }, double.state.cleared_query_args)
  end)

  it("removes keys with clear_query_arg, other arguments kept in order (kong/pdk/service/request.lua)", function()
    local req = get()
    req.rawQuery = "page=2&api_key=" .. READER .. "&status=active&api_key=" .. WRITER .. "&limit=5"
    local outcome, double = chain.run("jobs-read", req, { db = db, env = env })
    -- api_key sent twice is a duplicate: 401, and the keys are gone from the request all the same.
    assert.equals(401, outcome.status)
    assert.equals("page=2&status=active&limit=5", double.state.args)
  end)

  it("strips a key sent after the 100th query argument, which the search cannot see", function()
    local parts = {}
    for i = 1, 100 do
      parts[i] = "f" .. i .. "=x"
    end
    local req = get({ ["X-API-Key"] = READER })
    req.rawQuery = table.concat(parts, "&") .. "&api_key=" .. WRITER
    local outcome, double = chain.run("jobs-read", req, { db = db, env = env })
    assert.equals(200, outcome.status)
    assert.is_nil(double.upstream_query().api_key)
    assert.equals("x", double.upstream_query().f100)
  end)

  it("strips a bare ?api_key (no value) from the forwarded query", function()
    local req = get({ ["X-API-Key"] = READER })
    req.rawQuery = "api_key&page=1"
    local outcome, double = chain.run("jobs-read", req, { db = db, env = env })
    assert.equals(200, outcome.status)
    assert.equals("page=1", double.state.args)
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
    assert.same({}, double.upstream_query())
  end)
end)
