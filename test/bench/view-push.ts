/**
 * What per-namespace views add to a push per stream (lib/xds/view-source.ts): 1,000 stream views
 * of 50 namespaces over a mesh with no view table, each taking one push's changes, as every ADS
 * stream does before its session sees them. Prints µs per stream per push.
 * Run alone: `npx tsx test/bench/view-push.ts [pushes]`.
 */

import { create } from "@bufbuild/protobuf";
import { NodeSchema } from "../../lib/gen/envoy/config/core/v3/base_pb.ts";
import { TypeUrl } from "../../lib/resources/xds-types.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";
import { createStoreSource } from "../../lib/xds/source.ts";
import { createStreamView, type StreamView } from "../../lib/xds/stream-view.ts";
import { createViews } from "../../lib/xds/view-source.ts";

/** µs per stream per push of StreamView.push on the shared view. */
export async function measureViewPush(pushes = 2000, streamCount = 1000): Promise<number> {
  const store = createMemoryStore();
  const views = createViews({ store });
  const base = createStoreSource(store);
  const streams: StreamView[] = [];
  for (let i = 0; i < streamCount; i++) {
    const v = createStreamView(views, base);
    const ns = `ns${i % 50}`;
    await v.bind(
      create(NodeSchema, {
        id: `sidecar~10.0.0.1~p.${ns}~${ns}.svc.cluster.local`,
        metadata: { GENERATOR: "grpc" },
      }),
    );
    streams.push(v);
  }
  const t0 = performance.now();
  for (let p = 0; p < pushes; p++) {
    const changes = [
      { typeUrl: TypeUrl.endpoint, name: `outbound|9080||h${p}`, version: "v", service: "ns1/h" },
    ];
    const push = { version: p + 1, changes };
    for (const s of streams) s.push(push);
  }
  return ((performance.now() - t0) * 1000) / (pushes * streamCount);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const us = await measureViewPush(Number(process.argv[2] ?? 2000));
  console.log(JSON.stringify({ viewPushUsPerStream: Number(us.toFixed(3)) }));
}
