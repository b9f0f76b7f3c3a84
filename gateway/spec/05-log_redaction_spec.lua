-- gateway/kong/redact-keys.lua, the filter Kong's container runs on every log line: canary keys
-- in the line shapes nginx and Kong write (ngx_http_log_error_handler's request/upstream/referrer
-- fields, lua_kong_error_log_request_id's request_id) and in shapes a debug line could take.
-- test/kong-logs.test.ts runs the same filter on real nginx output.
local paths = require "support.paths"

local redact = assert(loadfile(paths.gateway .. "/kong/redact-keys.lua"))("redact-keys").redact

local CANARY = "CANARY0key"

local function error_line(request, extra)
  return "2026/11/22 00:34:07 [error] 29854#29854: *2 connect() failed (111: Connection refused) while "
      .. "connecting to upstream, client: 172.18.0.1, server: kong, request: \"" .. request .. "\""
      .. (extra or "") .. ", request_id: \"65ee1b04806626454b7f0453be447e45\""
end

describe("redact-keys", function()
  it("removes the query of the request line, keeping method, path and protocol", function()
    local line = error_line("GET /api/v1/jobs?status=active&api_key=" .. CANARY .. " HTTP/1.1",
                            ", upstream: \"http://10.0.0.3:3000/api/v1/jobs?status=active\", host: \"api.example\"")
    local out = redact(line)
    assert.not_matches(CANARY, out, 1, true)
    assert.matches('request: "GET /api/v1/jobs?[REDACTED] HTTP/1.1"', out, 1, true)
    assert.matches('upstream: "http://10.0.0.3:3000/api/v1/jobs?[REDACTED]"', out, 1, true)
    assert.matches('host: "api.example", request_id: "65ee1b04806626454b7f0453be447e45"', out, 1, true)
  end)

  it("removes a key that nginx could not parse (space, quote, no protocol)", function()
    for _, request in ipairs({
      "GET /api/v1/jobs?api_key=" .. CANARY .. "-bad line HTTP/1.1",
      "GET /api/v1/jobs?api_key=" .. CANARY .. "\"quoted HTTP/1.1",
      "GET /api/v1/jobs?api_key=" .. CANARY,
    }) do
      local out = redact(error_line(request))
      assert.not_matches(CANARY, out, 1, true)
      assert.not_matches("quoted", out, 1, true)
      assert.not_matches("line HTTP", out, 1, true)
    end
  end)

  it("removes the query of a referrer, which a browser may fill with a key", function()
    local out = redact(error_line("GET /api/v1/jobs HTTP/1.1",
                                  ", referrer: \"https://partner.example/?api_key=" .. CANARY .. "\""))
    assert.not_matches(CANARY, out, 1, true)
    assert.matches('request: "GET /api/v1/jobs HTTP/1.1"', out, 1, true)
  end)

  it("removes values after any spelling of a key name, %-encoded and case-insensitive", function()
    for _, line in ipairs({
      "api_key=" .. CANARY,
      "see /x?page=1&API%5FKEY=" .. CANARY .. "&a=b",
      "x-api-key: " .. CANARY,
      "X-Api-Key:" .. CANARY,
      '{"headers":{"x-api-key":"' .. CANARY .. '","host":"h"}}',
      '["x_api_key"] = "' .. CANARY .. '"',
      "apikey='" .. CANARY .. "'",
      "X%2DAPI%2DKey=" .. CANARY,
    }) do
      local out = redact(line)
      assert.not_matches(CANARY, out, 1, true)
      assert.matches("[REDACTED]", out, 1, true)
    end
  end)

  it("removes a key named in an Admin API path (key-auth credentials are addressed by key)", function()
    local out = redact('127.0.0.1 - - "GET /consumers/acme/key-auth/' .. CANARY .. ' HTTP/1.1" 200')
    assert.not_matches(CANARY, out, 1, true)
    out = redact('"DELETE /key-auths/' .. CANARY .. '?x=1 HTTP/1.1" 204')
    assert.not_matches(CANARY, out, 1, true)
  end)

  it("leaves lines without a key as they are", function()
    for _, line in ipairs({
      '{"time":"2026-11-22T00:33:07+00:00","method":"GET","path":"/api/v1/jobs","status":200}',
      "2026/11/22 00:34:07 [notice] 29849#29849: start worker processes",
      error_line("GET /api/v1/jobs/42 HTTP/1.1", ", upstream: \"http://10.0.0.3:3000/api/v1/jobs/42\""),
      "",
    }) do
      assert.equals(line, redact(line))
    end
  end)
end)
