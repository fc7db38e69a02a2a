/**
 * ServiceEntry and WorkloadEntry through the real Node runtime: a real proxyless gRPC client
 * (grpc-js-xds) calls real gRPC backends on 127.0.0.x through a STATIC ServiceEntry host, through
 * a ServiceEntry selecting two WorkloadEntries (one relabelled out stops receiving calls), and
 * through a DNS ServiceEntry the client resolves itself (LOGICAL_DNS). Routes to a ServiceEntry
 * subset or host that does not exist (or a host deleted later) fail at once with UNAVAILABLE while
 * the other routes of the VirtualService keep working. Observed through calls and ingest answers.
 */

import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  destinationRule,
  serviceEntry,
  virtualService,
  workloadEntry,
} from "../unit/ingest/support/istio.ts";
import { type Backend, startBackend } from "./support/backends.ts";
import { post, until } from "./support/converge.ts";
import { event } from "./support/kube.ts";
import { freePort, type RunningControlPlane, startControlPlane } from "./support/runtime.ts";
import { bootstrapXds, type WhoClient, whoClient } from "./support/xds-client.ts";

let cp: RunningControlPlane;
let backends: Backend[] = [];
const clients: WhoClient[] = [];
let port = 0;

/** A client for `xds:///<host>:9080`, closed after the suite. */
function client(host: string): WhoClient {
  const c = whoClient(`xds:///${host}:9080`);
  clients.push(c);
  return c;
}

/** Service port 9080 served by the backends on `port`. */
const grpcPort = () => [{ name: "grpc", number: 9080, targetPort: port, protocol: "GRPC" }];
const payEntry = (name: string, ip: string, app: string, rv: string) =>
  workloadEntry(name, { address: ip, labels: { app } }, "default", { resourceVersion: rv });

beforeAll(async () => {
  port = await freePort();
  backends = await Promise.all([
    startBackend("a", "127.0.0.1", port),
    startBackend("b", "127.0.0.2", port),
    startBackend("c", "127.0.0.3", port),
  ]);
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "10ms" });
  bootstrapXds(cp.xdsPort, "sidecar~127.0.0.9~e2e-client.default~default.svc.cluster.local");
});

afterAll(async () => {
  for (const c of clients) c.close();
  await cp?.stop();
  await Promise.all(backends.map((b) => b.stop()));
});

describe("ServiceEntry and WorkloadEntry for proxyless gRPC", () => {
  it("calls a STATIC ServiceEntry host through xDS", async () => {
    const at = await post(
      cp,
      event("ADDED", serviceEntry("static", { ports: grpcPort(), endpoints: [{ address: "127.0.0.3" }] })),
    );
    await until(cp, client("static.example.com"), at, { accept: (a) => a === "c", what: "backend c" });
  });

  it("a workloadSelector's WorkloadEntries receive the calls; one relabelled out stops", async () => {
    const pay = client("pay.example.com");
    const at = await post(
      cp,
      event(
        "ADDED",
        serviceEntry("pay", { ports: grpcPort(), workloadSelector: { labels: { app: "pay" } } }),
      ),
      event("ADDED", payEntry("pay-a", "127.0.0.1", "pay", "1")),
      event("ADDED", payEntry("pay-b", "127.0.0.2", "pay", "1")),
    );
    await until(cp, pay, at, { accept: (a) => a === "a" || a === "b", what: "a WorkloadEntry" });
    const seen = new Set<string>();
    for (let i = 0; i < 20 && seen.size < 2; i++) seen.add(await pay.who(1000));
    expect([...seen].sort()).toEqual(["a", "b"]);

    const relabelled = await post(cp, event("MODIFIED", payEntry("pay-b", "127.0.0.2", "other", "2")));
    await until(cp, pay, relabelled, { accept: (a) => a === "a", what: "only pay-a", settle: 10 });
    for (let i = 0; i < 10; i++) expect(await pay.who(1000)).toBe("a");
  });

  it("an unchanged WorkloadEntry UPDATE pushes nothing", async () => {
    const res = await cp.post([event("MODIFIED", payEntry("pay-a", "127.0.0.1", "pay", "3"))]);
    expect(await res.json()).toMatchObject({ applied: 0, unchanged: 1, push: null });
  });

  it("calls a DNS ServiceEntry through a LOGICAL_DNS cluster the client resolves", async () => {
    const at = await post(
      cp,
      event(
        "ADDED",
        serviceEntry("localhost", { hosts: ["localhost"], ports: grpcPort(), resolution: "DNS" }),
      ),
    );
    // localhost resolves to 127.0.0.1, where backend a listens.
    await until(cp, client("localhost"), at, { accept: (a) => a === "a", what: "backend a via DNS" });
  });

  it("routes to a missing ServiceEntry subset or host (or one deleted later) fail UNAVAILABLE at once; the others work", async () => {
    const on = (c: string) => ({ match: [{ headers: { "x-case": { exact: c } } }] });
    const entry = (name: string, address: string, rv = "1") =>
      serviceEntry(
        name,
        { ports: grpcPort(), endpoints: [{ address, labels: { version: "v1" } }] },
        { resourceVersion: rv },
      );
    const front = client("front.example.com");
    await post(
      cp,
      event("ADDED", entry("front", "127.0.0.2")),
      event("ADDED", entry("api", "127.0.0.1")),
      event("ADDED", entry("gone", "127.0.0.3")),
      event(
        "ADDED",
        destinationRule("api.example.com", [{ name: "v1", labels: { version: "v1" } }], { name: "api" }),
      ),
    );
    const at = Date.now();
    const res = await cp.post([
      event(
        "ADDED",
        virtualService(
          "front",
          {
            http: [
              { ...on("subset"), route: [{ destination: { host: "api.example.com", subset: "v9" } }] },
              { ...on("host"), route: [{ destination: { host: "ghost.example.com" } }] },
              { ...on("api"), route: [{ destination: { host: "api.example.com", subset: "v1" } }] },
              { ...on("gone"), route: [{ destination: { host: "gone.example.com" } }] },
              { route: [{ destination: { host: "front.example.com" } }] },
            ],
          },
          { hosts: ["front.example.com"], resourceVersion: "2" },
        ),
      ),
    ]);
    expect(res.status).toBe(200);
    const line = (i: number, what: string, reason: string) =>
      `VirtualService default/front: spec.http[${i}]: ${what}: ${reason}`;
    expect(((await res.json()) as { dangling: string[] }).dangling).toEqual([
      line(0, "api.example.com subset v9", "no DestinationRule for api.example.com defines subset v9"),
      line(1, "ghost.example.com", "no service has host ghost.example.com"),
    ]);
    await until(cp, front, at, {
      accept: (a) => a === "a",
      what: "the api route",
      headers: { "x-case": "api" },
    });
    await until(cp, front, at, {
      accept: (a) => a === "c",
      what: "the gone route",
      headers: { "x-case": "gone" },
    });

    /** Each case's calls fail UNAVAILABLE well before the caller's 3 s deadline (not the client's 15 s timer). */
    const failsAtOnce = async (...cases: string[]) => {
      for (const c of cases) {
        for (let i = 0; i < 3; i++) {
          const started = Date.now();
          const answer = await front
            .who(3000, { "x-case": c })
            .catch((e: { code?: number }) => `error:${e.code}`);
          expect(answer, c).toBe(`error:${status.UNAVAILABLE}`);
          expect(Date.now() - started, c).toBeLessThan(1000);
        }
      }
      expect(await front.who(3000, { "x-case": "api" })).toBe("a");
      expect(await front.who(3000)).toBe("b");
    };
    await failsAtOnce("subset", "host");

    // The ServiceEntry a route names is deleted: its POST reports the route, and the route fails at once.
    const deleted = Date.now();
    const gone = await cp.post([event("DELETED", entry("gone", "127.0.0.3", "3"))]);
    expect(((await gone.json()) as { dangling: string[] }).dangling).toEqual([
      line(3, "gone.example.com", "no service has host gone.example.com"),
    ]);
    await until(cp, front, deleted, {
      accept: (a) => a === `error:${status.UNAVAILABLE}`,
      what: "the gone route failing",
      headers: { "x-case": "gone" },
    });
    await failsAtOnce("gone", "subset", "host");
  });
});
