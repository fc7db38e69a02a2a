/**
 * wrangler.toml is ready for `wrangler deploy`: minified, observability on, a route placeholder,
 * the secrets listed (here and in docs/tasks/cloudflare.md); and `wrangler deploy --dry-run --outdir` (offline:
 * it bundles and checks the configuration without an account) builds the Worker. About 8 s.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const toml = readFileSync(join(root, "wrangler.toml"), "utf8");
const doc = readFileSync(join(root, "docs", "tasks", "cloudflare.md"), "utf8");

describe("wrangler.toml", () => {
  it("minifies, turns observability on, documents a route and the secrets", () => {
    expect(toml).toMatch(/^minify = true$/m);
    expect(toml).toMatch(/^\[observability\]\nenabled = true$/m);
    expect(toml).toMatch(/^# routes = \[\{ pattern = "[^"]+", custom_domain = true \}\]$/m);
    for (const secret of ["EDGEPILOT_TOKEN", "EDGEPILOT_XDS_TOKEN"]) {
      expect(toml).toContain(`wrangler secret put ${secret}`);
      expect(doc).toContain(`npx wrangler secret put ${secret}`);
      // A secret is never a var.
      expect(toml).not.toMatch(new RegExp(`^${secret}\\s*=`, "m"));
    }
  });

  it("builds with wrangler deploy --dry-run (minified bundle)", () => {
    const out = mkdtempSync(join(tmpdir(), "edgepilot-wrangler-"));
    try {
      const log = execFileSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", out], {
        cwd: root,
        encoding: "utf8",
        stdio: "pipe",
        env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
      });
      expect(log).toContain("--dry-run: exiting now.");
      expect(log).toMatch(/env\.MESH \(MeshStore\)\s+Durable Object/);
      const bundle = readFileSync(join(out, "index.js"), "utf8");
      expect(statSync(join(out, "index.js")).size).toBeGreaterThan(100_000);
      // Minified: long lines, not one statement per line.
      expect(bundle.length / bundle.split("\n").length).toBeGreaterThan(500);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);
});
