-- job-scopes' schema: shape, defaults and what Kong would accept or refuse.
local chain = require "support.chain"
local kong_config = require "support.kong_config"
local validator = require "support.schema_validator"

local schema = chain.schema()

local function config_fields()
  for _, f in ipairs(schema.fields) do
    local name, def = next(f)
    if name == "config" then
      local out = {}
      for _, cf in ipairs(def.fields) do
        local n, d = next(cf)
        out[#out + 1] = n
        out[n] = d
      end
      return out
    end
  end
end

local fields = config_fields()

describe("job-scopes schema", function()
  it("is named job-scopes and cannot be put on a consumer", function()
    assert.equals("job-scopes", schema.name)
    local consumer
    for _, f in ipairs(schema.fields) do
      if f.consumer then
        consumer = f.consumer
      end
    end
    assert.same({ type = "foreign", reference = "consumers", eq = "null" }, consumer)
  end)

  it("has exactly required_scope, gateway_secret and key_names, each documented", function()
    assert.same({ "required_scope", "gateway_secret", "key_names" }, { fields[1], fields[2], fields[3], fields[4] })
    for i = 1, #fields do
      local def = fields[fields[i]]
      assert.is_string(def.description, fields[i])
      assert.is_string(def.type, fields[i])
      assert.is_boolean(def.required, fields[i])
    end
  end)

  it("requires a scope among jobs:read and jobs:write", function()
    assert.same({ "jobs:read", "jobs:write" }, fields.required_scope.one_of)
    assert.is_truthy(validator.validate_config(schema, { required_scope = "jobs:read" }))
    assert.is_truthy(validator.validate_config(schema, { required_scope = "jobs:write" }))
    local ok, errs = validator.validate_config(schema, { required_scope = "jobs:admin" })
    assert.is_nil(ok)
    assert.is_string(errs["config.required_scope"])
    ok, errs = validator.validate_config(schema, {})
    assert.is_nil(ok)
    assert.equals("required field missing", errs["config.required_scope"])
  end)

  it("keeps the gateway secret optional, referenceable and encrypted", function()
    assert.is_false(fields.gateway_secret.required)
    assert.is_true(fields.gateway_secret.referenceable)
    assert.is_true(fields.gateway_secret.encrypted)
    assert.is_nil(fields.gateway_secret.default)
    local conf = validator.validate_config(schema, { required_scope = "jobs:read" })
    assert.is_nil(conf.gateway_secret)
    conf = validator.validate_config(schema, { required_scope = "jobs:read",
                                               gateway_secret = "{vault://env/jobs-gateway-secret}" })
    assert.equals("{vault://env/jobs-gateway-secret}", conf.gateway_secret)
  end)

  it("defaults key_names to X-API-Key then api_key and checks them as header names", function()
    assert.same({ "X-API-Key", "api_key" }, fields.key_names.default)
    assert.is_true(fields.key_names.required)
    local conf = validator.validate_config(schema, { required_scope = "jobs:read" })
    assert.same({ "X-API-Key", "api_key" }, conf.key_names)
    assert.is_nil(validator.validate_config(schema, { required_scope = "jobs:read", key_names = { "X API Key" } }))
    assert.is_nil(validator.validate_config(schema, { required_scope = "jobs:read", key_names = {} }))
    assert.is_nil(validator.validate_config(schema, { required_scope = "jobs:read", key_names = "X-API-Key" }))
  end)

  it("refuses unknown fields", function()
    local ok, errs = validator.validate_config(schema, { required_scope = "jobs:read", scope = "jobs:read" })
    assert.is_nil(ok)
    assert.equals("unknown field", errs["config.scope"])
  end)

  describe("against kong.yaml", function()
    local db = kong_config.load()

    it("accepts every job-scopes config in kong.yaml", function()
      local n = 0
      for name, entry in pairs(db.routes) do
        local p = entry.plugins["job-scopes"]
        if p then
          n = n + 1
          local conf, errs = validator.validate_config(schema, p.config)
          assert.is_truthy(conf, name .. ": " .. tostring(errs and next(errs)))
        end
      end
      assert.equals(3, n)
    end)

    it("uses the same key names as key-auth", function()
      for name, entry in pairs(db.routes) do
        if entry.plugins["job-scopes"] then -- the keyless docs route has neither plugin
          local conf = validator.validate_config(schema, entry.plugins["job-scopes"].config)
          assert.same(entry.plugins["key-auth"].config.key_names, conf.key_names, name)
        end
      end
    end)
  end)
end)
