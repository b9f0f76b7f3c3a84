-- redact-keys: copies stdin to stdout line by line with every API key taken out.
local M = {}

-- The module name when required; nothing when run as a program.
local required_as = ...

local find = string.find
local sub = string.sub
local lower = string.lower
local gsub = string.gsub
local concat = table.concat

local REDACTED = "[REDACTED]"

-- The fields nginx and Kong append to an error line, in order; a value runs until the next field.
local FIELD_ENDS = { '", subrequest: "', '", upstream: "', '", host: "', '", referrer: "', '", request_id: "' }

-- Where the value of the field that starts at `from` ends (exclusive), at the latest the line end.
local function field_end(line, from, is_request)
  local stop = #line + 1
  for _, marker in ipairs(FIELD_ENDS) do
    local s = find(line, marker, from, true)
    if s and s < stop then
      stop = s
    end
  end
  if stop == #line + 1 and sub(line, -1) == '"' then
    stop = #line
  end
  if is_request then
    -- "GET /path?query HTTP/1.1": the first " HTTP/<digit>" after the query ends it.
    local s = find(line, " HTTP/%d", from)
    if s and s < stop then
      stop = s
    end
  end
  return stop
end

-- Rule 1: for every `name: "` field, the query string of the URL in it.
local function redact_field_query(line, name)
  local marker = name .. ': "'
  local out, pos = {}, 1
  while true do
    local s, e = find(line, marker, pos, true)
    if not s then
      break
    end
    local stop = field_end(line, e + 1, name == "request")
    local q = find(line, "?", e + 1, true)
    if q and q < stop then
      out[#out + 1] = sub(line, pos, q)
      out[#out + 1] = REDACTED
      pos = stop
    else
      out[#out + 1] = sub(line, pos, e)
      pos = e + 1
    end
  end
  out[#out + 1] = sub(line, pos)
  return concat(out)
end

-- The spellings of a key name, lower case: api_key, api-key, apikey, x-api-key, x_api_key, ...
local KEY_NAMES = {}
do
  local seps = { "", "-", "_", "%2d", "%5f" }
  for _, a in ipairs(seps) do
    KEY_NAMES[#KEY_NAMES + 1] = "api" .. a .. "key"
    for _, x in ipairs(seps) do
      KEY_NAMES[#KEY_NAMES + 1] = "x" .. x .. "api" .. a .. "key"
    end
  end
end

-- After a key name: optional quote and bracket, spaces, "=" or ":", spaces, optional quote.
local ASSIGN = "^[\"']?%]?%s*[=:]%s*[\"']?"
-- A value runs until a space, a quote, a separator or a bracket.
local VALUE = "^[^%s\"'&;,%)%]}]+"

-- Rule 2: the value after any spelling of a key name, matched case-insensitively.
local function redact_named_values(line)
  local low = lower(line)
  local cuts = {}
  for _, name in ipairs(KEY_NAMES) do
    local pos = 1
    while true do
      local s, e = find(low, name, pos, true)
      if not s then
        break
      end
      local _, ae = find(low, ASSIGN, e + 1)
      if ae then
        local vs, ve = find(low, VALUE, ae + 1)
        if vs and sub(line, vs, ve) ~= REDACTED then
          cuts[#cuts + 1] = { vs, ve }
        end
      end
      pos = e + 1
    end
  end
  if #cuts == 0 then
    return line
  end
  table.sort(cuts, function(a, b)
    return a[1] < b[1]
  end)
  local out, pos = {}, 1
  for _, c in ipairs(cuts) do
    if c[1] >= pos then
      out[#out + 1] = sub(line, pos, c[1] - 1)
      out[#out + 1] = REDACTED
      pos = c[2] + 1
    elseif c[2] >= pos then
      pos = c[2] + 1
    end
  end
  out[#out + 1] = sub(line, pos)
  return concat(out)
end

-- Rule 3: key-auth credentials are addressed by key on the Admin API (endpoint_key = "key").
local function redact_admin_paths(line)
  return (gsub(line, "(/[Kk][Ee][Yy]%-[Aa][Uu][Tt][Hh][Ss]?/)[^/?%s\"]+", "%1" .. REDACTED))
end

function M.redact(line)
  line = redact_field_query(line, "request")
  line = redact_field_query(line, "upstream")
  line = redact_field_query(line, "referrer")
  line = redact_named_values(line)
  return redact_admin_paths(line)
end

-- As a program (`luajit redact-keys.lua`): filter stdin to stdout, one flushed line at a time.
if type(required_as) ~= "string" then
  io.stdout:setvbuf("line")
  for line in io.lines() do
    io.stdout:write(M.redact(line), "\n")
  end
end

return M
