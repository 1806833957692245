# syntax=docker/dockerfile:1
# One image for every service: `node /app/dist/matoolkit.mjs <command>`, the command one of
# all-in-one (default), admin-api, orchestrator, scheduler, worker, migrate, token; a container
# picks it with args (["orchestrator"]) or MATOOLKIT_SERVICE. See docker-compose.yml.
#
# Node 24: an LTS line supported until April 2028. Node 20 reached end of life in April 2026 and
# Node 22 leaves maintenance in April 2027; 24 also loads `.ts` custom worker functions natively
# (type stripping), which the image needs now that it runs plain JavaScript instead of tsx.
ARG NODE_IMAGE=node:24-bookworm-slim

# The manifests npm ci reads, alone in a layer, so dependencies install again only when they change.
FROM scratch AS manifests
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs/auth/package.json libs/auth/
COPY libs/commands/package.json libs/commands/
COPY libs/dapr-harness/package.json libs/dapr-harness/
COPY libs/dapr-stand-in/package.json libs/dapr-stand-in/
COPY libs/datasources/package.json libs/datasources/
COPY libs/db/package.json libs/db/
COPY libs/domain/package.json libs/domain/
COPY libs/platform/package.json libs/platform/
COPY libs/runtime/package.json libs/runtime/
COPY libs/simulated-tenant/package.json libs/simulated-tenant/
COPY libs/testing/package.json libs/testing/
COPY services/admin-api/package.json services/admin-api/
COPY services/all-in-one/package.json services/all-in-one/
COPY services/cli/package.json services/cli/
COPY services/dashboard/package.json services/dashboard/
COPY services/orchestrator/package.json services/orchestrator/
COPY services/scheduler/package.json services/scheduler/
COPY services/worker/package.json services/worker/
# npm links the CLI's bin at install: the file it points to must exist by then.
COPY services/cli/bin services/cli/bin/

# Compiles: the services into one bundle (dist/matoolkit.mjs) and the dashboard into static files.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY --from=manifests /app ./
# No install scripts: the builds below run explicitly, once the sources are there.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY libs libs
COPY services services
COPY scripts/build scripts/build
RUN npm run build
RUN npm run build -w services/dashboard

# Production dependencies only: no devDependencies, and no optional ones, which leaves out the
# embedded PostgreSQL binaries (@embedded-postgres/*): the image runs against DATABASE_URL.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY --from=manifests /app ./
# Then out: the workspace links (the bundle holds the workspace code). tsx is a devDependency
# (`npm start` from a clone), so it is not installed here.
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund \
  && rm -rf node_modules/@matoolkit node_modules/.bin/matoolkit

FROM ${NODE_IMAGE}
# tini as PID 1: forwards SIGTERM to node and reaps children. npm/npx/corepack are not needed
# to run the bundle; removing them leaves less to patch.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/* \
  && rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
  && rm -f /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
  && mkdir -p /data \
  && chown node:node /data
WORKDIR /app
ENV NODE_ENV=production \
  NODE_OPTIONS=--enable-source-maps \
  MATOOLKIT_DATA_DIR=/data
COPY --from=deps /app/node_modules node_modules
COPY --from=build /app/package.json ./
COPY --from=build /app/dist dist
# The admin API serves the dashboard from here (the same path as in the repository).
COPY --from=build /app/services/dashboard/dist services/dashboard/dist
# Sample runbooks and CSV files: the default MATOOLKIT_CSV_DIR (`examples`, under the working dir).
COPY examples examples
# Never root: a service needs no privileges. /data belongs to `node` (uid 1000), so a named
# volume mounted there starts with that owner (Docker copies it from the image's directory).
USER node
VOLUME /data
# 8080: admin API (PORT); 3001-3004: Dapr app callbacks (MATOOLKIT_DAPR_APP_PORT) in Dapr mode.
EXPOSE 8080
# GET /healthz of the service this container runs (the port depends on it: see the script).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "/app/dist/healthcheck.mjs"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/matoolkit.mjs"]
CMD ["all-in-one"]
