# One image for every service; the command picks which one runs (see docker-compose.yml).
# TypeScript runs through tsx (a runtime dependency), the same way as `npm start`.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY libs/domain/package.json libs/domain/
COPY libs/db/package.json libs/db/
COPY libs/runtime/package.json libs/runtime/
COPY libs/platform/package.json libs/platform/
COPY libs/testing/package.json libs/testing/
COPY libs/commands/package.json libs/commands/
COPY libs/datasources/package.json libs/datasources/
COPY libs/dapr-stand-in/package.json libs/dapr-stand-in/
COPY libs/simulated-tenant/package.json libs/simulated-tenant/
COPY services/scheduler/package.json services/scheduler/
COPY services/orchestrator/package.json services/orchestrator/
COPY services/admin-api/package.json services/admin-api/
COPY services/worker/package.json services/worker/
COPY services/all-in-one/package.json services/all-in-one/
COPY services/cli/package.json services/cli/
# npm links the CLI's bin at install: the file it points to must exist by then.
COPY services/cli/bin services/cli/bin/
RUN npm ci --omit=dev --no-audit --no-fund
COPY libs libs
COPY services services
COPY examples examples
COPY tsconfig.json ./
# Never run as root: PostgreSQL (embedded mode) refuses it, and a service needs no privileges.
USER node
# 8080: admin API; 3001-3004: Dapr app callbacks (MATOOLKIT_DAPR_APP_PORT) in Dapr mode.
EXPOSE 8080
CMD ["npx", "tsx", "services/all-in-one/src/main.ts"]
