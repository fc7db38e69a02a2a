import { describe, expect, it } from "vitest";
import type { Protocol } from "../../../../lib/model/index.ts";
import {
  convertProtocol,
  type PortProtocolInput,
  parseProtocol,
} from "../../../../lib/registry/kube/protocol.ts";

const port = (o: PortProtocolInput = {}): PortProtocolInput => ({ port: 8080, protocol: "TCP", ...o });

describe("convertProtocol", () => {
  const cases: { name: string; in: PortProtocolInput; want: Protocol }[] = [
    // port name prefixes
    { name: "no name, no appProtocol ▶ auto-detect", in: port(), want: "UnsupportedProtocol" },
    { name: "grpc", in: port({ name: "grpc" }), want: "GRPC" },
    { name: "grpc with suffix", in: port({ name: "grpc-reviews" }), want: "GRPC" },
    { name: "grpc-web before the prefix rule", in: port({ name: "grpc-web" }), want: "GRPC-Web" },
    { name: "grpc-web with suffix", in: port({ name: "grpc-web-x" }), want: "GRPC-Web" },
    { name: "grpcweb is not grpc-web", in: port({ name: "grpcweb-x" }), want: "UnsupportedProtocol" },
    { name: "http", in: port({ name: "http" }), want: "HTTP" },
    { name: "http with suffix", in: port({ name: "http-web" }), want: "HTTP" },
    { name: "http2", in: port({ name: "http2-api" }), want: "HTTP2" },
    { name: "https", in: port({ name: "https" }), want: "HTTPS" },
    { name: "http_proxy", in: port({ name: "http_proxy" }), want: "HTTP_PROXY" },
    { name: "tcp", in: port({ name: "tcp-redis" }), want: "TCP" },
    { name: "tls", in: port({ name: "tls-db" }), want: "TLS" },
    { name: "mongo", in: port({ name: "mongo" }), want: "Mongo" },
    { name: "mysql", in: port({ name: "mysql-primary" }), want: "MySQL" },
    { name: "redis", in: port({ name: "redis" }), want: "Redis" },
    { name: "udp by name", in: port({ name: "udp-dns" }), want: "UDP" },
    { name: "prefix is case-insensitive", in: port({ name: "HTTP-Web" }), want: "HTTP" },
    { name: "grpc-web is case-insensitive", in: port({ name: "GRPC-Web-x" }), want: "GRPC-Web" },
    {
      name: "only the part before the first dash counts",
      in: port({ name: "web-http" }),
      want: "UnsupportedProtocol",
    },
    { name: "unknown name ▶ auto-detect", in: port({ name: "metrics" }), want: "UnsupportedProtocol" },
    // kube protocol
    {
      name: "protocol UDP wins over everything",
      in: port({ name: "http", appProtocol: "grpc", protocol: "UDP" }),
      want: "UDP",
    },
    { name: "protocol missing is TCP", in: { name: "http", port: 80 }, want: "HTTP" },
    // appProtocol
    { name: "appProtocol over the name", in: port({ name: "http-x", appProtocol: "https" }), want: "HTTPS" },
    { name: "appProtocol alone", in: port({ name: "something-httpx", appProtocol: "grpc" }), want: "GRPC" },
    { name: "appProtocol is case-insensitive", in: port({ appProtocol: "HTTP2" }), want: "HTTP2" },
    { name: "appProtocol grpc-web", in: port({ appProtocol: "grpc-web" }), want: "GRPC-Web" },
    {
      name: "kubernetes.io/h2c ▶ HTTP2",
      in: port({ name: "grpc", appProtocol: "kubernetes.io/h2c" }),
      want: "HTTP2",
    },
    { name: "kubernetes.io/ws ▶ HTTP", in: port({ appProtocol: "kubernetes.io/ws" }), want: "HTTP" },
    { name: "kubernetes.io/wss ▶ HTTPS", in: port({ appProtocol: "kubernetes.io/wss" }), want: "HTTPS" },
    {
      name: "unknown appProtocol hides the name",
      in: port({ name: "http", appProtocol: "example.com/custom" }),
      want: "UnsupportedProtocol",
    },
    {
      name: "an Object.prototype name is no protocol",
      in: port({ appProtocol: "toString" }),
      want: "UnsupportedProtocol",
    },
    {
      name: "empty appProtocol hides the name",
      in: port({ name: "http", appProtocol: "" }),
      want: "UnsupportedProtocol",
    },
    // well-known server-first ports are never sniffed
    { name: "3306 unnamed ▶ TCP", in: port({ port: 3306, name: "db" }), want: "TCP" },
    { name: "27017 unnamed ▶ TCP", in: port({ port: 27017 }), want: "TCP" },
    { name: "25 ▶ TCP", in: port({ port: 25 }), want: "TCP" },
    { name: "53 ▶ TCP", in: port({ port: 53, name: "dns" }), want: "TCP" },
    { name: "named well-known port keeps its name", in: port({ port: 3306, name: "mysql" }), want: "MySQL" },
    { name: "53 over UDP stays UDP", in: port({ port: 53, protocol: "UDP" }), want: "UDP" },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(convertProtocol(c.in)).toBe(c.want);
    });
  }
});

describe("parseProtocol", () => {
  const cases: [string, Protocol][] = [
    ["tcp", "TCP"],
    ["UDP", "UDP"],
    ["Grpc", "GRPC"],
    ["grpc-web", "GRPC-Web"],
    ["http", "HTTP"],
    ["http_proxy", "HTTP_PROXY"],
    ["http2", "HTTP2"],
    ["https", "HTTPS"],
    ["tls", "TLS"],
    ["mongo", "Mongo"],
    ["redis", "Redis"],
    ["MySQL", "MySQL"],
    ["", "UnsupportedProtocol"],
    ["h2c", "UnsupportedProtocol"],
    ["constructor", "UnsupportedProtocol"],
  ];
  for (const [input, want] of cases) {
    it(`${JSON.stringify(input)} ▶ ${want}`, () => {
      expect(parseProtocol(input)).toBe(want);
    });
  }
});
