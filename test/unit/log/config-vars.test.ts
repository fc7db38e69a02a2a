/** LOG_FORMAT and LOG_LEVEL in each configuration that reads them: errors name the variable and the bad part. */
import { describe, expect, it } from "vitest";
import { parseAgentConfig } from "../../../lib/agent/config.ts";
import { parseConfig } from "../../../lib/config.ts";
import { parseRelayConfig } from "../../../lib/relay/config.ts";

const bad = { LOG_FORMAT: "logfmt", LOG_LEVEL: "ads:debug,xds:warn" };
const wantErrors = [
  "LOG_FORMAT=logfmt: not a log format (text or json)",
  'LOG_LEVEL=ads:debug,xds:warn: "xds:warn": not a scope (ads, push, ingest, security, relay, agent, default, or all)',
];
const good = { LOG_FORMAT: "json", LOG_LEVEL: "warn,push:info" };
const wantLog = { format: "json", levels: { default: "warn", scopes: { push: "info" } } };

const relayEnv = { EDGEPILOT_URL: "http://edgepilot:8080" };
const agentEnv = { EDGEPILOT_AGENT_UPSTREAM: "http://127.0.0.1:15010", POD_NAMESPACE: "default" };

describe.each([
  ["the control plane (lib/config.ts)", (env: Record<string, string>) => parseConfig(env)],
  ["the relay", (env: Record<string, string>) => parseRelayConfig({ ...relayEnv, ...env }, [])],
  ["the agent", (env: Record<string, string>) => parseAgentConfig({ ...agentEnv, ...env }, [])],
])("%s", (_, parse) => {
  it("reads LOG_FORMAT and LOG_LEVEL", () => {
    const r = parse(good);
    expect(r.ok === true && r.config.log).toEqual(wantLog);
  });

  it("refuses bad values, naming each variable and its bad part", () => {
    const r = parse(bad);
    expect(r.ok).toBe(false);
    expect(r.ok === false && r.errors).toEqual(wantErrors);
  });
});
