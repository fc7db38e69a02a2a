/**
 * What the AWS host costs at list prices, from DynamoDB request units measured on a real workload:
 * three mesh cores as the three Lambda functions build them (functions/lambda/mesh.ts: shared
 * store, ingest lease, store follower) over one memory store counted as DynamoDB bills it
 * (dynamodb-units.ts). A mesh of `services` services is built, then each of `changes` EndpointSlice
 * changes is ingested as its own batch (the ingest function), pushed (the debounce function's turn)
 * and caught up by an xDS container (its store follower's check, then the changed resources'
 * bodies, as a Watch stream reads them). Idle follower checks are counted too: a held Watch checks
 * every EDGEPILOT_STORE_POLL_INTERVAL. `npx tsx test/bench/aws-cost.ts [services] [changes]`.
 */
import { parseConfig } from "../../lib/config.ts";
import { createMeshCore, type MeshCore } from "../../lib/core/mesh-core.ts";
import { createStoreFollower, defaultPollIntervalMs } from "../../lib/core/store-follower.ts";
import { validateEvents } from "../../lib/ingest/validate.ts";
import type { ResourceChange } from "../../lib/resources/changes.ts";
import { keys } from "../../lib/store/keys.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";
import { countDynamoUnits, type UnitCounts } from "./dynamodb-units.ts";
import { serviceEvents, sliceEvent } from "./mesh.ts";

/** List prices, us-east-1 (README "What it costs" cites the pages and the date). */
export const prices = {
  /** Lambda, arm64, per GB-second (first 7.5 billion GB-s a month). */
  lambdaGbSecond: 0.0000133334,
  /** Lambda, per request. */
  lambdaRequest: 0.2 / 1e6,
  /** DynamoDB on-demand, per write request unit. */
  wru: 0.625 / 1e6,
  /** DynamoDB on-demand, per read request unit. */
  rru: 0.125 / 1e6,
  /** EventBridge Scheduler, per invocation (after 14 million free a month). */
  schedulerInvocation: 1 / 1e6,
};

/** The functions' memory (infra/aws/edgepilot-stack.ts), GB. */
export const memoryGb = { ingest: 1, debounce: 1, xds: 0.5 };

export interface AwsUnits {
  services: number;
  changes: number;
  /** Per ingested event (one-event batches), the ingest function's units. */
  ingest: UnitCounts;
  /** Per ingested event when 100 arrive in one batch. */
  ingestBatched: UnitCounts;
  /** Per push, the debounce function's units (one endpoint change). */
  push: UnitCounts;
  /** Per push per xDS container (one Watch stream): the follower's check and the changed bodies. */
  streamPerPush: UnitCounts;
  /** Per idle follower check (nothing new). */
  idleCheck: UnitCounts;
}

const per = (c: UnitCounts, n: number): UnitCounts => ({
  rru: c.rru / n,
  wru: c.wru / n,
  itemsRead: c.itemsRead / n,
  itemsWritten: c.itemsWritten / n,
});

/** Runs the workload (see the module comment) and returns the units per event, push and check. */
export async function measureAwsUnits(services = 100, changes = 50): Promise<AwsUnits> {
  const counting = countDynamoUnits(createMemoryStore());
  const store = counting.store;
  const parsed = parseConfig({});
  if (!parsed.ok) throw new Error(parsed.errors.join("; "));
  const config = parsed.config;
  let clock = 1_700_000_000_000;
  // Turns are run by hand; no timer fires (the sync timeout and the follower's own loop stay idle).
  const timers = { now: () => clock, setTimeout: () => 0, clearTimeout: () => undefined };
  const core = (): MeshCore =>
    createMeshCore({
      store,
      config,
      timers,
      log: () => undefined,
      requestTurn: () => undefined,
      follow: { intervalMs: defaultPollIntervalMs },
    });
  const ingest = core();
  const debounce = core();
  const xds = core();
  for (const c of [ingest, debounce, xds]) await c.start();
  const follower = createStoreFollower({ core: xds, intervalMs: 1000, timers, log: () => undefined });
  let announced: readonly ResourceChange[] = [];
  xds.feed.subscribe(({ changes }) => {
    announced = changes ?? [];
  });
  const apply = async (events: unknown[]) => {
    const v = validateEvents(events);
    if (!v.ok) throw new Error(v.error.message);
    await ingest.ingest.events("Kubernetes", v.value);
  };
  const push = async () => {
    clock += config.debounce.debounceAfter + 1;
    const turn = await debounce.turn();
    if (turn.flushes.length === 0) throw new Error("aws-cost: the turn flushed nothing");
  };
  // Resync so the registry counts as synced and pushes go out.
  for (let n = 0; n < services; n += 100) {
    const batch: unknown[] = [];
    for (let k = n; k < Math.min(services, n + 100); k++) batch.push(...serviceEvents(k));
    await apply(batch);
    await push();
  }
  await follower.check();

  const totals = { ingest: zero(), push: zero(), stream: zero() };
  const add = (into: UnitCounts) => {
    const c = counting.counts();
    into.rru += c.rru;
    into.wru += c.wru;
    into.itemsRead += c.itemsRead;
    into.itemsWritten += c.itemsWritten;
    counting.reset();
  };
  for (let i = 0; i < changes; i++) {
    const target = i % services;
    counting.reset();
    await apply([sliceEvent(target, [`10.250.${i % 250}.${(i % 200) + 1}`, "10.251.0.1"], "MODIFIED")]);
    add(totals.ingest);
    await push();
    add(totals.push);
    announced = [];
    await follower.check();
    const bodies = announced.filter((c) => c.version !== null).map((c) => keys.resource(c.typeUrl, c.name));
    if (bodies.length === 0) throw new Error("aws-cost: the follower announced no change");
    await store.getMany(bodies);
    add(totals.stream);
  }
  counting.reset();
  const batch = Array.from({ length: 100 }, (_, i) =>
    sliceEvent(i % services, [`10.252.${i % 250}.1`, "10.253.0.1"], "MODIFIED"),
  );
  await apply(batch);
  const ingestBatched = per(counting.counts(), batch.length);
  await push();
  await follower.check();
  counting.reset();
  for (let i = 0; i < 10; i++) await follower.check();
  const idleCheck = per(counting.counts(), 10);
  for (const c of [ingest, debounce, xds]) c.stop();
  return {
    services,
    changes,
    ingest: per(totals.ingest, changes),
    ingestBatched,
    push: per(totals.push, changes),
    streamPerPush: per(totals.stream, changes),
    idleCheck,
  };
}

function zero(): UnitCounts {
  return { rru: 0, wru: 0, itemsRead: 0, itemsWritten: 0 };
}

/** Dollars per million ingested events and per stream-hour, from the units (the README shows the arithmetic). */
export function awsCost(u: AwsUnits, assume = { ingestMs: 50, pushMs: 200, pollIntervalS: 1 }) {
  const ddb = (c: UnitCounts) => c.rru * prices.rru + c.wru * prices.wru;
  const lambda = (gb: number, ms: number) => prices.lambdaRequest + gb * (ms / 1000) * prices.lambdaGbSecond;
  // Per event: one ingest invocation and one push each (the worst case: no coalescing).
  const perEvent =
    ddb(u.ingest) +
    ddb(u.push) +
    lambda(memoryGb.ingest, assume.ingestMs) +
    lambda(memoryGb.debounce, assume.pushMs);
  // A held Watch: xds duration all hour, four 15-minute invocations, a follower check per interval.
  const streamHour =
    memoryGb.xds * 3600 * prices.lambdaGbSecond +
    4 * prices.lambdaRequest +
    (3600 / assume.pollIntervalS) * ddb(u.idleCheck);
  // 100 events a batch, one push a batch: the ingest's units per event, the push's and both
  // invocations shared by 100.
  const perEventBatched =
    ddb(u.ingestBatched) +
    (ddb(u.push) + lambda(memoryGb.ingest, assume.ingestMs) + lambda(memoryGb.debounce, assume.pushMs)) / 100;
  return {
    perMillionEvents: perEvent * 1e6,
    perMillionEventsBatched: perEventBatched * 1e6,
    perMillionEventsDynamo: (ddb(u.ingest) + ddb(u.push)) * 1e6,
    perStreamHour: streamHour,
    perStreamPush: ddb(u.streamPerPush),
    schedulerPerMonth: 30 * 24 * 60 * prices.schedulerInvocation,
  };
}

/** Prints the units and dollars (npm run bench and this file alone). */
export function printAwsCost(u: AwsUnits): void {
  const f = (c: UnitCounts) =>
    `${c.rru.toFixed(1)} RRU (${c.itemsRead.toFixed(1)} items) | ${c.wru.toFixed(1)} WRU (${c.itemsWritten.toFixed(1)} items)`;
  console.log(
    `DynamoDB request units, ${u.services} services, ${u.changes} one-endpoint changes (memory store counted as DynamoDB bills)`,
  );
  console.log(`per event, one-event batches (ingest):  ${f(u.ingest)}`);
  console.log(`per event, 100-event batch (ingest):    ${f(u.ingestBatched)}`);
  console.log(`per push (debounce):                    ${f(u.push)}`);
  console.log(`per push per Watch stream (xds):        ${f(u.streamPerPush)}`);
  console.log(`per idle follower check (xds):          ${f(u.idleCheck)}`);
  const c = awsCost(u);
  console.log(
    `$ per million events (one push each, Lambda ingest 50 ms + debounce 200 ms at 1 GB): ${c.perMillionEvents.toFixed(2)} (DynamoDB ${c.perMillionEventsDynamo.toFixed(2)})`,
  );
  console.log(
    `$ per million events in 100-event batches, one push a batch: ${c.perMillionEventsBatched.toFixed(2)}`,
  );
  console.log(
    `$ per Watch stream-hour (xds 0.5 GB held, follower every 1 s): ${c.perStreamHour.toFixed(4)}; + $ per push per stream ${c.perStreamPush.toExponential(2)}`,
  );
  console.log(
    `$ per month, the one-minute schedule: ${c.schedulerPerMonth.toFixed(4)} (inside the 14 million free invocations)`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printAwsCost(await measureAwsUnits(Number(process.argv[2] ?? 100), Number(process.argv[3] ?? 50)));
}
