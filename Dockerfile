# One image for every service: the production bundles (npm run build) on the official Node 20
# image, production dependencies only, run as the image's non-root `node` user. Which service a
# container runs is SERVICE (idp, ledger, rental or agents):
#
#   docker build -t svc .
#   docker run -e SERVICE=idp -e NODE_ENV=production -e DATABASE_URL=… -e REDIS_URL=… … svc
#
# Migrations run when a service starts, under a PostgreSQL advisory lock (packages/kit/src/db/
# migrator.ts), so several containers may start together. docs/operations.md lists the variables
# each service requires in production.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY packages/kit/package.json packages/kit/
COPY packages/trust/package.json packages/trust/
COPY services/idp/package.json services/idp/
COPY services/ledger/package.json services/ledger/
COPY services/rental/package.json services/rental/
COPY services/agents/package.json services/agents/
RUN npm ci --no-audit --no-fund
COPY packages packages
COPY services services
COPY scripts scripts
COPY tsconfig.base.json tsconfig.json ./
RUN npm run build

FROM node:20-bookworm-slim
# DATA_DIR: production keeps nothing there (every secret is given); a writable place all the same
ENV NODE_ENV=production HOST=0.0.0.0 SERVICE=idp DATA_DIR=/tmp/svc-data
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY packages/kit/package.json packages/kit/
COPY packages/trust/package.json packages/trust/
COPY services/idp/package.json services/idp/
COPY services/ledger/package.json services/ledger/
COPY services/rental/package.json services/rental/
COPY services/agents/package.json services/agents/
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
# the workspace packages' sources: bundled into each service, but the console serves the
# browser's copies of @svc/trust's dependencies, resolved from it at run time
COPY packages packages
COPY --from=build /app/services/idp/.build services/idp/.build
COPY --from=build /app/services/ledger/.build services/ledger/.build
COPY --from=build /app/services/rental/.build services/rental/.build
COPY --from=build /app/services/agents/.build services/agents/.build
COPY services/idp/migrations services/idp/migrations
COPY services/ledger/migrations services/ledger/migrations
COPY services/rental/migrations services/rental/migrations
COPY services/rental/console services/rental/console
COPY deploy/healthcheck.mjs deploy/healthcheck.mjs
# what the idp's build attestation (/.well-known/svc-build.json) says: no .git in the image
ARG SVC_BUILD_COMMIT
ENV SVC_BUILD_COMMIT=${SVC_BUILD_COMMIT}
USER node
# ports 4000 (idp), 4100 (ledger), 4200 (rental), 4300 (agents); IDP_PORT… change them
EXPOSE 4000 4100 4200 4300
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 CMD ["node", "deploy/healthcheck.mjs"]
# exec form through sh: SIGTERM reaches node, which drains (SHUTDOWN_DELAY_MS) and stops
CMD ["sh", "-c", "exec node --enable-source-maps services/${SERVICE}/.build/main.mjs"]
