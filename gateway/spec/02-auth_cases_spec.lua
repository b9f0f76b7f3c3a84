-- Every row of auth-cases.json through auth-guard -> key-auth -> job-scopes, with the real
-- configuration of the state files the table names.
local json = require "dkjson"
local paths = require "support.paths"
local chain = require "support.chain"
local kong_config = require "support.kong_config"
local pdk_double = require "support.pdk_double"
local query_string = require "support.query_string"

local cases_doc = assert(json.decode(paths.read(paths.auth_cases), 1, json.null))
local db = kong_config.load(cases_doc.stateFiles)
local env = { JOBS_GATEWAY_SECRET = cases_doc.gatewaySecret }

local KEYS = { consumer = true, expect = true, name = true, request = true, route = true }
local OPTIONAL_KEYS = { failedAttemptsBefore = true }

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t or {}) do
    keys[#keys + 1] = k
  end
  table.sort(keys)
  return keys
end

local function nullable(v)
  if v == json.null then
    return nil
  end
  return v
end

describe("auth-cases.json", function()
  it("is a non-empty table of uniquely named cases with the agreed keys", function()
    assert.equals("spec-gateway-secret", cases_doc.gatewaySecret)
    assert.same({ "kong.yaml", "demo.yaml" }, cases_doc.stateFiles)
    assert.is_true(#cases_doc.cases >= 40)
    local seen = {}
    for _, c in ipairs(cases_doc.cases) do
      assert.is_nil(seen[c.name], "duplicate case name: " .. tostring(c.name))
      seen[c.name] = true
      for _, k in ipairs(sorted_keys(c)) do
        assert.is_true(KEYS[k] or OPTIONAL_KEYS[k], c.name .. ": unknown key " .. k)
      end
      for k in pairs(KEYS) do
        assert.is_not_nil(c[k], c.name .. ": missing key " .. k)
      end
      assert.is_truthy(db.routes[c.route], "unknown route " .. tostring(c.route))
      if c.expect.status == 200 then
        assert.is_table(c.expect.upstream, c.name)
        assert.is_nil(c.expect.body, c.name)
      else
        assert.is_table(c.expect.body, c.name)
        assert.is_nil(c.expect.upstream, c.name)
      end
      if c.request.rawQuery then
        assert.same(query_string.parse(c.request.rawQuery), c.request.query,
                    c.name .. ": query is not rawQuery decoded")
      end
    end
  end)

  it("covers every route with each answer", function()
    local seen = {}
    for _, c in ipairs(cases_doc.cases) do
      local key = c.route .. " " .. c.expect.status .. " " .. (c.expect.body and c.expect.body.error or "")
      seen[key] = true
    end
    local missing = "Missing API key. Pass your key in the X-API-Key header."
    for _, route in ipairs({ "jobs-read", "jobs-write", "jobs-other-methods" }) do
      assert.is_true(seen[route .. " 401 " .. missing], route .. " missing key")
      assert.is_true(seen[route .. " 401 Invalid API key"], route .. " invalid key")
      assert.is_true(seen[route .. " 403 API key disabled"], route .. " disabled key")
      assert.is_true(seen[route .. " 429 Too many failed authentication attempts"], route .. " auth-guard")
      assert.is_true(seen[route .. " 200 "], route .. " forwarded")
    end
    assert.is_true(seen["jobs-write 403 Missing scope jobs:write"])
    assert.is_true(seen["jobs-read 403 Missing scope jobs:read"])
  end)

  for _, case in ipairs(cases_doc.cases) do
    it(case.name, function()
      local req = case.request
      assert.equals(case.route, kong_config.match(db, req.method, req.path),
        req.method .. " " .. req.path .. " is not routed to " .. case.route .. " by the state files")

      -- One Kong node, 5 s into a clock minute, one client IP for the whole case.
      -- Every credential cached, as kong.conf's db_cache_warmup_entities loads them at start.
      local node = pdk_double.node(1700000040 + 5)
      pdk_double.warm_credentials(node, db.credentials_by_key)
      local run_opts = { db = db, env = env, node = node, client_ip = "203.0.113.9" }
      for _ = 1, case.failedAttemptsBefore or 0 do
        local failed = chain.run("jobs-read", { method = "GET", path = "/api/v1/jobs" }, run_opts)
        assert.equals(401, failed.status, "a failed attempt before the case")
        node.clock.now = node.clock.now + 0.5
      end

      local outcome, double = chain.run(case.route, req, run_opts)

      assert.equals(nullable(case.consumer), outcome.consumer, "consumer resolved by key-auth")
      assert.equals(case.expect.status, outcome.status, "status")

      if case.expect.status ~= 200 then
        assert.same(case.expect.body, outcome.exit.body)
        for name, value in pairs(case.expect.headers or {}) do
          assert.equals(value, outcome.exit.headers[name], "response header " .. name)
        end
        for name, range in pairs(case.expect.headerRanges or {}) do
          local value = tostring(outcome.exit.headers[name])
          assert.matches("^%d+$", value, 1, false, "response header " .. name)
          assert.is_true(tonumber(value) >= range[1] and tonumber(value) <= range[2], "response header " .. name)
        end
        return
      end

      local up = case.expect.upstream
      for _, name in ipairs(sorted_keys(up.headers)) do
        assert.same(up.headers[name], double.upstream_header(name), "upstream header " .. name)
      end
      for _, name in ipairs(up.absentHeaders or {}) do
        assert.is_nil(double.upstream_header(name), "upstream header " .. name .. " must be absent")
      end
      assert.same(up.query or {}, double.upstream_query(), "upstream query")
      if up.rawQuery then
        assert.equals(up.rawQuery, double.state.args, "upstream query string")
      end
    end)
  end
end)
