-- A small interpreter for the part of Kong's schema language that our schema.lua files use (type,
-- required, default, one_of, elements, len_min, gt, between, custom_validator, referenceable), used
-- to check configs the way Kong would before they reach the handler, and to fill in defaults.
local M = {}

local function deep_copy(v)
  if type(v) ~= "table" then
    return v
  end
  local out = {}
  for k, x in pairs(v) do
    out[k] = deep_copy(x)
  end
  return out
end
M.deep_copy = deep_copy

local function is_array(t)
  if type(t) ~= "table" then
    return false
  end
  local n = 0
  for _ in pairs(t) do
    n = n + 1
  end
  return n == #t
end

local validate_field

local function validate_value(field, value, path, errors)
  local t = field.type
  if t == "string" then
    if type(value) ~= "string" then
      errors[path] = "expected a string"
      return
    end
  elseif t == "integer" or t == "number" then
    if type(value) ~= "number" or (t == "integer" and value % 1 ~= 0) then
      errors[path] = "expected an " .. t
      return
    end
    if field.gt and value <= field.gt then
      errors[path] = "value must be greater than " .. field.gt
      return
    end
    if field.between and (value < field.between[1] or value > field.between[2]) then
      errors[path] = "value should be between " .. field.between[1] .. " and " .. field.between[2]
      return
    end
  elseif t == "boolean" then
    if type(value) ~= "boolean" then
      errors[path] = "expected a boolean"
      return
    end
  elseif t == "array" or t == "set" then
    if not is_array(value) then
      errors[path] = "expected an array"
      return
    end
    if field.len_min and #value < field.len_min then
      errors[path] = "length must be at least " .. field.len_min
      return
    end
    for i = 1, #value do
      validate_value(field.elements, value[i], path .. "." .. i, errors)
    end
  elseif t == "record" then
    if type(value) ~= "table" or (next(value) ~= nil and is_array(value)) then
      errors[path] = "expected a record"
      return
    end
  else
    errors[path] = "unsupported type " .. tostring(t)
    return
  end

  if field.one_of then
    local ok = false
    for _, allowed in ipairs(field.one_of) do
      if value == allowed then
        ok = true
      end
    end
    if not ok then
      errors[path] = "expected one of: " .. table.concat(field.one_of, ", ")
      return
    end
  end

  if field.custom_validator then
    local ok, err = field.custom_validator(value)
    if not ok then
      errors[path] = err
    end
  end
end

validate_field = function(name, field, input, out, errors, prefix)
  local path = prefix and (prefix .. "." .. name) or name
  local value = input[name]
  if value == nil and field.default ~= nil then
    value = deep_copy(field.default)
  end
  if value == nil then
    if field.required then
      errors[path] = "required field missing"
    end
    return
  end
  validate_value(field, value, path, errors)
  out[name] = value
end

-- Validates `config` against the `config` record of a plugin schema. Returns the config with defaults
-- filled in, or nil and a table of errors keyed by field path.
function M.validate_config(schema, config)
  local record
  for _, f in ipairs(schema.fields) do
    local name, def = next(f)
    if name == "config" then
      record = def
    end
  end
  assert(record, "schema has no config record")

  local errors, out = {}, {}
  config = config or {}
  local known = {}
  for _, f in ipairs(record.fields) do
    local name, def = next(f)
    known[name] = true
    validate_field(name, def, config, out, errors, "config")
  end
  for k in pairs(config) do
    if not known[k] then
      errors["config." .. tostring(k)] = "unknown field"
    end
  end
  if next(errors) then
    return nil, errors
  end
  return out
end

return M
