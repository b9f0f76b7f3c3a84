-- auth-guard: its schema, its place before key-auth, and what it counts, through the whole chain
-- auth-guard -> key-auth -> job-scopes (-> log phase) on one simulated Kong node.
local chain = require "support.chain"
local kong_config = require "support.kong_config"
local pdk_double = require "support.pdk_double"
local validator = require "support.schema_validator"

local db = kong_config.load({ "kong.yaml", "demo.yaml" })
local env = { JOBS_GATEWAY_SECRET = "spec-gateway-secret" }
local schema = chain.schema("auth-guard")

local READER = "demo-reader-2f6c1a9e"
local WRITER = "demo-writer-7b3d8e41"
local DISABLED = "demo-disabled-5a0b6d23"
local TOO_MANY = { error = "Too many failed authentication attempts" }
local MINUTE = 1700000040 -- a clock minute's first second (1700000040 % 60 == 0)

local function get(headers, path)
  return { method = "GET", path = path or "/api/v1/jobs", headers = headers or {} }
end

local function post(headers)
  return { method = "POST", path = "/api/v1/jobs", headers = headers or {} }
end

-- One Kong node and one client; send(route, request) runs it at the node's current time.
local function client(node, ip, overrides)
  return function(route, request, extra)
    local opts = { db = db, env = env, node = node, client_ip = ip or "203.0.113.9", auth_guard = overrides }
    for k, v in pairs(extra or {}) do
      opts[k] = v
    end
    return chain.run(route, request, opts)
  end
end

local function fail_times(send, n)
  for _ = 1, n do
    local outcome = send("jobs-read", get())
    assert.equals(401, outcome.status)
  end
end

describe("auth-guard schema", function()
  local config
  for _, f in ipairs(schema.fields) do
    if f.config then
      config = f.config
    end
  end

  it("is named auth-guard, cannot be put on a consumer, and has only `limit`", function()
    assert.equals("auth-guard", schema.name)
    assert.same({ type = "foreign", reference = "consumers", eq = "null" }, schema.fields[1].consumer)
    assert.equals(1, #config.fields)
    local limit = config.fields[1].limit
    assert.is_string(limit.description)
    assert.equals("integer", limit.type)
    assert.is_true(limit.required)
    assert.equals(10, limit.default)
  end)

  it("defaults limit to 10 and accepts only whole numbers from 1", function()
    assert.same({ limit = 10 }, validator.validate_config(schema, {}))
    assert.same({ limit = 1 }, validator.validate_config(schema, { limit = 1 }))
    assert.is_nil(validator.validate_config(schema, { limit = 0 }))
    assert.is_nil(validator.validate_config(schema, { limit = -3 }))
    assert.is_nil(validator.validate_config(schema, { limit = 2.5 }))
    assert.is_nil(validator.validate_config(schema, { limit = "10" }))
    local ok, errs = validator.validate_config(schema, { limit = 5, window = 30 })
    assert.is_nil(ok)
    assert.equals("unknown field", errs["config.window"])
  end)

  it("is configured on jobs-service in kong.yaml, so it guards every route of it", function()
    for name, entry in pairs(db.routes) do
      if entry.service.name == "jobs-service" then -- not the keyless docs service
        local p = entry.plugins["auth-guard"]
        assert.is_table(p, name)
        assert.is_truthy(validator.validate_config(schema, p.config), name)
      end
    end
    local on_service = false
    for _, p in ipairs(db.services[1].plugins) do
      on_service = on_service or p.name == "auth-guard"
    end
    assert.is_true(on_service)
  end)
end)

describe("auth-guard handler", function()
  local handler = chain.load_plugin(pdk_double.new(get()), "auth-guard")

  it("runs before key-auth (1250) and job-scopes (990)", function()
    assert.equals(1260, handler.PRIORITY)
    assert.is_string(handler.VERSION)
    assert.is_function(handler.access)
    assert.is_function(handler.log)
  end)

  it("answers the request after 10 failed attempts in a minute with 429 + Retry-After, before key-auth", function()
    local node = pdk_double.node(MINUTE + 5)
    local send = client(node)
    fail_times(send, 10)

    local outcome, double = send("jobs-read", get({ ["X-API-Key"] = READER }))
    assert.equals(429, outcome.status)
    assert.same(TOO_MANY, outcome.exit.body)
    assert.equals("55", outcome.exit.headers["Retry-After"])
    assert.is_nil(outcome.exit.headers["WWW-Authenticate"])
    assert.same({ "auth-guard" }, outcome.ran)
    assert.is_nil(outcome.consumer)
    assert.is_nil(double.kong.client.get_credential())
  end)

  it("lets a valid key through after 9 failed attempts, and does not count it", function()
    local node = pdk_double.node(MINUTE)
    local send = client(node)
    fail_times(send, 9)
    assert.equals(200, send("jobs-read", get({ ["X-API-Key"] = READER })).status)
    assert.equals(200, send("jobs-read", get({ ["X-API-Key"] = READER })).status)
    assert.equals(401, send("jobs-read", get()).status)
    assert.equals(429, send("jobs-read", get({ ["X-API-Key"] = READER })).status)
  end)

  it("counts missing, unknown and duplicate keys, on every route", function()
    local node = pdk_double.node(MINUTE)
    local send = client(node, nil, { limit = 3 })
    assert.equals(401, send("jobs-read", get()).status)
    assert.equals(401, send("jobs-write", post({ ["X-API-Key"] = "demo-unknown-00000000" })).status)
    assert.equals(401, send("jobs-other-methods", { method = "DELETE", path = "/api/v1/jobs/x",
                                                     headers = { ["X-API-Key"] = { READER, WRITER } } }).status)
    local outcome = send("jobs-write", post({ ["X-API-Key"] = WRITER }))
    assert.equals(429, outcome.status)
  end)

  it("does not count 403s, forwarded requests, or a 401 the service answered", function()
    local node = pdk_double.node(MINUTE)
    local send = client(node, nil, { limit = 1 })
    assert.equals(403, send("jobs-read", get({ ["X-API-Key"] = DISABLED })).status)
    assert.equals(403, send("jobs-write", post({ ["X-API-Key"] = READER })).status)
    assert.equals(403, send("jobs-read", get({ ["X-API-Key"] = "demo-no-groups-4e9b2d71" })).status)
    assert.equals(200, send("jobs-read", get({ ["X-API-Key"] = READER })).status)
    local proxied = send("jobs-read", get({ ["X-API-Key"] = READER }), { upstream_status = 401 })
    assert.equals(401, proxied.status)
    assert.equals(200, send("jobs-read", get({ ["X-API-Key"] = READER })).status)
  end)

  it("does not count its own 429s: the block ends with the minute", function()
    local node = pdk_double.node(MINUTE + 30)
    local send = client(node, nil, { limit = 2 })
    fail_times(send, 2)
    for _ = 1, 5 do
      assert.equals(429, send("jobs-read", get()).status)
    end
    node.clock.now = MINUTE + 59.5
    local last = send("jobs-read", get({ ["X-API-Key"] = READER }))
    assert.equals("1", last.exit.headers["Retry-After"])
    node.clock.now = MINUTE + 60
    assert.equals(200, send("jobs-read", get({ ["X-API-Key"] = READER })).status)
  end)

  it("counts per clock minute: failures late in one minute do not block the next", function()
    local node = pdk_double.node(MINUTE + 50)
    local send = client(node, nil, { limit = 2 })
    fail_times(send, 1)
    node.clock.now = MINUTE + 61
    fail_times(send, 1)
    assert.equals(200, send("jobs-read", get({ ["X-API-Key"] = READER })).status)
  end)

  it("counts per client IP", function()
    local node = pdk_double.node(MINUTE)
    local attacker = client(node, "203.0.113.66", { limit = 2 })
    local partner = client(node, "198.51.100.20", { limit = 2 })
    fail_times(attacker, 2)
    assert.equals(429, attacker("jobs-read", get({ ["X-API-Key"] = READER })).status)
    assert.equals(200, partner("jobs-read", get({ ["X-API-Key"] = READER })).status)
  end)

  it("counts per node (N nodes allow N x limit), in kong_rate_limiting_counters under auth-guard:", function()
    local node_a, node_b = pdk_double.node(MINUTE), pdk_double.node(MINUTE)
    fail_times(client(node_a, nil, { limit = 2 }), 2)
    assert.equals(429, client(node_a, nil, { limit = 2 })("jobs-read", get()).status)
    assert.equals(401, client(node_b, nil, { limit = 2 })("jobs-read", get()).status)

    local key = "auth-guard:203.0.113.9:" .. MINUTE
    assert.equals(2, node_a.counters:get(key))
    assert.equals(60, node_a.counters:ttl(key))
    assert.equals(1, node_b.counters:get(key))
  end)

  it("leaves the request untouched when it answers 429 (nothing is forwarded)", function()
    local node = pdk_double.node(MINUTE)
    local send = client(node, nil, { limit = 1 })
    fail_times(send, 1)
    local outcome, double = send("jobs-read", get({ ["X-API-Key"] = READER, ["X-Consumer-ID"] = "forged" }))
    assert.equals(429, outcome.status)
    assert.equals("forged", double.upstream_header("X-Consumer-ID"))
    assert.same({ "auth-guard" }, outcome.ran)
  end)
end)
