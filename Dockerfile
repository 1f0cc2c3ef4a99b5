# h5store in a container: Debian 12 (bookworm) slim with Node 20 (the official node image),
# Debian's libhdf5 and filter plugins, a non-root user, the data directory as a volume.
# The same Debian packages and npm steps as .ci/run and `npm start` (test/unit/deploy-files.test.ts
# checks they stay the same). Build and run: docs/deploy.md.

# --- build: compile TypeScript to dist/ ---
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
RUN npm ci --no-audit --no-fund
COPY src ./src
COPY scripts ./scripts
COPY viewer ./viewer
RUN npm run build

# --- plugins: the bitshuffle filter plugin from Debian's source package (scripts/build-plugins.mjs
# installs its build packages and a deb-src entry itself, as root, in this stage only) ---
FROM node:20-bookworm-slim AS plugins
ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /app
COPY scripts/build-plugins.mjs ./scripts/
RUN node scripts/build-plugins.mjs

# --- runtime ---
FROM node:20-bookworm-slim
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      libhdf5-103-1 liblzf1 hdf5-plugin-lzf hdf5-filter-plugin hdf5-filter-plugin-blosc-serial \
      hdf5-filter-plugin-zfp-serial libzstd1 liblz4-1 libdeflate0 \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# found by the server when no pluginPath is set (build/hdf5-plugins beside dist/)
COPY --from=plugins /app/build/hdf5-plugins ./build/hdf5-plugins
ARG H5STORE_BUILD_COMMIT=""
ENV H5STORE_BUILD_COMMIT=$H5STORE_BUILD_COMMIT \
    NODE_ENV=production \
    H5STORE_ROOT=/data \
    H5STORE_HOST=0.0.0.0 \
    H5STORE_PORT=5101
# the image's non-root user `node` (uid 1000) owns the data directory
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 5101
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.H5STORE_PORT||5101)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/cli.js", "serve"]
