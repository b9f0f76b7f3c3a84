-- Every row of auth-cases.json through key-auth -> job-scopes, with kong.yaml's real configuration.
local json = require "dkjson"
local paths = require "support.paths"
local chain = require "support.chain"
local kong_config = require "support.kong_config"

local cases_doc = assert(json.decode(paths.read(paths.auth_cases)))
local db = kong_config.load()
local env = { JOBS_GATEWAY_SECRET = cases_doc.gatewaySecret }

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t or {}) do
    keys[#keys + 1] = k
  end
  table.sort(keys)
  return keys
end

describe("auth-cases.json", function()
  it("is a non-empty table of uniquely named cases with the agreed keys", function()
    assert.equals("spec-gateway-secret", cases_doc.gatewaySecret)
    assert.is_true(#cases_doc.cases >= 40)
    local seen = {}
    for _, c in ipairs(cases_doc.cases) do
      assert.is_nil(seen[c.name], "duplicate case name: " .. tostring(c.name))
      seen[c.name] = true
      assert.same({ "consumer", "expect", "name", "request", "route" }, sorted_keys(c))
      assert.is_truthy(db.routes[c.route], "unknown route " .. tostring(c.route))
      if c.expect.status == 200 then
        assert.is_table(c.expect.upstream, c.name)
        assert.is_nil(c.expect.body, c.name)
      else
        assert.is_table(c.expect.body, c.name)
        assert.is_nil(c.expect.upstream, c.name)
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
      assert.is_true(seen[route .. " 200 "], route .. " forwarded")
    end
    assert.is_true(seen["jobs-write 403 Missing scope jobs:write"])
  end)

  for _, case in ipairs(cases_doc.cases) do
    it(case.name, function()
      local req = case.request
      local route = db.routes[case.route].route
      assert.is_true(kong_config.route_matches(route, req.method, req.path),
        req.method .. " " .. req.path .. " does not match route " .. case.route .. " in kong.yaml")

      local outcome, double = chain.run(case.route, req, { db = db, env = env })

      assert.equals(case.consumer, outcome.consumer, "consumer resolved by key-auth")
      assert.equals(case.expect.status, outcome.status, "status")

      if case.expect.status ~= 200 then
        assert.same(case.expect.body, outcome.exit.body)
        for name, value in pairs(case.expect.headers or {}) do
          assert.equals(value, outcome.exit.headers[name], "response header " .. name)
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
      assert.same(up.query or {}, double.state.query, "upstream query")
    end)
  end
end)
