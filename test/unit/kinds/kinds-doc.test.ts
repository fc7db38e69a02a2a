/** docs/reference/kinds.md against lib/kinds/descriptors.ts: the page's table is the kind table, row for row. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { kindTable } from "../../../lib/kinds/descriptors.ts";

const page = readFileSync(
  fileURLToPath(new URL("../../../docs/reference/kinds.md", import.meta.url)),
  "utf8",
);

/** The table's rows after its header, cells trimmed, backquotes dropped. */
function rows(): string[][] {
  const lines = page.split("\n").filter((l) => l.startsWith("| "));
  return lines.slice(1).map((l) =>
    l
      .slice(1, -1)
      .split("|")
      .map((c) => c.trim().replaceAll("`", "")),
  );
}

describe("the kinds reference page", () => {
  it("lists every kind of the table, in its order, with its group, versions, resource, scope, roles and status", () => {
    const want = kindTable.map((d) => [
      d.kind,
      d.objectKind,
      d.group === "" ? "core" : d.group,
      d.versions.join(", "),
      d.resource,
      d.namespaced ? "namespaced" : "cluster",
      d.relay,
      d.webhook,
      d.push,
      d.writesStatus ? "written" : "",
    ]);
    expect(rows().filter((r) => r[0] !== "---")).toEqual(want);
  });
});
