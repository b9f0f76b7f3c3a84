# The Koa service. Build stage compiles TypeScript to dist/; the runtime stage keeps production
# dependencies, the compiled code and the SQL migrations (read from disk at start-up).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY service ./service
COPY db ./db
COPY gateway/local ./gateway/local
COPY scripts ./scripts
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/db/migrations ./db/migrations
USER node
EXPOSE 3000
CMD ["node", "dist/service/server.js"]
