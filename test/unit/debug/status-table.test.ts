import { describe, expect, it } from "vitest";
import { statusTable, tabulate, xdsCell } from "../../../lib/debug/status-table.ts";
import type { SyncStatus } from "../../../lib/debug/syncz.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";

describe("xdsCell: istioctl's rule, NACKED added", () => {
  it.each([
    { sent: undefined, acked: undefined, nacked: false, want: "NOT SENT" },
    { sent: "", acked: "", nacked: false, want: "NOT SENT" },
    { sent: "v1", acked: "v1", nacked: false, want: "SYNCED" },
    { sent: "v1", acked: "v1", nacked: true, want: "SYNCED" },
    { sent: "v2", acked: "v1", nacked: true, want: "NACKED" },
    { sent: "v1", acked: undefined, nacked: true, want: "NACKED" },
    { sent: "v1", acked: undefined, nacked: false, want: "STALE (Never Acknowledged)" },
    { sent: "v2", acked: "v1", nacked: false, want: "STALE" },
  ])("sent $sent acked $acked nacked $nacked: $want", ({ sent, acked, nacked, want }) => {
    expect(xdsCell(sent, acked, nacked)).toBe(want);
  });
});

const row = (o: Partial<SyncStatus>): SyncStatus => ({ proxy: "p", generator: "", updated_at: "", ...o });

describe("statusTable", () => {
  it("sorts by cluster then proxy and pads like Go's tabwriter", () => {
    const out = statusTable(
      [
        row({ proxy: "b", cluster_id: "west", istio_version: "1.24", cluster_sent: "1", cluster_acked: "1" }),
        row({
          proxy: "a",
          cluster_id: "west",
          endpoint_sent: "2",
          endpoint_acked: "1",
          nacks: [{ type_url: TypeUrl.endpoint, nonce: "n", version_info: "1", message: "x" }],
        }),
        row({ proxy: "zz", cluster_id: "east", route_sent: "3" }),
      ],
      "i-1",
    );
    expect(out).toBe(
      [
        "NAME     CLUSTER     CDS          LDS          EDS          RDS                            ISTIOD     VERSION",
        "zz       east        NOT SENT     NOT SENT     NOT SENT     STALE (Never Acknowledged)     i-1        *",
        "a        west        NOT SENT     NOT SENT     NACKED       NOT SENT                       i-1        *",
        "b        west        SYNCED       NOT SENT     NOT SENT     NOT SENT                       i-1        1.24",
        "",
      ].join("\n"),
    );
  });

  it("prints the header alone when no proxy is connected", () => {
    expect(statusTable([], "i")).toBe(
      "NAME     CLUSTER     CDS     LDS     EDS     RDS     ISTIOD     VERSION\n",
    );
  });

  it("tabulate leaves the last column unpadded", () => {
    expect(
      tabulate(
        [
          ["a", "bb"],
          ["ccc", "d"],
        ],
        2,
      ),
    ).toBe("a    bb\nccc  d\n");
  });
});
