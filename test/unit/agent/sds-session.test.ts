/**
 * lib/agent/sds-session.ts: an SDS stream is answered once the certificate exists, ACKs and stale
 * nonces are answered with nothing, a NACK is logged and not resent, a new certificate is pushed to
 * a stream that asked; the Secrets are Istio's (`default`: chain and key, `ROOTCA`: trusted CA).
 */
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import type { WorkloadSecret } from "../../../lib/agent/cert-machine.ts";
import {
  newSdsSession,
  onSdsPublish,
  onSdsRequest,
  type SdsSession,
  sdsResources,
  sdsSecret,
} from "../../../lib/agent/sds-session.ts";
import { SecretSchema } from "../../../lib/gen/envoy/extensions/transport_sockets/tls/v3/secret_pb.ts";

const secret = (version: string): WorkloadSecret => ({
  certChainPem: `chain-${version}`,
  privateKeyPem: `key-${version}`,
  rootCertPem: "root",
  createdAt: 0,
  expiresAt: 1,
  version,
});
const ask = (names: string[], responseNonce = "", errorDetail?: { message: string }) => ({
  resourceNames: names,
  responseNonce,
  errorDetail,
});
/** The session after its response went out with `nonce` (the driver's part). */
const sent = (s: SdsSession, nonce: string): SdsSession => ({ ...s, nonce });

describe("SDS session", () => {
  it("answers the names asked for with the current certificate, then nothing on the ACK", () => {
    const first = onSdsRequest(newSdsSession(), ask(["ROOTCA", "default"]), secret("1"));
    expect(first.send).toEqual({ names: ["ROOTCA", "default"], secret: secret("1") });
    const s = sent(first.session, "n1");
    expect(onSdsRequest(s, ask(["default", "ROOTCA"], "n1"), secret("1"))).toEqual({ session: s });
  });

  it("waits for the first certificate, then sends it on publish", () => {
    const waiting = onSdsRequest(newSdsSession(), ask(["default"]), undefined);
    expect(waiting.send).toBeUndefined();
    const pushed = onSdsPublish(waiting.session, secret("1"));
    expect(pushed.send).toEqual({ names: ["default"], secret: secret("1") });
    // The same version again (a second listener call) is not resent.
    expect(onSdsPublish(pushed.session, secret("1")).send).toBeUndefined();
  });

  it("pushes every new certificate to a stream that asked, and none to one that did not", () => {
    const s = sent(onSdsRequest(newSdsSession(), ask(["default"]), secret("1")).session, "n1");
    expect(onSdsPublish(s, secret("2")).send).toEqual({ names: ["default"], secret: secret("2") });
    expect(onSdsPublish(newSdsSession(), secret("2")).send).toBeUndefined();
  });

  it("ignores a stale nonce, answers a change of names, logs a NACK without resending", () => {
    const s = sent(onSdsRequest(newSdsSession(), ask(["default"]), secret("1")).session, "n2");
    expect(onSdsRequest(s, ask(["default", "ROOTCA"], "n1"), secret("1"))).toEqual({ session: s });
    expect(onSdsRequest(s, ask(["default", "ROOTCA"], "n2"), secret("1")).send?.names).toEqual([
      "ROOTCA",
      "default",
    ]);
    const nack = onSdsRequest(s, ask(["default"], "n2", { message: "bad key" }), secret("1"));
    expect(nack.send).toBeUndefined();
    expect(nack.log).toMatch(/Envoy refused secrets default version 1: bad key/);
  });

  it("says which names it does not serve and leaves them out", () => {
    const step = onSdsRequest(newSdsSession(), ask(["default", "file-root:/etc/ca.pem"]), secret("1"));
    expect(step.log).toMatch(/asks for file-root:\/etc\/ca.pem; only default and ROOTCA are served/);
    expect(sdsResources(step.send?.names ?? [], secret("1"))).toHaveLength(1);
  });
});

describe("SDS secrets", () => {
  it("builds default (chain and key) and ROOTCA (trusted CA) as inline bytes", () => {
    const text = (b: { specifier: { case: string | undefined; value?: unknown } } | undefined) =>
      new TextDecoder().decode(b?.specifier.value as Uint8Array);
    const def = sdsSecret("default", secret("3"));
    expect(def?.type.case).toBe("tlsCertificate");
    if (def?.type.case !== "tlsCertificate") return;
    expect(text(def.type.value.certificateChain)).toBe("chain-3");
    expect(text(def.type.value.privateKey)).toBe("key-3");
    const [packed] = sdsResources(["ROOTCA"], secret("3"));
    const root = packed && anyUnpack(packed, SecretSchema);
    expect(root?.name).toBe("ROOTCA");
    if (root?.type.case !== "validationContext") throw new Error("not a validation context");
    expect(text(root.type.value.trustedCa)).toBe("root");
  });
});
