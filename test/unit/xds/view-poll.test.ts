/**
 * Poll and Watch through views (lib/xds/poll-serve.ts with lib/xds/view-source.ts): each call is
 * answered through the view of its request's node, and a Watch takes its own view's overlay
 * changes, not the shared change of a name its view overlays.
 */
import { describe, expect, it } from "vitest";
import type { ResourceChange } from "../../../lib/resources/changes.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createPollHub } from "../../../lib/xds/poll-hub.ts";
import { createPollServer } from "../../../lib/xds/poll-serve.ts";
import { pollRequest } from "./poll-support.ts";
import { mesh, node, RDS, resource, route } from "./view-support.ts";

const limits = { maxNamesPerRequest: 100, maxStreams: 10 };
const names = [route("a"), route("b"), route("c")];
const sentOf = (r: { resources: { name: string; version: string }[] }) =>
  r.resources.map((x) => `${x.name}@${x.version}`);

async function server() {
  const m = await mesh();
  const hub = createPollHub(m.base);
  const polls = createPollServer({ source: m.base, hub, limits, views: m.views });
  return { ...m, hub, polls };
}

describe("Poll through the node's view", () => {
  const cases = [
    { ns: "a", sent: [`${route("a")}@own`, `${route("b")}@shared`], removed: [route("c")] },
    { ns: "b", sent: [`${route("b")}@shared`], removed: [route("a"), route("c")] },
    { ns: "c", sent: names.map((n) => `${n}@shared`), removed: [] },
  ];
  it.each(cases)("namespace $ns", async ({ ns, sent, removed }) => {
    const { polls } = await server();
    const signal = new AbortController().signal;
    const r = await polls.poll(pollRequest(RDS, { resourceNamesSubscribe: names, node: node(ns) }), {
      signal,
    });
    expect(sentOf(r)).toEqual(sent);
    expect([...r.removedResources].sort()).toEqual(removed);
  });
});

describe("Watch through the node's view", () => {
  it("takes its view's overlay change, and not the shared change of a name its view overlays", async () => {
    const { store, hub, polls } = await server();
    const stop = new AbortController();
    const watch = (ns: string) =>
      polls.watch(pollRequest(RDS, { resourceNamesSubscribe: names, node: node(ns) }), {
        signal: stop.signal,
      });
    const a = watch("a");
    const c = watch("c");
    expect(sentOf((await a.next()).value)).toEqual([`${route("a")}@own`, `${route("b")}@shared`]);
    expect(sentOf((await c.next()).value)).toEqual(names.map((n) => `${n}@shared`));

    // The shared route of a changes: c takes it; a's overlay hides it, so a is not answered.
    const shared = resource("a", "s2");
    await store.put(keys.resource(RDS, route("a")), shared);
    const nextA = a.next();
    const nextC = c.next();
    hub.publish({ changes: [shared] });
    expect(sentOf((await nextC).value)).toEqual([`${route("a")}@s2`]);
    // Then a's overlay changes: a's next answer is its own new version.
    const own = resource("a", "o2");
    await store.put(keys.viewResource("a", RDS, route("a")), own);
    const change: ResourceChange = { ...own, view: "a" };
    hub.publish({ changes: [change] });
    expect(sentOf((await nextA).value)).toEqual([`${route("a")}@o2`]);
    stop.abort();
    await Promise.all([a.return(undefined), c.return(undefined)]);
  });
});
