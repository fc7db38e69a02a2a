import { defineConfig } from "vitest/config";

/**
 * Tests that load the machine on purpose (floods of streams and requests, latency kept under
 * attack): run alone, after the rest, so no other file's load decides their outcome.
 */
const alone = ["test/e2e/abuse/**/*.test.ts"];

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "node",
          include: ["test/unit/**/*.test.ts", "test/e2e/**/*.test.ts"],
          exclude: alone,
          environment: "node",
          testTimeout: 30_000,
          hookTimeout: 60_000,
          // Two files at once: most e2e time is waiting on child processes and sockets, and
          // vitest's default on a 2-core machine (cores - 1) leaves one core idle through it.
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: "alone",
          include: alone,
          environment: "node",
          testTimeout: 30_000,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
      "./vitest.workers.config.ts",
    ],
  },
});
