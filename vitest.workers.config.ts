import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineProject } from "vitest/config";
import { testLimits } from "./test/e2e/poll/test-limits.ts";

/** The bearer token the workerd tests ingest with (a var here; a secret in production). */
const testToken = "workers-test-token";
/** The xDS read token (XDS_AUTH=token, as wrangler.toml sets it); test/workers/auth.test.ts builds jwt envs too. */
const testXdsToken = "workers-test-xds-token";

/**
 * Tests that run inside real workerd (@cloudflare/vitest-plugin 1.4, formerly vitest-pool-workers).
 * Bindings, vars and the main module (which exports MeshStore) come from wrangler.toml, plus
 * EDGEPILOT_TOKEN, XDS_AUTH=token with its EDGEPILOT_XDS_TOKEN, and the limits suite's small limits; storage is isolated per test file.
 */
export default defineProject({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      // PILOT_SYNC_TIMEOUT 0s: the suites post events without resyncs and test removals at once
      // (test/workers/restart.test.ts drives the sync record itself).
      miniflare: {
        bindings: {
          EDGEPILOT_TOKEN: testToken,
          PILOT_SYNC_TIMEOUT: "0s",
          XDS_AUTH: "token",
          EDGEPILOT_XDS_TOKEN: testXdsToken,
          ...testLimits,
        },
      },
    }),
  ],
  test: {
    name: "workers",
    include: ["test/workers/**/*.test.ts"],
    testTimeout: 30_000,
  },
});
