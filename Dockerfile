# The Koa service alone: no gateway code (gateway/local is a development stand-in for Kong), no
# scripts, no tests, and it never loads demo data (the service seeds only when SEED_DEMO_DATA=true,
# which nothing here sets). The build stage compiles domain/, service/, dispatcher/ and db/ to dist/; the runtime stage
# keeps production dependencies, the compiled code, the SQL migrations and the partner guides (read at start-up).
# Node 24 LTS (supported until 2028-04; docs/decisions.md, "Runtime"). CI tests on this exact version
# too (scripts/node-runtime.sh reads it from here).
ARG NODE_VERSION=24.21.0
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY domain ./domain
COPY service ./service
COPY dispatcher ./dispatcher
COPY db ./db
RUN npx tsc -p tsconfig.build.json && npm prune --omit=dev

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/domain ./dist/domain
COPY --from=build /app/dist/service ./dist/service
COPY --from=build /app/dist/dispatcher ./dist/dispatcher
COPY --from=build /app/dist/db ./dist/db
COPY --from=build /app/db/migrations ./db/migrations
# The guides the OpenAPI document's description is read from at start-up (service/api/guides.ts).
COPY docs/guides ./docs/guides
USER node
EXPOSE 3000
# Ready once migrated and connected (/readyz); node has fetch, the image has no curl.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=6 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:3000/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Memory: a 4 MiB young generation (Node's default: 16 MiB per semi-space), and the old generation
# collected once it has grown by half its live size instead of letting it reach up to 4x (V8's
# heuristic), a soft target, not a limit: a page of very large jobs still fits. Priced by the bench
# (scenarios N, N-A; docs/performance.md, "The service's node flags"): peak RSS 114 MiB against 170
# with node's defaults, for about 5-10% more CPU per request. npm run bench reads these flags here.
CMD ["node", "--max-semi-space-size=4", "--heap-growing-percent=50", "dist/service/server.js"]
