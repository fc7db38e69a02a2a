/** Real gRPC backends on loopback addresses that answer with their own name. */
import * as grpc from "@grpc/grpc-js";

/** The method every backend serves: empty request, its name back. */
export const whoMethod = {
  path: "/edgepilot.e2e.Who/Who",
  requestStream: false,
  responseStream: false,
  requestSerialize: (b: Buffer) => b,
  requestDeserialize: (b: Buffer) => b,
  responseSerialize: (b: Buffer) => b,
  responseDeserialize: (b: Buffer) => b,
} as const;

export interface Backend {
  name: string;
  address: string;
  port: number;
  stop(): Promise<void>;
}

export interface BackendOptions {
  /** Decides each call (numbered from 1): a status fails it with that code, undefined answers the name. */
  fail?: (call: number) => grpc.status | undefined;
}

/** Starts a backend bound to `address:port` (127.0.0.x addresses all reach loopback on Linux). */
export function startBackend(
  name: string,
  address: string,
  port: number,
  options: BackendOptions = {},
): Promise<Backend> {
  const server = new grpc.Server();
  let calls = 0;
  server.addService(
    { Who: whoMethod },
    {
      Who: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) => {
        const code = options.fail?.(++calls);
        if (code === undefined) callback(null, Buffer.from(name));
        else callback({ code, details: `${name} fails call ${calls}` });
      },
    },
  );
  return new Promise((resolve, reject) => {
    server.bindAsync(`${address}:${port}`, grpc.ServerCredentials.createInsecure(), (err, bound) => {
      if (err) return reject(err);
      resolve({
        name,
        address,
        port: bound,
        // Graceful first; a client that keeps its connection open must not hold the test up.
        stop: () =>
          new Promise<void>((r) => {
            const force = setTimeout(() => {
              server.forceShutdown();
              r();
            }, 1000);
            server.tryShutdown(() => {
              clearTimeout(force);
              r();
            });
          }),
      });
    });
  });
}
