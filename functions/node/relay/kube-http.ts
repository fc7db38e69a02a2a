/**
 * Raw GETs against the API server with client-node's KubeConfig (TLS, tokens, exec plugins, token
 * files that rotate). Raw on purpose: the generated clients turn objects into typed models (dates,
 * dropped unknown fields), and the relay must post objects exactly as the API server sent them.
 */
import { request as httpRequest, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";

/** A non-2xx answer from the API server, with the Status message when there is one. */
export class KubeHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "KubeHttpError";
  }
}

/** Longest a single GET (one list page, one discovery document) may take. */
const requestTimeoutMs = 60_000;

/** GETs `path` with `query` and parses the JSON answer; throws KubeHttpError on a non-2xx status. */
export async function kubeGet(
  kc: KubeConfig,
  path: string,
  query: Record<string, string | number | undefined>,
  signal: AbortSignal,
): Promise<unknown> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error("the kubeconfig has no current cluster");
  const url = new URL(cluster.server.replace(/\/+$/, "") + path);
  for (const [k, v] of Object.entries(query))
    if (v !== undefined && v !== "") url.searchParams.set(k, String(v));
  // Applied per request: in-cluster service account tokens rotate, and client-node rereads them.
  const opts: RequestOptions = { method: "GET", headers: { accept: "application/json" } };
  await kc.applyToHTTPSOptions(opts);
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  const timeout = AbortSignal.any([signal, AbortSignal.timeout(requestTimeoutMs)]);
  return new Promise((resolve, reject) => {
    const req = request(url, { ...opts, signal: timeout }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const status = res.statusCode ?? 0;
        if (status < 200 || status >= 300) {
          reject(new KubeHttpError(status, `GET ${url.pathname}: ${status} ${statusMessage(text)}`));
          return;
        }
        try {
          resolve(JSON.parse(text));
        } catch {
          reject(new Error(`GET ${url.pathname}: answer is not JSON: ${text.slice(0, 200)}`));
        }
      });
    });
    req.on("error", reject);
    req.end();
  });
}

function statusMessage(text: string): string {
  try {
    const s = JSON.parse(text) as { reason?: string; message?: string };
    return [s.reason, s.message].filter(Boolean).join(": ") || text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}
