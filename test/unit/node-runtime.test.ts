/**
 * The Node the project runs and tests on is one version everywhere: the npm package `node`
 * (a devDependency, pinned exactly) puts its binary first on the PATH of every npm script, so
 * `npm test` (and CI's .ci/run) runs on it even where the machine's own Node is older; engines,
 * @types/node and the Dockerfile's base image name the same major.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url);
const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
};
const pinned = pkg.devDependencies.node ?? "";
const major = (v: string) => Number(/^v?(\d+)\./.exec(v)?.[1]);

describe("Node runtime", () => {
  it("the devDependency node is pinned exactly", () => {
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("the tests run on that Node (run them through npm: `npm test`, `npx vitest`)", () => {
    expect(process.versions.node, `tests run on ${process.execPath}`).toBe(pinned);
  });

  it("engines.node is >=<that major>", () => {
    expect(pkg.engines.node).toBe(`>=${major(pinned)}`);
  });

  it("@types/node has the same major", () => {
    expect(major(pkg.devDependencies["@types/node"] ?? "")).toBe(major(pinned));
  });

  it("every stage of the Dockerfile is node:<that major>-slim", () => {
    const dockerfile = readFileSync(new URL("Dockerfile", root), "utf8");
    const bases = [...dockerfile.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]);
    expect(bases.length).toBeGreaterThan(0);
    for (const b of bases) expect(b).toBe(`node:${major(pinned)}-slim`);
  });
});
