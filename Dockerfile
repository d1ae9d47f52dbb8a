# syntax=docker/dockerfile:1
# Build: the official Bun image compiles Latchkey into one self-contained executable.
FROM oven/bun:1.4.5 AS build
WORKDIR /src
COPY package.json bun.lock bunfig.toml tsconfig.json ./
RUN bun install --frozen-lockfile --production
COPY src ./src
COPY drizzle ./drizzle
COPY scripts ./scripts
# Builds twice: the second lays the bytecode out by a recorded start of the first (scripts/build.ts).
RUN bun run build \
 && mkdir -p /out/data \
 && chown 65532:65532 /out/data

# Run: a minimal image with only glibc (all the binary links against), as a non-root user.
FROM gcr.io/distroless/base-debian12:nonroot
COPY --from=build /src/dist/latchkey /usr/local/bin/latchkey
COPY --from=build --chown=65532:65532 /out/data /data
ENV DATABASE_URL=/data/latchkey.sqlite \
    NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
USER 65532:65532
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s --retries=3 CMD ["/usr/local/bin/latchkey", "healthcheck"]
# SIGTERM drains in-flight requests and closes the database cleanly.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/latchkey"]
CMD ["serve"]
