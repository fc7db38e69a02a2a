/**
 * A TCP proxy on loopback between a client and an upstream, for what sits between in production:
 * it counts the bytes each way (the upstream wire's cost, measured at the socket), can be pointed
 * at another port (an upstream restarted elsewhere), refuses while no target is set (an upstream
 * that is down), and can cut connections idle for `idleCutMs` (a CDN or load balancer idle timeout).
 */
import { createConnection, createServer, type Socket } from "node:net";

/** A running proxy; fields may be changed while it runs. */
export interface TcpProxy {
  port: number;
  /** Where connections go; undefined: new connections are refused (closed at once). */
  target: number | undefined;
  /** Cut a connection after this long without a byte either way; undefined: never. Applies to new connections. */
  idleCutMs: number | undefined;
  /** Bytes client ─▶ upstream and upstream ─▶ client, and connections accepted, since start. */
  readonly bytes: { up: number; down: number };
  readonly accepted: number;
  /** Connections cut for being idle. */
  readonly idleCuts: number;
  /** Destroys every open connection. */
  cutAll(): void;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 (any free port), forwarding to 127.0.0.1:`target`. */
export async function startTcpProxy(target: number | undefined): Promise<TcpProxy> {
  const open = new Set<Socket>();
  const stats = { up: 0, down: 0, accepted: 0, idleCuts: 0 };
  const proxy = {
    port: 0,
    target,
    idleCutMs: undefined as number | undefined,
  };
  const server = createServer((client) => {
    stats.accepted++;
    if (proxy.target === undefined) return void client.destroy();
    const upstream = createConnection({ host: "127.0.0.1", port: proxy.target });
    open.add(client);
    open.add(upstream);
    const cut = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("data", (d: Buffer) => {
      stats.up += d.length;
      upstream.write(d);
    });
    upstream.on("data", (d: Buffer) => {
      stats.down += d.length;
      client.write(d);
    });
    for (const s of [client, upstream]) {
      s.on("error", cut);
      s.on("close", cut);
    }
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
    if (proxy.idleCutMs !== undefined) {
      // Activity either way refreshes the client socket's timer (its reads and its writes).
      client.setTimeout(proxy.idleCutMs, () => {
        stats.idleCuts++;
        cut();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.port = (server.address() as { port: number }).port;
  return {
    get port() {
      return proxy.port;
    },
    get target() {
      return proxy.target;
    },
    set target(t: number | undefined) {
      proxy.target = t;
    },
    get idleCutMs() {
      return proxy.idleCutMs;
    },
    set idleCutMs(ms: number | undefined) {
      proxy.idleCutMs = ms;
    },
    bytes: {
      get up() {
        return stats.up;
      },
      get down() {
        return stats.down;
      },
    },
    get accepted() {
      return stats.accepted;
    },
    get idleCuts() {
      return stats.idleCuts;
    },
    cutAll() {
      for (const s of open) s.destroy();
      open.clear();
    },
    close() {
      for (const s of open) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
