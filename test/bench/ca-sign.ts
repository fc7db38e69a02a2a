import { createXdsHandler } from "../../functions/lambda/xds-host.ts";
import { startNodeRuntime } from "../../functions/node/runtime.ts";
import { loadOrCreateRoot } from "../../lib/ca/self-signed.ts";
import { signCsr } from "../../lib/ca/sign.ts";
import { parseConfig } from "../../lib/config.ts";
import { createDynamoStore } from "../../lib/store/dynamodb.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";
import { startDynalite } from "../support/dynalite.ts";
import { startLambdaHarness } from "../support/lambda-harness.ts";
import { claims, issuer, jwksOf, makeKeys, sign } from "../unit/auth/tokens.ts";
import { csrPem, productpage } from "../unit/ca/builders.ts";
import { startLocalWorker } from "./workerd-probe.ts";

const path = "/istio.v1.auth.IstioCertificateService/CreateCertificate";
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** Calls per second on each host and the floor, medians of `rounds` rounds. */
export interface CaSignReport {
  concurrency: number;
  nodePerSecond: number;
  workerdPerSecond: number;
  lambdaPerSecond: number;
  floorPerSecond: number;
  /** lib/ca's signCsr alone in this process (parse and verify the CSR, build and sign the leaf): the CA's part of a call. */
  signCsrPerSecond: number;
}

type Post = (body: string, token: string) => Promise<Response>;

/** `perRound` calls, `concurrency` at a time; throws on any answer but 200. */
async function round(post: Post, body: string, token: string, perRound: number, concurrency: number) {
  let next = 0;
  const t = performance.now();
  const lane = async () => {
    while (next++ < perRound) {
      const res = await post(body, token);
      const text = await res.text();
      if (res.status !== 200)
        throw new Error(`CreateCertificate answered ${res.status}: ${text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return perRound / ((performance.now() - t) / 1000);
}

/** Measures both hosts and the floor; the hosts' rounds alternate with the floor's. */
export async function measureCaSign(perRound = 300, rounds = 5, concurrency = 8): Promise<CaSignReport> {
  const keys = await makeKeys();
  const vars = {
    XDS_AUTH: "jwt",
    XDS_JWT_ISSUER: issuer,
    XDS_JWT_AUDIENCE: "edgepilot",
    XDS_JWKS: await jwksOf(keys),
  };
  const t = Math.floor(Date.now() / 1000);
  const token = await sign(
    keys,
    "ES256",
    claims({ aud: ["istio-ca"], iat: t, nbf: t - 60, exp: t + 86_400 }),
  );
  const body = JSON.stringify({ csr: await csrPem(), validityDuration: "3600" });
  const headers = (token: string) => ({
    "content-type": "application/json",
    "connect-protocol-version": "1",
    authorization: `Bearer ${token}`,
  });
  const ec = { name: "ECDSA", namedCurve: "P-256" };
  const pair = (await crypto.subtle.generateKey(ec, false, ["sign", "verify"])) as CryptoKeyPair;
  // About a leaf's TBSCertificate.
  const tbs = new Uint8Array(600).fill(7);
  const floorPost: Post = async () => {
    await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, pair.privateKey, tbs);
    return new Response("");
  };

  const root = await loadOrCreateRoot(createMemoryStore(), {
    trustDomain: "cluster.local",
    ttlMs: 86_400_000 * 3650,
    now: Date.now(),
  });
  const csr = await csrPem();
  const signPost: Post = async () => {
    const signed = await signCsr(
      root.bundle,
      { csrPem: csr, identity: productpage, requestedMs: 3_600_000 },
      { defaultMs: 3_600_000, maxMs: 86_400_000 },
      Date.now(),
    );
    if (!signed.ok) throw new Error(signed.error.message);
    return new Response("");
  };

  const parsed = parseConfig({ PORT: "0", XDS_PORT: "0", HOST: "127.0.0.1", ...vars });
  if (!parsed.ok) throw new Error(parsed.errors.join("; "));
  const node = await startNodeRuntime(parsed.config, { log: () => {}, shutdownGraceMs: 100 });
  const local = await startLocalWorker("ca-sign", { EDGEPILOT_TOKEN: "bench", ...vars });
  const worker = local.worker;
  const dynalite = await startDynalite();
  const lambdaConfig = parseConfig(
    {
      ...vars,
      EDGEPILOT_STORE: "dynamodb",
      DYNAMODB_ENDPOINT: dynalite.endpoint,
      DYNAMODB_TABLE: dynalite.table,
    },
    { lambda: true },
  );
  if (!lambdaConfig.ok) throw new Error(lambdaConfig.errors.join("; "));
  const lambdaStore = createDynamoStore({ client: dynalite.client(), table: dynalite.table });
  const lambda = await startLambdaHarness([
    {
      name: "xds",
      url: true,
      timeoutMs: 60_000,
      load: async () => createXdsHandler({ config: lambdaConfig.config, log: () => {}, store: lambdaStore }),
    },
  ]);
  const nodePost: Post = (b, tok) =>
    fetch(`http://127.0.0.1:${node.port}${path}`, { method: "POST", body: b, headers: headers(tok) });
  const lambdaPost: Post = (b, tok) =>
    fetch(`${lambda.url("xds")}${path}`, { method: "POST", body: b, headers: headers(tok) });
  const workerPost: Post = async (b, tok) => {
    const res = await worker.fetch(path, { method: "POST", body: b, headers: headers(tok) });
    return new Response(await res.text(), { status: res.status });
  };
  const rates = {
    node: [] as number[],
    workerd: [] as number[],
    lambda: [] as number[],
    floor: [] as number[],
    signCsr: [] as number[],
  };
  try {
    // Warm-up: the first call builds the CA (and the stored root) on each host.
    await round(nodePost, body, token, concurrency, 1);
    await round(workerPost, body, token, concurrency, 1);
    // Every container the rounds use: `concurrency` calls at once make as many.
    await round(lambdaPost, body, token, concurrency, concurrency);
    for (let r = 0; r < rounds; r++) {
      rates.node.push(await round(nodePost, body, token, perRound, concurrency));
      rates.workerd.push(await round(workerPost, body, token, perRound, concurrency));
      rates.lambda.push(await round(lambdaPost, body, token, perRound, concurrency));
      rates.floor.push(await round(floorPost, body, token, perRound, concurrency));
      rates.signCsr.push(await round(signPost, body, token, perRound, concurrency));
    }
  } finally {
    await local.stop();
    await node.stop();
    await lambda.close();
    await Promise.race([dynalite.stop(), new Promise((r) => setTimeout(r, 200))]);
  }
  return {
    concurrency,
    nodePerSecond: median(rates.node),
    workerdPerSecond: median(rates.workerd),
    lambdaPerSecond: median(rates.lambda),
    floorPerSecond: median(rates.floor),
    signCsrPerSecond: median(rates.signCsr),
  };
}

/** Prints the table `npm run bench` shows. */
export function printCaSign(r: CaSignReport): void {
  console.log(
    `host    | CreateCertificate calls/s (${r.concurrency} in flight) | lib/ca signCsr alone/s | floor: WebCrypto ECDSA P-256 sign/s`,
  );
  const row = (host: string, rate: number) =>
    console.log(
      `${host.padEnd(7)} | ${rate.toFixed(0).padStart(38)} | ${r.signCsrPerSecond.toFixed(0).padStart(22)} | ${r.floorPerSecond.toFixed(0).padStart(35)}`,
    );
  row("Node", r.nodePerSecond);
  row("workerd", r.workerdPerSecond);
  row("Lambda", r.lambdaPerSecond);
  console.log("(signCsr and the floor run in this Node process, in the same run)");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printCaSign(await measureCaSign(Number(process.argv[2] ?? 300)));
}
