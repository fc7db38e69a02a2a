# syntax=docker/dockerfile:1
# edgepilot's image: the control plane (`serve`, the default), the relay and the agent, as compiled
# JavaScript on Node with production dependencies only.
#
#   docker build -t edgepilot --build-arg EDGEPILOT_COMMIT=$(git rev-parse HEAD) .
#   docker run --rm -p 8080:8080 -p 15010:15010 -e EDGEPILOT_TOKEN=... -e XDS_AUTH=token \
#     -e EDGEPILOT_XDS_TOKEN=... edgepilot              # serve
#   docker run --rm edgepilot relay --help               # or: agent, version
#
# Base: node:24-slim (Debian bookworm, glibc: libsql's prebuilt binary is glibc-only). Not distroless:
# the agent's bootstrap init container runs `sh -c "edgepilot agent bootstrap ... > file"`
# (infra/k8s/agent) and every manifest calls `edgepilot` by name, which needs a shell and PATH.
# Node 24 is the active LTS and the project's Node (package.json engines >=24 and its devDependency node).
# test/e2e/image/image.test.ts performs these stages' steps without a Docker engine.

# 1. build: every dependency (buf and protoc-gen-es run in postinstall: npm run gen), then tsc.
FROM node:24-slim AS build
WORKDIR /src
COPY package.json package-lock.json buf.yaml buf.gen.yaml ./
COPY scripts ./scripts
COPY proto ./proto
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY lib ./lib
COPY functions ./functions
ARG EDGEPILOT_COMMIT=""
RUN EDGEPILOT_COMMIT="${EDGEPILOT_COMMIT}" npm run build

# 2. deps: production dependencies only. --ignore-scripts: the package's postinstall is `npm run gen`,
# which needs buf (a devDependency) and whose output is compiled into dist/ already; no production
# dependency has an install script of its own (libsql ships prebuilt binaries as optional packages).
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# 3. runtime: node_modules (production), dist/ (compiled), bin/ and package.json (its version).
FROM node:24-slim
# As `npm start` runs the server: fewer malloc arenas and a small young generation keep RSS down,
# and no allocation-site pretenuring (objects a push keeps until its ACKs would go straight to the
# old generation and pile up there until a major GC). node refuses that flag in NODE_OPTIONS, so
# the entrypoint passes it.
ENV NODE_ENV=production MALLOC_ARENA_MAX=2 NODE_OPTIONS=--max-semi-space-size=8
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
COPY bin ./bin
RUN ln -s /app/bin/edgepilot.mjs /usr/local/bin/edgepilot
# node (uid 1000, gid 1000) is the base image's unprivileged user; the manifests run as 1000 too.
USER 1000:1000
# PORT (ingest, /ready, REST) and XDS_PORT (gRPC ADS, Connect); the relay's RELAY_HEALTH_PORT in
# infra/k8s is 9090, the agent's ready port 15021.
EXPOSE 8080 15010
ENTRYPOINT ["node", "--no-allocation-site-pretenuring", "/app/bin/edgepilot.mjs"]
CMD ["serve"]
