/**
 * A real HTTP server answering as the AWS Parameters and Secrets Lambda extension does, for tests:
 * `GET /secretsmanager/get?secretId=<arn>` with the session token in X-Aws-Parameters-Secrets-Token
 * answers GetSecretValue's JSON for a known ARN, 400 ResourceNotFoundException for another, 401 for
 * a wrong token or path.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A running stand-in; `asked` lists each secretId asked for, in order. */
export interface SecretsExtension {
  port: number;
  asked: string[];
  close(): Promise<void>;
}

/** Serves `secrets` (ARN ▶ the GetSecretValue answer) to callers presenting `sessionToken`. */
export async function startSecretsExtension(
  secrets: Record<string, unknown>,
  sessionToken: string,
): Promise<SecretsExtension> {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const id = url.searchParams.get("secretId") ?? "";
    asked.push(id);
    if (
      url.pathname !== "/secretsmanager/get" ||
      req.headers["x-aws-parameters-secrets-token"] !== sessionToken
    )
      return void res.writeHead(401).end("unauthorized");
    const secret = secrets[id];
    if (!secret) return void res.writeHead(400).end(`ResourceNotFoundException: ${id}`);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(secret));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as AddressInfo).port,
    asked,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
