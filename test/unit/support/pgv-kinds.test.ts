/**
 * Which validate.proto rule kinds Envoy's generated messages carry, read from every descriptor under
 * lib/gen/envoy (and the cncf/xds files Envoy imports): each must be one test/support/pgv checks, or
 * this fails naming the kind and a field that uses it. Also: the registry the checker unpacks Any
 * with holds every generated Envoy file, so a root added to scripts/gen.mjs cannot go unchecked.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { DescFile, DescMessage } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { envoyTypes } from "../../support/pgv/index.ts";
import { implementedRuleKinds, ruleKindsUsed } from "../../support/pgv/rule-kinds.ts";

const gen = join(import.meta.dirname, "../../../lib/gen");
const pbFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const f = join(dir, n);
    return statSync(f).isDirectory() ? pbFiles(f) : n.endsWith("_pb.ts") ? [f] : [];
  });

async function generatedFiles(): Promise<DescFile[]> {
  const files: DescFile[] = [];
  for (const f of [...pbFiles(join(gen, "envoy")), ...pbFiles(join(gen, "xds"))]) {
    const mod = (await import(f)) as Record<string, unknown>;
    for (const v of Object.values(mod))
      if ((v as DescFile | undefined)?.kind === "file") files.push(v as DescFile);
  }
  return files;
}

function allMessages(files: DescFile[]): DescMessage[] {
  const out: DescMessage[] = [];
  const visit = (m: DescMessage) => {
    out.push(m);
    m.nestedMessages.forEach(visit);
  };
  for (const f of files) f.messages.forEach(visit);
  return out;
}

describe("the PGV rule kinds Envoy uses", () => {
  it("every kind set on a generated Envoy field is implemented", async () => {
    const files = await generatedFiles();
    const messages = allMessages(files);
    expect(messages.length).toBeGreaterThan(300);
    const used = ruleKindsUsed(messages);
    // The walk finds the kinds we know Envoy's protos carry: it reads the descriptors for real.
    for (const k of ["string.min_len", "message.required", "oneof.required", "duration.gt", "repeated.items"])
      expect(used.has(k), k).toBe(true);
    const missing = [...used]
      .filter(([k]) => !implementedRuleKinds.includes(k))
      .map(([k, w]) => `${k} (e.g. ${w[0]})`);
    expect(missing, "rule kinds Envoy's protos use that test/support/pgv does not check").toEqual([]);
  });

  it("the kind reader names a kind it is not told about", () => {
    const used = ruleKindsUsed(allMessages(envoyTypes().files));
    const pretend = implementedRuleKinds.filter((k) => k !== "string.min_len");
    expect([...used.keys()].filter((k) => !pretend.includes(k))).toEqual(["string.min_len"]);
  });

  it("the registry Any is unpacked with holds every generated Envoy and xds file", async () => {
    const names = new Set(envoyTypes().files.map((f) => f.name));
    const missing = (await generatedFiles()).map((f) => f.name).filter((n) => !names.has(n));
    expect(missing, "add the file's root to test/support/pgv/registry.ts").toEqual([]);
  });
});
