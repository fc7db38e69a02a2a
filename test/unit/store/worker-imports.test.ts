/**
 * The file store is Node only (a native SQLite binding): nothing the Worker bundles may reach it.
 * Follows every static and dynamic import from the Worker's entry, as the bundler would.
 */
import { readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g;

/** Every module reachable from `entry` (relative paths from the root; packages by name). */
function reachable(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    const name = relative(root, file);
    if (seen.has(name)) return;
    seen.add(name);
    const source = readFileSync(file, "utf8");
    for (const m of source.matchAll(IMPORT)) {
      const spec = (m[1] ?? m[2])!;
      if (spec.startsWith(".")) visit(resolve(dirname(file), spec));
      else seen.add(spec);
    }
  };
  visit(resolve(root, entry));
  return seen;
}

describe("the Worker bundle", () => {
  it("reaches the SQL store but never the file store, libsql, the DynamoDB store or the AWS SDK", () => {
    const modules = reachable("functions/workers/index.ts");
    expect(modules).toContain("lib/store/sql.ts");
    const nodeOnly = [...modules].filter(
      (m) =>
        m === "lib/store/file.ts" ||
        m === "libsql" ||
        m.startsWith("functions/node/") ||
        m.startsWith("lib/store/dynamodb") ||
        m.startsWith("@aws-sdk/"),
    );
    expect(nodeOnly).toEqual([]);
  });

  it("is followed the same way into the Node runtime, which does reach the file store", () => {
    const modules = reachable("functions/node/main.ts");
    expect(modules).toContain("lib/store/file.ts");
    expect(modules).toContain("libsql");
    expect(modules).toContain("lib/store/dynamodb.ts");
  });
});
