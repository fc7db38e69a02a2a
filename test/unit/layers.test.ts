/**
 * lib/ imports in one direction only: every folder of lib/ (and every file at its top) has a layer,
 * and a module may import only from its own folder or from a lower layer. Type-only imports count
 * too: a type that two layers share belongs in the lower one (lib/resources for xDS resources,
 * changes, pushes, push contexts and views). Some layers are also kept apart: push and ingest (the
 * write side) and xds (the read side) meet only in lib/resources below them and lib/core between
 * them. A new folder fails here until it is given a layer.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Lowest first. A unit is a lib/ folder, or a file directly in lib/ (named with its extension). */
const layers: readonly (readonly string[])[] = [
  [
    "gen",
    "same-json.ts",
    "clock.ts",
    "utf8.ts",
    "log-safe.ts",
    "serial.ts",
    "take-first.ts",
    "token-bucket.ts",
    "listen-error.ts",
  ],
  ["pace.ts", "timers.ts", "cli-flags.ts", "model", "log", "kinds"],
  ["store"],
  ["shards", "auth"],
  ["registry", "ca"],
  ["resources"],
  ["push"],
  ["ingest"],
  ["core"],
  ["xds"],
  ["metrics", "debug"],
  ["relay"],
  ["agent"],
  ["config.ts", "serve-flags.ts"],
];

/** Units that never import one another, whatever their layers: the write side and the read side. */
const apart: readonly (readonly [string, string])[] = [
  ["xds", "push"],
  ["xds", "ingest"],
];

const rank = new Map<string, number>();
layers.forEach((units, i) => {
  for (const u of units) rank.set(u, i);
});

/** The unit a lib/ path belongs to. */
function unitOf(path: string): string {
  return relative(join(root, "lib"), path).split(/[\\/]/)[0] as string;
}

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (p !== join(root, "lib", "gen")) out.push(...tsFiles(p));
    } else if (e.name.endsWith(".ts")) out.push(p);
  }
  return out;
}

/** Every relative module specifier of `source`: static imports and re-exports, type-only or not, and import(). */
function specifiers(source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?\bfrom\s*["'](\.[^"']+)["']/g))
    out.push(m[1] as string);
  for (const m of source.matchAll(/\bimport\(\s*["'](\.[^"']+)["']\s*\)/g)) out.push(m[1] as string);
  return out;
}

/** Every import between two units of lib/: [from file, to file, from unit, to unit]. */
function crossImports(): [string, string, string, string][] {
  const out: [string, string, string, string][] = [];
  for (const file of tsFiles(join(root, "lib"))) {
    for (const spec of specifiers(readFileSync(file, "utf8"))) {
      const target = normalize(join(dirname(file), spec));
      if (!target.startsWith(join(root, "lib"))) continue;
      const a = unitOf(file);
      const b = unitOf(target);
      if (a !== b) out.push([relative(root, file), relative(root, target), a, b]);
    }
  }
  return out;
}

describe("lib/ layers", () => {
  const imports = crossImports();

  it("finds the imports it judges", () => {
    expect(imports.length).toBeGreaterThan(100);
    expect(specifiers('import type { A } from "../x/y.ts";\nexport { b } from "./b.ts";')).toEqual([
      "../x/y.ts",
      "./b.ts",
    ]);
  });

  it("gives every unit of lib/ a layer", () => {
    const units = new Set(tsFiles(join(root, "lib")).map(unitOf));
    expect([...units].filter((u) => !rank.has(u)).sort()).toEqual([]);
  });

  it("imports only from lower layers", () => {
    const upward = imports
      .filter(([, , a, b]) => (rank.get(b) ?? -1) >= (rank.get(a) ?? Number.POSITIVE_INFINITY))
      .map(([from, to]) => `${from} -> ${to}`);
    expect(upward).toEqual([]);
  });

  it("keeps the write side and the read side apart", () => {
    const across = imports
      .filter(([, , a, b]) => apart.some(([x, y]) => (a === x && b === y) || (a === y && b === x)))
      .map(([from, to]) => `${from} -> ${to}`);
    expect(across).toEqual([]);
  });
});
