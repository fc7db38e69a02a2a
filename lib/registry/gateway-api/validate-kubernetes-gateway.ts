/**
 * The Gateway API's Gateway (gateway.networking.k8s.io v1, v1beta1: one schema) as the
 * standard-channel CRD checks it: the class name, listeners (names, ports, protocols, hostnames,
 * TLS, allowed routes) with the list's CEL rules, addresses, infrastructure labels and
 * annotations, allowedListeners and the gateway's TLS settings. Messages of CEL rules are the
 * CRD's. A rule only the newest release has and that refuses what older ones accepted (a TLS
 * listener without `tls`) is left out, since a cluster may serve an older CRD.
 */
import { parseIp } from "../../model/ip.ts";
import { all, type Check } from "../check.ts";
import {
  celRules,
  enumOf,
  get,
  group,
  has,
  hostname,
  items,
  kind,
  list,
  listRules,
  namespace,
  obj,
  objectName,
  portNumber,
  qualifiedKey,
  sectionName,
  specOf,
  stringMap,
  text,
} from "./validate-schema.ts";

/** SecretObjectReference (kind Secret and group "" by default). */
const secretRef: Check = obj({ group, kind, name: objectName, namespace }, ["name"]);

/** A LabelSelector, as the schema types it. */
const labelSelector: Check = obj({
  matchLabels: stringMap(text()),
  matchExpressions: list(obj({ key: text(), operator: text(), values: list(text()) }, ["key", "operator"])),
});

const listenerTls: Check = obj(
  {
    mode: enumOf(["Terminate", "Passthrough"]),
    certificateRefs: list(secretRef, { max: 64 }),
    options: stringMap(text({ max: 4096 }), 16),
  },
  [],
  [
    [
      (t) =>
        get(t, "mode", "Terminate") !== "Terminate" ||
        items(t, "certificateRefs").length > 0 ||
        Object.keys((get(t, "options") as object | undefined) ?? {}).length > 0,
      "certificateRefs or options must be specified when mode is Terminate",
    ],
  ],
);

const listener: Check = obj(
  {
    name: sectionName,
    hostname,
    port: portNumber,
    protocol: text({
      min: 1,
      max: 255,
      pattern:
        /^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9]+$/,
    }),
    tls: listenerTls,
    allowedRoutes: obj({
      kinds: list(obj({ group, kind }, ["kind"]), { max: 8 }),
      namespaces: obj({ from: enumOf(["All", "Selector", "Same"]), selector: labelSelector }),
    }),
  },
  ["name", "port", "protocol"],
);

type L = Record<string, unknown>;
const hostOf = (l: L) => (has(l, "hostname") ? l.hostname : undefined);

const listeners: Check = all(
  list(listener, { min: 1, max: 64 }),
  listRules([
    [
      (ls) =>
        (ls as L[]).every((l) => !["HTTP", "TCP", "UDP"].includes(l.protocol as string) || !has(l, "tls")),
      "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
    ],
    [
      (ls) =>
        (ls as L[]).every(
          (l) =>
            !(l.protocol === "HTTPS" && has(l, "tls")) ||
            ["", "Terminate"].includes(get(l.tls, "mode", "Terminate") as string),
        ),
      "tls mode must be Terminate for protocol HTTPS",
    ],
    [
      (ls) =>
        (ls as L[]).every(
          (l) => !["TCP", "UDP"].includes(l.protocol as string) || !has(l, "hostname") || l.hostname === "",
        ),
      "hostname must not be specified for protocols ['TCP', 'UDP']",
    ],
    [
      (ls) => (ls as L[]).every((a) => (ls as L[]).filter((b) => a.name === b.name).length === 1),
      "Listener name must be unique within the Gateway",
    ],
    [
      (ls) =>
        (ls as L[]).every(
          (a) =>
            (ls as L[]).filter(
              (b) => a.port === b.port && a.protocol === b.protocol && hostOf(a) === hostOf(b),
            ).length === 1,
        ),
      "Combination of port, protocol and hostname must be unique for each listener",
    ],
  ]),
);

const hostnameValue = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const address: Check = obj(
  {
    type: text({
      min: 1,
      max: 253,
      pattern:
        /^Hostname|IPAddress|NamedAddress|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/,
    }),
    value: text({ max: 253 }),
  },
  [],
  [
    // The schema's oneOf: the value of an IPAddress is an IPv4 or IPv6 address.
    [
      (a) =>
        get(a, "type", "IPAddress") !== "IPAddress" ||
        !has(a, "value") ||
        a.value === "" ||
        parseIp(a.value as string).ok,
      "value in body must be of type ipv4 or ipv6",
    ],
    [
      (a) =>
        get(a, "type", "IPAddress") !== "Hostname" ||
        !has(a, "value") ||
        hostnameValue.test(a.value as string),
      "Hostname value must be empty or contain only valid characters (matching ^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$)",
    ],
  ],
);

/** Values of `type` unique among the addresses of that type that have one. */
const uniqueValues = (type: string): [(as: unknown[]) => boolean, string] => [
  (as) => {
    const of = (as as L[])
      .filter((a) => get(a, "type", "IPAddress") === type && has(a, "value"))
      .map((a) => a.value);
    return new Set(of).size === of.length;
  },
  `${type} values must be unique`,
];

const addresses: Check = all(
  list(address, { max: 16 }),
  listRules([uniqueValues("IPAddress"), uniqueValues("Hostname")]),
);

/** Infrastructure labels or annotations: at most 8, keys of label syntax with a prefix under 253 characters. */
const metadataMap = (what: "Label" | "Annotation", value: Check): Check =>
  all(
    stringMap(value, 8),
    celRules([
      [
        (m) => Object.keys(m).every((k) => qualifiedKey.test(k)),
        `${what} keys must be in the form of an optional DNS subdomain prefix followed by a required name segment of up to 63 characters.`,
      ],
      [
        (m) => Object.keys(m).every((k) => [...(k.split("/")[0] as string)].length < 253),
        `If specified, the ${what.toLowerCase()} key's prefix must be a DNS subdomain not longer than 253 characters in total.`,
      ],
    ]),
  );

const infrastructure: Check = obj({
  labels: metadataMap("Label", text({ max: 63, pattern: /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/ })),
  annotations: metadataMap("Annotation", text({ max: 4096 })),
  parametersRef: obj({ group, kind, name: objectName }, ["group", "kind", "name"]),
});

const caValidation: Check = obj(
  {
    caCertificateRefs: list(obj({ group, kind, name: objectName, namespace }, ["group", "kind", "name"]), {
      min: 1,
      max: 8,
    }),
    mode: enumOf(["AllowValidOnly", "AllowInsecureFallback"]),
  },
  ["caCertificateRefs"],
);

const gatewayTls: Check = obj({
  backend: obj({ clientCertificateRef: secretRef }),
  frontend: obj(
    {
      default: obj({ validation: caValidation }),
      perPort: all(
        list(obj({ port: portNumber, tls: obj({ validation: caValidation }) }, ["port", "tls"]), { max: 64 }),
        listRules([
          [
            (ps) => (ps as L[]).every((a) => (ps as L[]).filter((b) => a.port === b.port).length === 1),
            "Port for TLS configuration must be unique within the Gateway",
          ],
        ]),
      ),
    },
    ["default"],
  ),
});

const spec: Check = obj(
  {
    gatewayClassName: objectName,
    listeners,
    addresses,
    infrastructure,
    allowedListeners: obj({
      namespaces: obj({ from: enumOf(["All", "Selector", "Same", "None"]), selector: labelSelector }),
    }),
    tls: gatewayTls,
  },
  ["gatewayClassName", "listeners"],
);

/** Checks a Gateway API Gateway object's `spec` as the Gateway API's CRD does. */
export const kubernetesGatewayCheck: Check = (o, path) => specOf(o, path, spec);
