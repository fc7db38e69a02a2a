import { describe, expect, it } from "vitest";
import { listenError, listenErrorLine } from "../../lib/listen-error.ts";

const err = (code: string | undefined, message = "listen failed") =>
  Object.assign(new Error(message), { code });

describe("listenErrorLine", () => {
  const cases: { name: string; e: unknown; target: Parameters<typeof listenErrorLine>[1]; want: string }[] = [
    {
      name: "a port in use",
      e: err("EADDRINUSE"),
      target: { variable: "PORT", port: 8080, host: "0.0.0.0" },
      want: "PORT=8080: port 8080 on 0.0.0.0 is already in use by another process; stop it or set PORT to a free one",
    },
    {
      name: "a privileged port",
      e: err("EACCES"),
      target: { variable: "XDS_PORT", port: 80 },
      want: "XDS_PORT=80: not permitted to listen on port 80 (ports below 1024 need privileges)",
    },
    {
      name: "an address not on this machine",
      e: err("EADDRNOTAVAIL"),
      target: { variable: "PORT", port: 8080, host: "10.9.9.9" },
      want: "PORT=8080: 10.9.9.9 is not an address of this machine (HOST)",
    },
    {
      name: "a socket path",
      e: err("EADDRINUSE"),
      target: { variable: "EDGEPILOT_AGENT_SOCKET", port: "/tmp/a.sock" },
      want: "EDGEPILOT_AGENT_SOCKET=/tmp/a.sock: socket /tmp/a.sock is already in use by another process; stop it or set EDGEPILOT_AGENT_SOCKET to a free one",
    },
    {
      name: "anything else keeps Node's message",
      e: err(undefined, "boom"),
      target: { variable: "RELAY_HEALTH_PORT", port: 9090, host: "127.0.0.1" },
      want: "RELAY_HEALTH_PORT=9090: cannot listen on port 9090 on 127.0.0.1: boom",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(listenErrorLine(c.e, c.target)).toBe(c.want);
      const wrapped = listenError(c.e, c.target);
      expect(wrapped.message).toBe(c.want);
      expect(wrapped.cause).toBe(c.e);
    });
  }
});
