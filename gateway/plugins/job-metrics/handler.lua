-- job-metrics: per-route counts by status and latencies on Kong's /metrics, without the bundled
-- prometheus plugin's per-request kong.log.serialize() (docs/decisions.md, "Gateway metrics").
--
-- The series live in the registry of Kong 3.9's prometheus exporter
-- (kong/plugins/prometheus/exporter.lua get_prometheus), so its /metrics on the status listener
-- (status_api.lua) serves them; the bundled plugin stays loaded (kong.conf: bundled) and is not
-- configured, so it does no per-request work.

local exporter = require "kong.plugins.prometheus.exporter"


local kong = kong
local ngx = ngx
local now = ngx.now
local start_time = ngx.req.start_time
local get_source = kong.response.get_source
local get_status = kong.response.get_status
local get_route = kong.router.get_route
local get_service = kong.router.get_service


-- Milliseconds; a request to the service usually takes 2-50 ms, Kong's own answers under 5.
local BUCKETS = { 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000 }

local requests, request_latency, upstream_latency

-- Reused on every request: the exporter reads label values, it keeps none of these tables.
local status_labels = { "", "", 0, "" }
local latency_labels = { "", "" }


local JobMetricsHandler = {
  VERSION = "1.0.0",
  -- Below prometheus' 13: Kong runs configure handlers by priority (kong/runloop/plugins_iterator.lua
  -- configure, kong/db/dao/plugins.lua get_handlers), so ours comes after the exporter's own.
  PRIORITY = 12,
}


-- Series are registered once per worker, after the exporter made its registry (in init).
function JobMetricsHandler:init_worker()
  local prometheus = exporter.get_prometheus()
  if not prometheus then
    return
  end

  requests = prometheus:counter("jobs_http_requests_total",
    "Requests by service, route, status and who answered (service or kong)",
    { "service", "route", "code", "source" })
  request_latency = prometheus:histogram("jobs_request_latency_ms",
    "Time from the request's first byte to its last response byte, by service and route",
    { "service", "route" }, BUCKETS)
  upstream_latency = prometheus:histogram("jobs_upstream_latency_ms",
    "Time the service took to answer, by service and route (proxied requests only)",
    { "service", "route" }, BUCKETS)
end


-- The exporter serves series kept in its shared dict only while it thinks a prometheus plugin
-- is configured (exporter.lua metric_data: local_only); this plugin counts as one.
-- upstream_health_metrics: as the bundled plugin's option of that name (kong/plugins/prometheus/handler.lua
-- sets it on every request it logs); here once per configuration, so /metrics carries
-- kong_upstream_target_health for every target of every upstream (exporter.lua metric_data).
function JobMetricsHandler:configure(configs)
  if configs then
    exporter.configure(configs)
  end
  local health = false
  for _, conf in ipairs(configs or {}) do
    health = health or conf.upstream_health_metrics == true
  end
  exporter.set_export_upstream_health_metrics(health)
end


function JobMetricsHandler:log()
  local route = get_route()
  if not requests or not route then
    return
  end

  local service = get_service()
  local service_name = service and service.name or ""
  local route_name = route.name or route.id

  status_labels[1] = service_name
  status_labels[2] = route_name
  status_labels[3] = get_status()
  status_labels[4] = get_source() == "service" and "service" or "kong"
  requests:inc(1, status_labels)

  latency_labels[1] = service_name
  latency_labels[2] = route_name
  request_latency:observe((now() - start_time()) * 1000, latency_labels)

  local waited = ngx.ctx.KONG_WAITING_TIME
  if waited and waited >= 0 then
    upstream_latency:observe(waited, latency_labels)
  end
end


return JobMetricsHandler
