/**
 * gatewayCheck against istiod 1.30.3's own tables (pkg/config/validation/validation_test.go:
 * TestValidateGateway, TestValidateK8sGateway, TestValidateServer, TestValidateServerPort,
 * TestValidateTlsOptions), each case placed where a whole Gateway carries it, plus the CRD's schema
 * and CEL rules. A refusal names the field and carries istiod's words; istiod's warnings come from
 * istioWarnings. Where the CRD refuses what istiod's unit test (which skips the CRD) only warns
 * about, the CRD's verdict is asserted and the case says so.
 */
import { describe, expect, it } from "vitest";
import { gatewayCheck } from "../../../../lib/registry/istio/validate-gateway.ts";
import { istioWarnings } from "../../../../lib/registry/istio/warnings.ts";
import { gateway } from "./builders.ts";

type Raw = Record<string, unknown>;
/** A case: its name, the spec, and istiod's verdict: undefined (valid) or [field, message substring]. */
type Case = [string, Raw, [string, string] | undefined, string[]?];

const http = (number: number, name = "http", protocol = "http") => ({ number, name, protocol });
const server = (s: Raw): Raw => ({ servers: [s] });
const check = (spec: Raw, metadata: Raw = {}) => gatewayCheck(gateway(spec, metadata), "");
const warnings = (spec: Raw) => istioWarnings("Gateway", gateway(spec) as unknown as Raw);

const s0 = "spec.servers[0]";

/** TestValidateGateway. */
const gatewayCases: Case[] = [
  ["empty", { servers: [] }, ["spec.servers", "gateway must have at least one server"]],
  ["happy domain", server({ hosts: ["foo.bar.com"], port: http(7, "name1") }), undefined, []],
  [
    "happy k8s gateway-api server with no attached routes (not converted: ~ refused)",
    server({ hosts: ["~/foo.bar.com"], port: http(7, "name1") }),
    [`${s0}.hosts[0]`, "invalid namespace value"],
  ],
  [
    "invalid port",
    server({ hosts: ["foo.bar.com"], port: http(66000, "name1") }),
    [`${s0}.port.number`, "port"],
  ],
  [
    "duplicate port names",
    {
      servers: [
        { hosts: ["foo.bar.com"], port: http(80, "foo") },
        { hosts: ["scooby.doo.com"], port: http(8080, "foo") },
      ],
    },
    ["spec.servers[1].port.name", "port names in servers must be unique: duplicate name foo"],
  ],
  ["invalid domain", server({ hosts: ["foo.*.bar.com"], port: http(7, "x") }), [`${s0}.hosts[0]`, "domain"]],
  [
    "valid httpsRedirect",
    server({ hosts: ["bar.com"], port: http(80), tls: { httpsRedirect: true } }),
    undefined,
    [],
  ],
  [
    "invalid https httpsRedirect (a warning only)",
    server({
      hosts: ["bar.com"],
      port: http(80, "https", "https"),
      tls: { httpsRedirect: true, mode: "SIMPLE", credentialName: "cert" },
    }),
    undefined,
    ["spec.servers[0].tls.httpsRedirect: tls.httpsRedirect should only be used with http servers"],
  ],
  [
    "invalid partial wildcard",
    server({ hosts: ["*bar.com"], port: http(443, "tls", "tls"), tls: { mode: "ISTIO_MUTUAL" } }),
    [`${s0}.hosts[0]`, 'partial wildcard "*bar.com" not allowed'],
  ],
];

/** TestValidateServer, a server in a Gateway. */
const serverCases: Case[] = [
  ["empty hosts", server({ hosts: [], port: http(7) }), [`${s0}.hosts`, "at least one host"]],
  ["no hosts (the CRD requires them)", server({ port: http(7) }), [`${s0}.hosts`, "is required"]],
  ["no port (the CRD requires it)", server({ hosts: ["foo.bar.com"] }), [`${s0}.port`, "is required"]],
  ["happy", server({ hosts: ["foo.bar.com"], port: http(7) }), undefined],
  ["happy ip", server({ hosts: ["1.1.1.1"], port: http(7) }), undefined],
  ["happy ns/name", server({ hosts: ["ns1/foo.bar.com"], port: http(7) }), undefined],
  ["happy */name", server({ hosts: ["*/foo.bar.com"], port: http(7) }), undefined],
  ["happy ./name", server({ hosts: ["./foo.bar.com"], port: http(7) }), undefined],
  ["happy *", server({ hosts: ["*"], port: http(7) }), undefined],
  ["invalid ~/name", server({ hosts: ["~/foo.bar.com"], port: http(7) }), [`${s0}.hosts[0]`, "namespace"]],
  [
    "invalid domain ns/name format",
    server({ hosts: ["ns1/foo.*.bar.com"], port: http(7) }),
    [`${s0}.hosts[0]`, "domain"],
  ],
  ["invalid domain", server({ hosts: ["foo.*.bar.com"], port: http(7) }), [`${s0}.hosts[0]`, "domain"]],
  ["invalid short name host", server({ hosts: ["foo"], port: http(7) }), [`${s0}.hosts[0]`, "short names"]],
  ["empty namespace", server({ hosts: ["/foo.com"], port: http(7) }), [`${s0}.hosts[0]`, "cannot be empty"]],
  ["a bad namespace", server({ hosts: ["n_s/foo.com"], port: http(7) }), [`${s0}.hosts[0]`, "in gateway"]],
  ["invalid port", server({ hosts: ["foo.bar.com"], port: http(66000) }), [`${s0}.port.number`, "port"]],
  [
    "invalid tls options",
    server({ hosts: ["foo.bar.com"], port: http(1), tls: { mode: "SIMPLE" } }),
    [`${s0}.tls.serverCertificate`, "TLS"],
  ],
  [
    "no tls on HTTPS",
    server({ hosts: ["foo.bar.com"], port: http(10000, "https", "https") }),
    [`${s0}.tls`, "must have TLS"],
  ],
  [
    "tls on HTTP",
    server({ hosts: ["foo.bar.com"], port: http(10000), tls: { mode: "SIMPLE", credentialName: "c" } }),
    [`${s0}.tls`, "cannot have TLS settings for plain text HTTP ports"],
  ],
  [
    "tls on TCP",
    server({
      hosts: ["foo.bar.com"],
      port: http(10000, "tcp", "tcp"),
      tls: { mode: "SIMPLE", credentialName: "c" },
    }),
    [`${s0}.tls`, "cannot have TLS settings for non HTTPS/TLS ports"],
  ],
  [
    "tls redirect on HTTP",
    server({ hosts: ["foo.bar.com"], port: http(10000), tls: { httpsRedirect: true } }),
    undefined,
  ],
  ["bind ip", server({ hosts: ["foo.bar.com"], port: http(7), bind: "127.0.0.1" }), undefined],
  [
    "bind unix path with invalid port",
    server({ hosts: ["foo.bar.com"], port: http(7), bind: "unix://@foobar" }),
    [`${s0}.port.number`, "port number must be 0 for unix domain socket"],
  ],
  ["bind unix path", server({ hosts: ["foo.bar.com"], port: http(0), bind: "unix://@foobar" }), undefined],
  [
    "bind relative unix path",
    server({ hosts: ["foo.bar.com"], port: http(0), bind: "unix://foobar" }),
    [`${s0}.bind`, "is not an absolute path to a file"],
  ],
  [
    "bind bad ip",
    server({ hosts: ["foo.bar.com"], port: http(7), bind: "foo.bar" }),
    [`${s0}.bind`, "foo.bar is not a valid IP"],
  ],
];

/** TestValidateServerPort, the port of a server binding `bind`. */
const portCases: [string, Raw, string, [string, string] | undefined][] = [
  ["empty", { number: 0, protocol: "", name: "" }, "", [`${s0}.port.protocol`, "invalid protocol"]],
  ["no name", { number: 1, protocol: "http", name: "" }, "", [`${s0}.port.name`, "port name must be set"]],
  ["happy", { protocol: "http", number: 1, name: "Henry" }, "", undefined],
  [
    "invalid protocol",
    { protocol: "kafka", number: 1, name: "Henry" },
    "",
    [`${s0}.port.protocol`, 'invalid protocol "kafka", supported protocols are HTTP'],
  ],
  [
    "invalid number",
    { protocol: "http", number: 2 ** 30, name: "http" },
    "",
    [`${s0}.port.number`, "port number"],
  ],
  [
    "name, no number",
    { protocol: "http", number: 0, name: "Henry" },
    "",
    [`${s0}.port.number`, "port number"],
  ],
  [
    "name, no number, uds",
    { protocol: "http", number: 0, name: "Henry" },
    "uds:///tmp",
    [`${s0}.port.number`, "port number"],
  ],
  [
    "a target port",
    { protocol: "http", number: 80, name: "h", targetPort: 8080 },
    "",
    [`${s0}.port.targetPort`, "targetPort has no impact on Gateways"],
  ],
  [
    "no number (the CRD requires it)",
    { protocol: "http", name: "h" },
    "",
    [`${s0}.port.number`, "is required"],
  ],
  [
    "a number over uint32",
    { protocol: "http", number: 2 ** 32, name: "h" },
    "",
    [`${s0}.port.number`, "0-4294967295"],
  ],
];

const cert = { serverCertificate: "Captain Jean-Luc Picard", privateKey: "Khan Noonien Singh" };
const ca = { caCertificates: "Commander William T. Riker" };
const certs = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ serverCertificate: `cert${i}`, privateKey: `key${i}` }));
const one = "only one of credential_name, credential_names, server_certificate/private_key, tls_certificates";

/** TestValidateTlsOptions, the `tls` of an HTTPS server; [tls, field under tls or "", message] or valid. */
const tlsCases: [string, Raw, [string, string] | undefined, string[]?][] = [
  ["empty", {}, undefined, []],
  ["simple", { mode: "SIMPLE", ...cert }, undefined, []],
  ["simple with client bundle", { mode: "SIMPLE", ...cert, ...ca }, undefined],
  ["simple sds with client bundle", { mode: "SIMPLE", credentialName: "sds-name" }, undefined],
  ["simple sds with server cert", { mode: "SIMPLE", ...cert, credentialName: "sds-name" }, ["", one]],
  [
    "simple no server cert",
    { mode: "SIMPLE", privateKey: "k" },
    ["serverCertificate", "SIMPLE TLS requires a server certificate"],
  ],
  [
    "simple no private key",
    { mode: "SIMPLE", serverCertificate: "c" },
    ["privateKey", "SIMPLE TLS requires a private key"],
  ],
  [
    "simple more than 2 certs (the CRD's maxItems; istiod warns)",
    { mode: "SIMPLE", tlsCertificates: certs(3) },
    ["tlsCertificates", "must have 1 or 2 items"],
  ],
  [
    "simple with both server cert and tls certs",
    { mode: "SIMPLE", ...cert, tlsCertificates: certs(2) },
    ["", one],
  ],
  [
    "simple 2 certs with missing certificate",
    { mode: "SIMPLE", tlsCertificates: [{ privateKey: "k" }, certs(1)[0]] },
    ["tlsCertificates[0].serverCertificate", "server certificate"],
  ],
  [
    "simple 2 certs with missing private key",
    { mode: "SIMPLE", tlsCertificates: [{ serverCertificate: "c" }, certs(1)[0]] },
    ["tlsCertificates[0].privateKey", "private key"],
  ],
  ["simple sds no server cert", { mode: "SIMPLE", privateKey: "k", credentialName: "sds-name" }, undefined],
  [
    "simple sds no private key",
    { mode: "SIMPLE", serverCertificate: "c", credentialName: "sds-name" },
    undefined,
  ],
  ["mutual", { mode: "MUTUAL", ...cert, ...ca }, undefined],
  ["mutual sds", { mode: "MUTUAL", ...ca, credentialName: "sds-name" }, undefined],
  [
    "mutual sds with credential name and server cert",
    { mode: "MUTUAL", ...cert, ...ca, credentialName: "s" },
    ["", one],
  ],
  [
    "mutual sds with credential name and tls certs (the CRD's rules miss this pair; istiod does not)",
    { mode: "MUTUAL", ...ca, tlsCertificates: certs(1), credentialName: "sds-name" },
    ["", one],
  ],
  [
    "mutual no server cert",
    { mode: "MUTUAL", privateKey: "k", ...ca },
    ["serverCertificate", "MUTUAL TLS requires a server certificate"],
  ],
  [
    "mutual no private key",
    { mode: "MUTUAL", serverCertificate: "c", ...ca },
    ["privateKey", "MUTUAL TLS requires a private key"],
  ],
  [
    "credential names and certificates",
    { mode: "MUTUAL", ...cert, credentialNames: ["server-certs"] },
    ["", one],
  ],
  [
    "credential names and tls certificates (the CRD's rule)",
    { mode: "MUTUAL", tlsCertificates: certs(1), credentialNames: ["server-certs"] },
    ["", "only one of credentialNames or tlsCertificates can be set"],
  ],
  [
    "credential name and names (the CRD's rule)",
    { mode: "SIMPLE", credentialName: "a", credentialNames: ["b"] },
    ["", "only one of credentialName or credentialNames can be set"],
  ],
  [
    "three credential names (the CRD's maxItems)",
    { mode: "SIMPLE", credentialNames: ["a", "b", "c"] },
    ["credentialNames", "1 or 2"],
  ],
  ["only tls certificates", { mode: "MUTUAL", tlsCertificates: certs(1), ...ca }, undefined],
  [
    "mutual sds no server cert",
    { mode: "MUTUAL", privateKey: "k", ...ca, credentialName: "sds-name" },
    undefined,
  ],
  ["mutual no client CA bundle", { mode: "MUTUAL", ...cert }, ["caCertificates", "client CA bundle"]],
  ["mutual no certs", { mode: "MUTUAL" }, ["caCertificates", "client CA bundle"]],
  [
    "mutual 2 certs with missing CA certificate",
    { mode: "MUTUAL", tlsCertificates: certs(2) },
    ["caCertificates", "client CA bundle"],
  ],
  [
    "optional mutual no certs",
    { mode: "OPTIONAL_MUTUAL" },
    ["caCertificates", "MUTUAL TLS requires a client CA bundle"],
  ],
  [
    "optional mutual no server cert",
    { mode: "OPTIONAL_MUTUAL", ...ca },
    ["serverCertificate", "MUTUAL TLS requires a server certificate"],
  ],
  [
    "pass through sds no certs",
    { mode: "PASSTHROUGH", credentialName: "sds-name" },
    undefined,
    ["spec.servers[0].tls: PASSTHROUGH mode does not use certificates, they will be ignored"],
  ],
  [
    "pass through sds crl",
    { mode: "PASSTHROUGH", caCrl: "scrl" },
    undefined,
    ["PASSTHROUGH mode does not use certificates"],
  ],
  [
    "auto passthrough with a certificate",
    { mode: "AUTO_PASSTHROUGH", tlsCertificates: certs(1) },
    undefined,
    ["AUTO_PASSTHROUGH mode does not use certificates"],
  ],
  [
    "pass through with credentialName and a CRL",
    { mode: "PASSTHROUGH", credentialName: "c", caCrl: "crl" },
    ["caCrl", "CRL is not supported with credentialName. CRL has to be specified in the credential"],
  ],
  ["istio_mutual no certs", { mode: "ISTIO_MUTUAL" }, undefined, []],
  [
    "istio_mutual with server cert",
    { mode: "ISTIO_MUTUAL", serverCertificate: "c" },
    ["serverCertificate", "cannot have associated server cert"],
  ],
  [
    "istio_mutual with client bundle",
    { mode: "ISTIO_MUTUAL", ...cert, ...ca },
    ["serverCertificate", "cannot have associated"],
  ],
  [
    "istio_mutual with private key",
    { mode: "ISTIO_MUTUAL", privateKey: "k" },
    ["privateKey", "cannot have associated private key"],
  ],
  [
    "istio_mutual with CA",
    { mode: "ISTIO_MUTUAL", ...ca },
    ["caCertificates", "cannot have associated CA bundle"],
  ],
  [
    "istio_mutual with credential name",
    { mode: "ISTIO_MUTUAL", credentialName: "some-cred" },
    ["credentialName", "cannot have associated credentialName"],
  ],
  [
    "istio_mutual with credential names",
    { mode: "ISTIO_MUTUAL", credentialNames: ["a"] },
    ["credentialNames", "cannot have associated credentialNames"],
  ],
  [
    "istio_mutual with tls certificates",
    { mode: "ISTIO_MUTUAL", tlsCertificates: certs(1) },
    ["tlsCertificates", "cannot have associated tlsCertificates"],
  ],
  [
    "invalid cipher suites",
    { mode: "SIMPLE", credentialName: "sds-name", cipherSuites: ["not-a-cipher-suite"] },
    undefined,
    ["spec.servers[0].tls: ignoring invalid cipher suites: [not-a-cipher-suite]"],
  ],
  [
    "valid cipher suites",
    { mode: "SIMPLE", credentialName: "s", cipherSuites: ["ECDHE-ECDSA-AES128-SHA"] },
    undefined,
    [],
  ],
  [
    "cipher suites operations",
    { mode: "SIMPLE", credentialName: "s", cipherSuites: ["-ECDHE-ECDSA-AES128-SHA"] },
    undefined,
    [],
  ],
  [
    "duplicate cipher suites",
    {
      mode: "SIMPLE",
      credentialName: "s",
      cipherSuites: ["ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES128-SHA"],
    },
    undefined,
    ["ignoring duplicate cipher suites: [ECDHE-ECDSA-AES128-SHA]"],
  ],
  [
    "invalid cipher suites with invalid config",
    { mode: "SIMPLE", cipherSuites: ["not-a-cipher-suite"] },
    ["serverCertificate", "requires a server certificate"],
  ],
  [
    "TLS 1.0 without ciphers",
    { mode: "SIMPLE", credentialName: "s", minProtocolVersion: "TLSV1_0" },
    undefined,
    ["TLS version below TLSV1_2 require setting compatible ciphers"],
  ],
  [
    "crl specified for SIMPLE TLS",
    { mode: "SIMPLE", ...cert, caCrl: "crl" },
    ["caCrl", "CRL is not supported with SIMPLE TLS"],
  ],
  [
    "crl specified for CredentialName",
    { mode: "SIMPLE", caCrl: "crl", credentialName: "credential" },
    undefined,
  ],
  ["with CredentialNames", { mode: "MUTUAL", credentialNames: ["credential1", "credential2"] }, undefined],
  ["an unknown mode (the CRD's enum)", { mode: "STRICT" }, ["mode", "unsupported value"]],
  [
    "an unknown version (the CRD's enum)",
    { mode: "SIMPLE", credentialName: "s", maxProtocolVersion: "TLSV9" },
    ["maxProtocolVersion", "unsupported value"],
  ],
];

const verdict = (spec: Raw, want: [string, string] | undefined, metadata: Raw = {}) => {
  const got = check(spec, metadata);
  if (!want) return expect(got).toBeUndefined();
  expect(got?.field).toBe(want[0]);
  expect(got?.message).toContain(want[1]);
};

describe("gatewayCheck", () => {
  it("accepts the builder", () => expect(check({})).toBeUndefined());

  it.each(gatewayCases)("TestValidateGateway: %s", (_, spec, want, warns) => {
    verdict(spec, want);
    if (!want && warns) expect(warnings(spec)).toEqual(warns);
  });

  it.each(serverCases)("TestValidateServer: %s", (_, spec, want) => verdict(spec, want));

  it.each(portCases)("TestValidateServerPort: %s", (_, port, bind, want) =>
    verdict(server({ hosts: ["foo.bar.com"], port, ...(bind && { bind }) }), want));

  it.each(tlsCases)("TestValidateTlsOptions: %s", (_, tls, want, warns) => {
    const spec = server({ hosts: ["foo.bar.com"], port: http(443, "https", "https"), tls });
    verdict(spec, want && [want[0] ? `${s0}.tls.${want[0]}` : `${s0}.tls`, want[1]]);
    if (!want && warns) {
      const got = warnings(spec);
      if (warns.length === 0) expect(got).toEqual([]);
      for (const w of warns) expect(got.join("\n")).toContain(w);
    }
  });

  it("TestValidateK8sGateway: a converted Gateway API gateway may name no namespace (~) and carry dots", () => {
    const spec = server({ hosts: ["~/foo.bar.com"], port: http(7, "name1") });
    const converted = { annotations: { "internal.istio.io/gateway-semantics": "gateway" } };
    expect(check(spec, { name: "gw.istio", ...converted })).toBeUndefined();
    expect(check(spec)?.field).toBe("spec.servers[0].hosts[0]");
    expect(check({}, { name: "gw.istio" })).toEqual({
      field: "metadata.name",
      message: 'invalid gateway name: "gw.istio"',
    });
  });

  it.each([
    ["no spec", { spec: undefined }, "spec", "is required"],
    [
      "a selector value that is no string",
      { spec: { ...gateway().spec, selector: { a: 1 } } },
      "spec.selector.a",
      "must be a string",
    ],
    ["servers that are no list", { spec: { servers: {} } }, "spec.servers", "must be an array"],
    ["a null server", { spec: { servers: [null] } }, "spec.servers[0]", "may not be null"],
    [
      "a port name that is no string",
      { spec: server({ hosts: ["a.com"], port: { number: 80, protocol: "HTTP", name: 8 } }) },
      `${s0}.port.name`,
      "must be a string",
    ],
    [
      "an internal annotation",
      { metadata: { ...gateway().metadata, annotations: { "internal.istio.io/parents": "x" } } },
      "metadata.annotations",
      "may not be set by users",
    ],
  ])("refuses %s (the CRD's schema and istiod's metadata rules)", (_, override, field, message) => {
    const got = gatewayCheck({ ...gateway(), ...override }, "");
    expect(got?.field).toContain(field);
    expect(got?.message).toContain(message);
  });
});
