/**
 * Raw requests to the API server with client-node's KubeConfig (TLS, tokens, exec plugins, token
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

/** Longest a single request (one list page, one discovery document, one status write) may take. */
const requestTimeoutMs = 60_000;

/** An API server answer: its status, its body as text, and the Status reason of a non-2xx one. */
export interface KubeAnswer {
  status: number;
  text: string;
  /** A non-2xx answer's Status `reason: message` (or the start of its body). */
  reason?: string;
}

/** One request to the API server (`body`: JSON sent as is); network failures and timeouts reject. */
export async function kubeRequest(
  kc: KubeConfig,
  request: {
    method: "GET" | "PUT";
    path: string;
    query?: Record<string, string | number | undefined>;
    body?: string;
    signal: AbortSignal;
  },
): Promise<KubeAnswer> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error("the kubeconfig has no current cluster");
  const url = new URL(cluster.server.replace(/\/+$/, "") + request.path);
  for (const [k, v] of Object.entries(request.query ?? {}))
    if (v !== undefined && v !== "") url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { accept: "application/json" };
  if (request.body !== undefined) headers["content-type"] = "application/json";
  // Applied per request: in-cluster service account tokens rotate, and client-node rereads them.
  const opts: RequestOptions = { method: request.method, headers };
  await kc.applyToHTTPSOptions(opts);
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  const timeout = AbortSignal.any([request.signal, AbortSignal.timeout(requestTimeoutMs)]);
  return new Promise((resolve, reject) => {
    const req = send(url, { ...opts, signal: timeout }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const status = res.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        resolve({ status, text, ...(!ok && { reason: statusMessage(text) }) });
      });
    });
    req.on("error", reject);
    req.end(request.body);
  });
}

/** GETs `path` with `query` and parses the JSON answer; throws KubeHttpError on a non-2xx status. */
export async function kubeGet(
  kc: KubeConfig,
  path: string,
  query: Record<string, string | number | undefined>,
  signal: AbortSignal,
): Promise<unknown> {
  const { status, text, reason } = await kubeRequest(kc, { method: "GET", path, query, signal });
  if (status < 200 || status >= 300) throw new KubeHttpError(status, `GET ${path}: ${status} ${reason}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`GET ${path}: answer is not JSON: ${text.slice(0, 200)}`);
  }
}

function statusMessage(text: string): string {
  try {
    const s = JSON.parse(text) as { reason?: string; message?: string };
    return [s.reason, s.message].filter(Boolean).join(": ") || text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}
