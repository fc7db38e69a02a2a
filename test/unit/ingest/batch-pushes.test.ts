import { describe, expect, it } from "vitest";
import { createBatchPushes } from "../../../lib/ingest/batch-pushes.ts";
import {
  configKeyString,
  mergeAll,
  type PushRequest,
  pushRequest,
  serviceConfigKey,
} from "../../../lib/model/index.ts";

const svc = (host: string) => configKeyString(serviceConfigKey(host, "ns"));
const push = (o: { full?: boolean; configs?: string[] | null; start?: number } = {}): PushRequest =>
  pushRequest({
    full: o.full ?? false,
    configs: o.configs ?? [],
    reason: "endpoint",
    start: o.start ?? 1000,
  });

describe("createBatchPushes", () => {
  const cases: { name: string; pushes: PushRequest[]; hosts: string[] }[] = [
    { name: "nothing added", pushes: [], hosts: [] },
    {
      name: "one push is merged to itself",
      pushes: [push({ full: true, configs: [svc("a")] })],
      hosts: ["a"],
    },
    {
      name: "only full pushes name hosts, each once",
      pushes: [
        push({ configs: [svc("eds-only")] }),
        push({ full: true, configs: [svc("b"), svc("a")], start: 5 }),
        push({ full: true, configs: [svc("a")] }),
      ],
      hosts: ["a", "b"],
    },
    {
      name: "an unknown scope merges to null and names no host",
      pushes: [push({ full: true, configs: null }), push({ configs: [svc("c")] })],
      hosts: [],
    },
    {
      name: "config keys of other kinds name no service host",
      pushes: [push({ full: true, configs: ["VirtualService/ns/vs", svc("d")] })],
      hosts: ["d"],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const batch = createBatchPushes();
      for (const p of c.pushes) batch.add(p);
      expect(batch.merged()).toEqual(mergeAll(c.pushes));
      expect([...batch.serviceHosts].sort()).toEqual(c.hosts);
    });
  }

  it("gives the very request when one was added, as mergeAll does", () => {
    const only = push({ full: true, configs: [svc("a")] });
    const batch = createBatchPushes();
    batch.add(only);
    expect(batch.merged()).toBe(only);
  });
});
