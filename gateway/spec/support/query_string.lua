-- The two query-string codecs a request meets inside Kong 3.9.1, re-stated for the PDK double:
--   * parse: ngx.req.get_uri_args, which kong.request.get_query() returns (kong/pdk/request.lua;
--     lua-nginx-module ngx_http_lua_parse_args): "&"-separated, "+" and %XX unescaped, a name
--     without "=" is the boolean true, a repeated name becomes a list, empty names are skipped, and
--     at most lua_max_uri_args (100, kong/templates/kong_defaults.lua) arguments, then "truncated";
--   * remove: resty.ada.search.remove, which kong.service.request.clear_query_arg(name) applies to
--     ngx.var.args (kong/pdk/service/request.lua): the WHATWG URLSearchParams algorithm (ada's
--     url_search_params), so every remaining pair is decoded and re-encoded (space as "+", every
--     byte but A-Z a-z 0-9 * - . _ as %XX, "name" becomes "name="), in the order sent.
local M = {}

local byte = string.byte
local char = string.char
local concat = table.concat
local format = string.format
local gsub = string.gsub
local sort = table.sort

M.MAX_ARGS = 100

-- ngx.unescape_uri and ada's percent_decode alike: "+" is a space, %XX a byte, a bad escape stays.
local function unescape(s)
  s = gsub(s, "%+", " ")
  return (gsub(s, "%%(%x%x)", function(hex)
    return char(tonumber(hex, 16))
  end))
end

-- The application/x-www-form-urlencoded serializer (ada: WWW_FORM_URLENCODED_PERCENT_ENCODE).
local function form_encode(s)
  s = gsub(s, "[^%w%*%-%._ ]", function(c)
    return format("%%%02X", byte(c))
  end)
  return (gsub(s, " ", "+"))
end

-- How a client would send a value (encodeURIComponent's unreserved set).
local function uri_encode(s)
  return (gsub(s, "[^%w%-%._~!%*'%(%)]", function(c)
    return format("%%%02X", byte(c))
  end))
end

local function split(raw)
  local segments = {}
  for segment in (raw or ""):gmatch("[^&]+") do
    local eq = segment:find("=", 1, true)
    if eq then
      segments[#segments + 1] = { name = segment:sub(1, eq - 1), value = segment:sub(eq + 1) }
    else
      segments[#segments + 1] = { name = segment }
    end
  end
  return segments
end

-- ngx.req.get_uri_args(max): the table, plus "truncated" when arguments were left out.
function M.parse(raw, max)
  max = max or M.MAX_ARGS
  local args, n = {}, 0
  for _, s in ipairs(split(raw)) do
    local name = unescape(s.name)
    if name ~= "" then
      if n == max then
        return args, "truncated"
      end
      n = n + 1
      local value = s.value and unescape(s.value) or true
      local existing = args[name]
      if existing == nil then
        args[name] = value
      elseif type(existing) == "table" then
        existing[#existing + 1] = value
      else
        args[name] = { existing, value }
      end
    end
  end
  return args
end

-- resty.ada.search.remove(raw, name): the new ngx.var.args.
function M.remove(raw, name)
  local out = {}
  for _, s in ipairs(split(raw)) do
    local n = unescape(s.name)
    if n ~= name then
      out[#out + 1] = form_encode(n) .. "=" .. form_encode(s.value and unescape(s.value) or "")
    end
  end
  return concat(out, "&")
end

-- A query table as a client would send it (names sorted, lists as repeated names, true bare).
function M.encode(query)
  local names = {}
  for name in pairs(query or {}) do
    names[#names + 1] = name
  end
  sort(names)
  local out = {}
  for _, name in ipairs(names) do
    local v = query[name]
    local values = type(v) == "table" and v or { v }
    for _, x in ipairs(values) do
      if x == true then
        out[#out + 1] = uri_encode(name)
      else
        out[#out + 1] = uri_encode(name) .. "=" .. uri_encode(tostring(x))
      end
    end
  end
  return concat(out, "&")
end

return M
