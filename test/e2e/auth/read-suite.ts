/**
 * XDS_AUTH=jwt on every unary and server-streaming read path, run against every runtime:
 * test/e2e/auth/jwt.test.ts (Node: Connect over h2c on XDS_PORT, REST on PORT) and
 * test/workers/auth.test.ts (the Worker, Poll and Watch through its MeshStore). Raw HTTP, so the
 * status codes and messages are what any client sees: 401 unauthenticated, 403 for a node of
 * another namespace, 400 for a missing node; 200 for a good token.
 */
import { beforeAll, describe, expect, it } from "vitest";

const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";

/** A node id in `ns`, as an Istio sidecar names itself. */
export const nodeIn = (ns: string) => ({
  id: `sidecar~10.1.0.9~productpage-1.${ns}~${ns}.svc.cluster.local`,
  metadata: { GENERATOR: "grpc" },
});

/** What a runtime gives the suite. */
export interface AuthHarness {
  /** POSTs `body` to `path` where the runtime serves it, with `headers`. */
  post(path: string, body: Uint8Array | string, headers: Record<string, string>): Promise<Response>;
  /** Tokens for default/productpage: valid, expired, for another audience, from another issuer. */
  tokens: { good: string; expired: string; wrongAudience: string; wrongIssuer: string };
}

type Call = { name: string; path: string; body: (node?: object) => unknown; streaming?: boolean };

const calls: Call[] = [
  {
    name: "FetchClusters",
    path: "/envoy.service.cluster.v3.ClusterDiscoveryService/FetchClusters",
    body: (node) => ({ node, typeUrl: CDS }),
  },
  {
    name: "Poll",
    path: "/edgepilot.xds.v1.DeltaPollService/Poll",
    body: (node) => ({ request: { node, typeUrl: CDS } }),
  },
  {
    name: "Watch",
    path: "/edgepilot.xds.v1.DeltaPollService/Watch",
    body: (node) => ({ request: { node, typeUrl: CDS } }),
    streaming: true,
  },
  { name: "REST", path: "/v3/discovery:clusters", body: (node) => ({ node, typeUrl: CDS }) },
];

/** One call; answers the HTTP status and, for Connect, the error code ("" when it succeeded) and message. */
async function call(h: AuthHarness, c: Call, token: string | undefined, node?: object) {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const json = JSON.stringify(c.body(node));
  let res: Response;
  if (c.streaming) {
    // Connect server-streaming: one enveloped JSON message; the error comes in the end-stream frame.
    const payload = new TextEncoder().encode(json);
    const frame = new Uint8Array(5 + payload.length);
    new DataView(frame.buffer).setUint32(1, payload.length);
    frame.set(payload, 5);
    res = await h.post(c.path, frame, {
      ...headers,
      "content-type": "application/connect+json",
      "connect-protocol-version": "1",
    });
    const reader = res.body?.getReader();
    const first = reader ? await reader.read() : { value: undefined };
    await reader?.cancel().catch(() => {});
    const bytes = first.value ?? new Uint8Array();
    const flags = bytes[0] ?? 0;
    const text = new TextDecoder().decode(bytes.subarray(5));
    if ((flags & 2) === 0) return { status: res.status, code: "", message: "" };
    const end = JSON.parse(text) as { error?: { code: string; message: string } };
    return { status: res.status, code: end.error?.code ?? "", message: end.error?.message ?? "" };
  }
  res = await h.post(c.path, json, {
    ...headers,
    "content-type": "application/json",
    "connect-protocol-version": "1",
  });
  const text = await res.text();
  if (res.status === 200) return { status: 200, code: "", message: "" };
  const body = JSON.parse(text) as { code?: string; message?: string; error?: string };
  return { status: res.status, code: body.code ?? "", message: body.message ?? body.error ?? "" };
}

/** Registers the suite; `harness` is called once the runtime is up (in beforeAll). */
export function describeReadAuthSuite(runtime: string, harness: () => AuthHarness | Promise<AuthHarness>) {
  let h: AuthHarness;
  beforeAll(async () => {
    h = await harness();
  });

  describe(`XDS_AUTH=jwt on every read path on ${runtime}`, () => {
    const own = nodeIn("default");
    const refusals: [string, (t: AuthHarness["tokens"]) => string | undefined, RegExp][] = [
      [
        "no token",
        () => undefined,
        /missing credentials: send `authorization: Bearer <service-account JWT>`/,
      ],
      ["a wrong token", () => "not-a-jwt", /invalid token: malformed token/],
      ["an expired token", (t) => t.expired, /invalid token: token expired at/],
      ["a token for another audience", (t) => t.wrongAudience, /invalid token: audience "vault"/],
      ["a token from another issuer", (t) => t.wrongIssuer, /invalid token: issuer/],
    ];
    for (const c of calls) {
      it(`${c.name}: a good token and its own namespace's node ▶ served`, async () => {
        expect(await call(h, c, h.tokens.good, own)).toEqual({ status: 200, code: "", message: "" });
      });
      it.each(refusals)(`${c.name}: %s ▶ unauthenticated`, async (_name, token, message) => {
        const r = await call(h, c, token(h.tokens), own);
        if (c.streaming) expect(r.code).toBe("unauthenticated");
        else expect([r.status, r.code]).toEqual([401, c.name === "REST" ? "" : "unauthenticated"]);
        expect(r.message).toMatch(message);
      });
      it(`${c.name}: a node of another namespace ▶ permission denied`, async () => {
        const r = await call(h, c, h.tokens.good, nodeIn("kube-system"));
        if (!c.streaming) expect(r.status).toBe(403);
        if (c.name !== "REST") expect(r.code).toBe("permission_denied");
        expect(r.message).toMatch(
          /^authorization failed: node ".*kube-system.*" claims .* but its token is for "default\/productpage"/,
        );
      });
      it(`${c.name}: no node ▶ invalid argument (jwt mode: every read names its node)`, async () => {
        const r = await call(h, c, h.tokens.good);
        if (!c.streaming) expect(r.status).toBe(400);
        if (c.name !== "REST") expect(r.code).toBe("invalid_argument");
        expect(r.message).toMatch(/^missing node information: with XDS_AUTH=jwt/);
      });
    }

    it("StatusService: served with a good token, unauthenticated without one", async () => {
      const status = (token?: string) =>
        h.post("/edgepilot.v1.StatusService/GetStatus", "{}", {
          "content-type": "application/json",
          "connect-protocol-version": "1",
          ...(token && { authorization: `Bearer ${token}` }),
        });
      expect((await status(h.tokens.good)).status).toBe(200);
      const refused = await status();
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ code: "unauthenticated" });
    });
  });
}
