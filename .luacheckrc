-- luacheck configuration for the Kong plugin and its busted specs (gateway/).
std = "ngx_lua"
max_line_length = 120
unused_args = false
redefined = false

-- Kong's PDK global and Kong's build information.
read_globals = { "kong", "_KONG" }

files["gateway/spec/**/*.lua"] = {
  std = "+busted",
  -- The specs install the PDK double as the `kong` global while the plugin loads.
  globals = { "kong" },
}

exclude_files = { "node_modules/**", "dist/**" }
