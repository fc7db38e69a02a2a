/** parseConfig: the certificate authority's variables, with istiod's names and defaults. */
import { describe, expect, it } from "vitest";
import type { CaSettings } from "../../lib/ca/config.ts";
import { type Env, parseConfig } from "../../lib/config.ts";

const hour = 3_600_000;

describe("parseConfig: ENABLE_CA_SERVER, ROOT_CA_DIR, the TTLs and TOKEN_AUDIENCES", () => {
  const accepted: [string, Env, CaSettings][] = [
    [
      "istiod's defaults",
      {},
      {
        enabled: true,
        defaultWorkloadCertTtlMs: 24 * hour,
        maxWorkloadCertTtlMs: 2160 * hour,
        selfSignedCaCertTtlMs: 87_600 * hour,
        tokenAudiences: ["istio-ca"],
      },
    ],
    [
      "everything set",
      {
        ENABLE_CA_SERVER: "false",
        ROOT_CA_DIR: "/etc/cacerts",
        DEFAULT_WORKLOAD_CERT_TTL: "1h",
        MAX_WORKLOAD_CERT_TTL: "48h",
        CITADEL_SELF_SIGNED_CA_CERT_TTL: "8760h",
        TOKEN_AUDIENCES: "istio-ca, edgepilot-ca",
      },
      {
        enabled: false,
        rootCaDir: "/etc/cacerts",
        defaultWorkloadCertTtlMs: hour,
        maxWorkloadCertTtlMs: 48 * hour,
        selfSignedCaCertTtlMs: 8760 * hour,
        tokenAudiences: ["istio-ca", "edgepilot-ca"],
      },
    ],
  ];
  it.each(accepted)("%s", (_name, env, ca) => {
    const parsed = parseConfig(env);
    if (!parsed.ok) throw new Error(parsed.errors.join("\n"));
    expect(parsed.config.ca).toEqual(ca);
  });

  const refused: [Env, RegExp][] = [
    [{ MAX_WORKLOAD_CERT_TTL: "90 days" }, /^MAX_WORKLOAD_CERT_TTL: not a duration/],
    [{ DEFAULT_WORKLOAD_CERT_TTL: "0s" }, /^DEFAULT_WORKLOAD_CERT_TTL=0s: must be more than 0$/],
    [{ TOKEN_AUDIENCES: " , " }, /^TOKEN_AUDIENCES= , : name at least one audience$/],
    [{ ENABLE_CA_SERVER: "maybe" }, /^ENABLE_CA_SERVER=maybe: not a boolean/],
  ];
  it.each(refused)("refuses %o", (env, error) => {
    const parsed = parseConfig(env);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.errors).toEqual([expect.stringMatching(error)]);
  });
});
