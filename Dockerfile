# syntax=docker/dockerfile:1
# One image per service from one Dockerfile:
#   docker build --build-arg SERVICE=listing -t marketplace/listing:$(git rev-parse --short HEAD) .
# SERVICE is one of gateway, listing, catalog, quote, order, subscription (the folder under services/).
# Kubernetes probes check health (gRPC health for services, /healthz and /readyz for the gateway), so the image
# has no HEALTHCHECK. Nothing secret is ever copied or set here: the chart mounts secrets at run time.

ARG NODE_IMAGE=node:22.23.3-bookworm-slim

FROM ${NODE_IMAGE} AS build
ARG SERVICE
ARG PNPM_VERSION=12.21.0
RUN test -n "$SERVICE" || (echo 'build with --build-arg SERVICE=<gateway|listing|catalog|quote|order|subscription>' && false)
RUN npm install --global --no-audit --no-fund "pnpm@${PNPM_VERSION}"
WORKDIR /src
# The manifests first, so the dependency layer is reused while only sources change.
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json ./
RUN pnpm fetch
COPY . .
RUN pnpm install --offline --frozen-lockfile \
 && pnpm exec tsc -b "services/${SERVICE}" \
 && pnpm --filter "@marketplace/${SERVICE}" deploy --prod --legacy --offline /out \
 && rm -rf /out/src /out/test /out/tsconfig.json /out/jest.config.js

FROM ${NODE_IMAGE} AS runtime
ARG SERVICE
# DATA_DIR only matters without DATABASE_URL (embedded engine): /tmp is the one writable place (an emptyDir).
ENV NODE_ENV=production \
    DATA_DIR=/tmp/marketplace
WORKDIR /app
# Owned by root and only readable by the service's user: a compromised process cannot rewrite its own code.
COPY --from=build /out /app
# The `node` user of the base image, by number so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
LABEL org.opencontainers.image.title="marketplace-${SERVICE}" \
      org.opencontainers.image.source="https://github.com/liquidation-marketplace/marketplace"
# Exec form: node is PID 1 and receives SIGTERM itself, which starts the drain (packages/runtime).
CMD ["node", "dist/src/main.js"]
