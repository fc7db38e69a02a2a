/**
 * The CreateCertificate requests every host must refuse, with the code and message istiod's CA
 * answers: test/e2e/ca (Node) and test/workers/ca.test.ts (workerd) both send them, so the hosts
 * cannot drift apart. Each host supplies its own token minting and CSR making; the TTL refusal
 * assumes MAX_WORKLOAD_CERT_TTL=48h.
 */
import { Code } from "@connectrpc/connect";

/** What a host's test makes requests with. */
export interface RefusalMakers {
  /** A token for default/productpage for `aud`, valid now unless `overrides` say otherwise. */
  mint: (aud?: string[], overrides?: Record<string, unknown>) => Promise<string>;
  /** A CSR as istio-agent makes it, asking for `san` (default: default/productpage's SPIFFE ID). */
  csr: (san?: string) => Promise<string>;
}

/** name, token (undefined: none), CSR, validity_duration (s), code, message. */
export type Refusal = [
  string,
  () => Promise<string | undefined>,
  () => Promise<string>,
  bigint,
  Code,
  RegExp,
];

/** The refusals, built with a host's makers. */
export function caRefusals({ mint, csr }: RefusalMakers): Refusal[] {
  const other = "spiffe://cluster.local/ns/kube-system/sa/default";
  return [
    [
      "no token",
      async () => undefined,
      () => csr(),
      0n,
      Code.Unauthenticated,
      /^request authenticate failure: missing credentials/,
    ],
    [
      "a token for another audience (the xDS one)",
      () => mint(["edgepilot"]),
      () => csr(),
      0n,
      Code.Unauthenticated,
      /^request authenticate failure: invalid token: audience "edgepilot" is not one of istio-ca \(TOKEN_AUDIENCES\)$/,
    ],
    [
      "a token of another issuer",
      () => mint(["istio-ca"], { iss: "https://evil.example" }),
      () => csr(),
      0n,
      Code.Unauthenticated,
      /^request authenticate failure: invalid token: issuer/,
    ],
    [
      "an expired token",
      () => mint(["istio-ca"], { exp: Math.floor(Date.now() / 1000) - 3600 }),
      () => csr(),
      0n,
      Code.Unauthenticated,
      /^request authenticate failure: invalid token: token expired at/,
    ],
    [
      "a CSR asking for another namespace's identity",
      () => mint(),
      () => csr(other),
      0n,
      Code.InvalidArgument,
      /^CSR signing error \(unable to validate SAN Identities in CSR: it asks for url:spiffe:\/\/cluster.local\/ns\/kube-system\/sa\/default/,
    ],
    [
      "a garbage CSR",
      () => mint(),
      async () => "garbage",
      0n,
      Code.InvalidArgument,
      /^CSR signing error \(certificate signing request is not properly encoded\)$/,
    ],
    [
      "a TTL above MAX_WORKLOAD_CERT_TTL",
      () => mint(),
      () => csr(),
      3n * 86400n,
      Code.InvalidArgument,
      /^CSR signing error \(requested TTL 72h0m0s is greater than the max allowed TTL 48h0m0s\)$/,
    ],
  ];
}
