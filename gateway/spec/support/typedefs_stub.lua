-- The three Kong typedefs schema.lua uses, with the same rules as kong/db/schema/typedefs.lua and
-- kong/tools (validate_header_name: A-Z, a-z, 0-9, "_" and "-").
local function validate_header_name(name)
  if name == nil or name == "" then
    return nil, "no header name provided"
  end
  if name:match("^[A-Za-z0-9_%-]+$") then
    return name
  end
  return nil, "bad header name '" .. name .. "', allowed characters are A-Z, a-z, 0-9, '_', and '-'"
end

return {
  no_consumer = { type = "foreign", reference = "consumers", eq = "null" },
  protocols_http = {
    type = "set",
    required = true,
    default = { "grpc", "grpcs", "http", "https" },
    elements = { type = "string", one_of = { "grpc", "grpcs", "http", "https" } },
  },
  header_name = { type = "string", custom_validator = validate_header_name },
}
