-- luacheck configuration for the Kong plugin and its busted specs (gateway/).
std = "ngx_lua"
max_line_length = 120
unused_args = false
redefined = false

-- Kong's PDK global and Kong's build information. kong.ctx.plugin is the one table a plugin writes
-- (its own per-request state, e.g. auth-guard's counter key from access to log).
read_globals = {
  "_KONG",
  kong = {
    other_fields = true,
    fields = { ctx = { other_fields = true, fields = { plugin = { read_only = false, other_fields = true } } } },
  },
}

files["gateway/spec/**/*.lua"] = {
  std = "+busted",
  -- The specs install the PDK double as the `kong` global while the plugin loads.
  globals = { "kong" },
}

exclude_files = { "node_modules/**", "dist/**" }
