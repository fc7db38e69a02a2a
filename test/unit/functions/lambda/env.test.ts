/**
 * The Lambda functions' environment: what a container's init accepts, and that every bad or missing
 * variable is named (all at once), so a failed cold start says what to fix.
 */
import { describe, expect, it } from "vitest";
import { parseLambdaEnv } from "../../../../functions/lambda/env.ts";

const good = { AWS_REGION: "eu-west-1", XDS_AUTH: "token", EDGEPILOT_XDS_TOKEN: "a-token-of-16-chars+" };

describe("parseLambdaEnv", () => {
  it("takes the table's default, the region and no endpoint on AWS", () => {
    const r = parseLambdaEnv(good);
    expect(r.ok && r.dynamo).toEqual({
      kind: "dynamodb",
      table: "edgepilot",
      region: "eu-west-1",
      localCredentials: false,
    });
    expect(r.ok && r.config.xdsAuth.mode).toBe("token");
  });

  it("takes DYNAMODB_TABLE, DYNAMODB_ENDPOINT and EDGEPILOT_STORE=dynamodb", () => {
    const r = parseLambdaEnv({
      ...good,
      EDGEPILOT_STORE: "dynamodb",
      DYNAMODB_TABLE: "mesh-prod",
      DYNAMODB_ENDPOINT: "http://127.0.0.1:4567",
    });
    expect(r.ok && r.dynamo).toEqual({
      kind: "dynamodb",
      table: "mesh-prod",
      region: "eu-west-1",
      endpoint: "http://127.0.0.1:4567",
      localCredentials: true,
    });
  });

  const bad: [string, Record<string, string>, string[], RegExp][] = [
    ["no XDS_AUTH", { AWS_REGION: "eu-west-1" }, [], /^XDS_AUTH is not set: a Lambda function URL/],
    ["no region", { ...good, AWS_REGION: "" }, [], /^AWS_REGION: required with EDGEPILOT_STORE=dynamodb/],
    [
      "another store",
      { ...good, EDGEPILOT_STORE: "file" },
      [],
      /^EDGEPILOT_STORE=file: a Lambda keeps its state in DynamoDB/,
    ],
    [
      "a bad table name",
      { ...good, DYNAMODB_TABLE: "a/b" },
      [],
      /^DYNAMODB_TABLE=a\/b: a table name is 3-255/,
    ],
    [
      "a bad endpoint",
      { ...good, DYNAMODB_ENDPOINT: "localhost 4567" },
      [],
      /^DYNAMODB_ENDPOINT=localhost 4567: not an http\(s\) URL/,
    ],
    [
      "a bad debounce",
      { ...good, PILOT_DEBOUNCE_AFTER: "soon" },
      [],
      /^PILOT_DEBOUNCE_AFTER: not a duration/,
    ],
    [
      "ingest without its debounce function",
      good,
      ["EDGEPILOT_DEBOUNCE_FUNCTION"],
      /^EDGEPILOT_DEBOUNCE_FUNCTION: required by this function/,
    ],
  ];
  it.each(bad)("refuses %s, naming the variable", (_, env, required, message) => {
    const r = parseLambdaEnv(env, required);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors).toEqual([expect.stringMatching(message)]);
  });

  it("names every problem at once", () => {
    const r = parseLambdaEnv({ DYNAMODB_TABLE: "x" }, ["EDGEPILOT_DEBOUNCE_FUNCTION"]);
    expect(r.ok ? [] : r.errors.map((e) => e.split(/[:=]/)[0])).toEqual([
      "XDS_AUTH is not set",
      "DYNAMODB_TABLE",
      "AWS_REGION",
      "EDGEPILOT_DEBOUNCE_FUNCTION",
    ]);
  });
});
