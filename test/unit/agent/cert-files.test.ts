/**
 * functions/node/agent-cert-files.ts: the proxyless files are swapped as one (the `..data` link),
 * read through their names, the key readable by its owner only, old versions removed, and a plain
 * file left in the directory replaced by the link.
 */
import { lstatSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { certFileNames, writeCertFiles } from "../../../functions/node/agent-cert-files.ts";
import type { WorkloadSecret } from "../../../lib/agent/cert-machine.ts";

const secret = (v: string): WorkloadSecret => ({
  certChainPem: `chain ${v}\n`,
  privateKeyPem: `key ${v}\n`,
  rootCertPem: `root ${v}\n`,
  createdAt: 0,
  expiresAt: 1,
  version: v,
});
const read = (dir: string) =>
  Object.values(certFileNames).map((name) => readFileSync(join(dir, name), "utf8"));

describe("writeCertFiles", () => {
  it("writes Istio's three files through one link, and replaces them together", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "edgepilot-certfiles-")), "certs");
    writeCertFiles(dir, secret("1"));
    expect(read(dir)).toEqual(["chain 1\n", "key 1\n", "root 1\n"]);
    writeCertFiles(dir, secret("2"));
    expect(read(dir)).toEqual(["chain 2\n", "key 2\n", "root 2\n"]);
    for (const name of Object.values(certFileNames))
      expect(lstatSync(join(dir, name)).isSymbolicLink()).toBe(true);
    expect(lstatSync(join(dir, "..data")).isSymbolicLink()).toBe(true);
    // One version directory remains: the one ..data names.
    const versions = readdirSync(dir).filter((e) => e.startsWith("..") && e !== "..data");
    expect(versions).toHaveLength(1);
    expect(statSync(join(dir, certFileNames.key)).mode & 0o777).toBe(0o600);
  });

  it("replaces a plain file left in the directory", () => {
    const dir = mkdtempSync(join(tmpdir(), "edgepilot-certfiles-"));
    writeFileSync(join(dir, certFileNames.chain), "someone else's\n");
    writeCertFiles(dir, secret("1"));
    expect(readFileSync(join(dir, certFileNames.chain), "utf8")).toBe("chain 1\n");
    expect(readdirSync(dir).filter((e) => e.endsWith(".tmp"))).toEqual([]);
  });
});
