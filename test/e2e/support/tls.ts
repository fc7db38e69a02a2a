/**
 * Throwaway TLS for e2e tests: a CA and a server certificate for 127.0.0.1 made with the `openssl`
 * CLI (node:crypto cannot sign X.509), valid one day, in a temporary directory; and forwarders that
 * put TLS (or nothing) in front of a cleartext HTTP/2 port at the byte level, which h2c with prior
 * knowledge allows. `opensslMissing` says why a test cannot run where the CLI is absent.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { createServer as createTlsServer } from "node:tls";

/** Why throwaway certificates cannot be made here, or "" when they can. */
export const opensslMissing = (() => {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return "";
  } catch {
    return "the openssl CLI is not installed (it makes the test's throwaway CA)";
  }
})();

/** A CA's certificate (PEM file) and key. */
export interface TestCa {
  certFile: string;
  keyFile: string;
}

const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
const openssl = (args: string[]) => execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });

/** A self-signed CA named `name`, in `dir`. */
export function makeTestCa(dir: string, name: string): TestCa {
  const certFile = join(dir, `${name}.pem`);
  const keyFile = join(dir, `${name}.key`);
  openssl([
    "req",
    "-x509",
    ...ec,
    "-keyout",
    keyFile,
    "-out",
    certFile,
    "-days",
    "1",
    "-subj",
    `/CN=${name}`,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  return { certFile, keyFile };
}

/** A server key and certificate for 127.0.0.1 and localhost signed by `ca`, as PEM text. */
export function issueServerCert(ca: TestCa, dir: string): { key: string; cert: string } {
  const key = join(dir, "server.key");
  const csr = join(dir, "server.csr");
  const cert = join(dir, "server.pem");
  const ext = join(dir, "server.ext");
  writeFileSync(ext, "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  openssl(["req", ...ec, "-keyout", key, "-out", csr, "-subj", "/CN=127.0.0.1"]);
  openssl([
    "x509",
    "-req",
    "-in",
    csr,
    "-CA",
    ca.certFile,
    "-CAkey",
    ca.keyFile,
    "-CAcreateserial",
    "-out",
    cert,
    "-days",
    "1",
    "-extfile",
    ext,
  ]);
  return { key: readFileSync(key, "utf8"), cert: readFileSync(cert, "utf8") };
}

/** A listening forwarder; `close` also cuts every connection it carries. */
export interface Forwarder {
  port: number;
  close(): Promise<void>;
}

function pipeTo(target: number, sockets: Set<Socket>) {
  return (client: Socket) => {
    const upstream = connect(target, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  };
}

async function listening(server: Server, port: number, sockets: Set<Socket>): Promise<Forwarder> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** TLS (ALPN h2) on `port` (0: any) in front of the cleartext HTTP/2 port `target`. */
export function tlsForwarder(
  target: number,
  tls: { key: string; cert: string },
  port = 0,
): Promise<Forwarder> {
  const sockets = new Set<Socket>();
  return listening(
    createTlsServer({ ...tls, ALPNProtocols: ["h2"] }, pipeTo(target, sockets)),
    port,
    sockets,
  );
}

/** A plain TCP forwarder on `port` (0: any) to `target`: an upstream that can be cut and brought back. */
export function tcpForwarder(target: number, port = 0): Promise<Forwarder> {
  const sockets = new Set<Socket>();
  return listening(createServer(pipeTo(target, sockets)), port, sockets);
}
