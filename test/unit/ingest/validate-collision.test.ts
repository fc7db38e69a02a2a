/** Why Service names are DNS-1035 labels: a dotted name would claim another service's short names. */
import { describe, expect, it } from "vitest";
import { validateEvents } from "../../../lib/ingest/index.ts";
import { serviceHostname } from "../../../lib/model/index.ts";
import { virtualHostDomains } from "../../../lib/resources/generators/route.ts";
import { added, service } from "./support/valid-objects.ts";

describe("a Service named with dots", () => {
  it("would answer for another service's short name, so it is refused", () => {
    // Service "reviews.prod" in namespace "default" ...
    const forged = serviceHostname("reviews.prod", "default", "cluster.local");
    // ... would take "reviews", the short name of default/reviews, as its own virtual host domain.
    const domains = virtualHostDomains(forged, 9080, "cluster.local");
    expect(domains).toContain("reviews:9080");
    expect(
      virtualHostDomains(serviceHostname("reviews", "default", "cluster.local"), 9080, "cluster.local"),
    ).toContain("reviews:9080");

    const r = validateEvents([
      added(service({ "metadata.name": "reviews", "metadata.namespace": "default" })),
      added(service({ "metadata.name": "reviews.prod", "metadata.namespace": "default" })),
    ]);
    expect(r.ok ? "ok" : r.error).toMatchObject({
      index: 1,
      field: "object.metadata.name",
      message: /RFC 1035 label.*no '\.'/,
    });
  });
});
