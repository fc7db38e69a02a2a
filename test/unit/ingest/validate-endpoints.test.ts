import { ruleTable } from "./support/rule-table.ts";
import { at, DROP, endpoints, slice } from "./support/valid-objects.ts";

const SERVICE_NAME = at("metadata", "labels", "kubernetes.io/service-name");
const LABEL_FIELD = 'object.metadata.labels["kubernetes.io/service-name"]';
const address = "endpoints[0].addresses[0]";

ruleTable(
  "discovery.k8s.io/v1 EndpointSlice",
  [
    { name: "an IPv4 slice", object: slice() },
    { name: "no service-name label (feeds no service)", object: slice({ [SERVICE_NAME]: DROP }) },
    { name: "endpoints and ports null", object: slice({ endpoints: null, ports: null }) },
    { name: "an IPv6 slice", object: slice({ addressType: "IPv6", [address]: "2001:db8::12" }) },
    {
      name: "an IPv6 address with an IPv4 tail",
      object: slice({ addressType: "IPv6", [address]: "64:ff9b::10.0.0.1" }),
    },
    {
      name: "an FQDN slice with a trailing dot",
      object: slice({ addressType: "FQDN", [address]: "api.example.com." }),
    },
    {
      name: "a port without a number (all ports)",
      object: slice({ ports: [{ name: "", protocol: "TCP" }] }),
    },
    {
      name: "a loopback address (local backends; the API server would refuse it)",
      object: slice({ [address]: "127.0.0.1" }),
    },
  ],
  [
    {
      name: "no addressType",
      object: slice({ addressType: DROP }),
      field: "object.addressType",
      message: /required/,
    },
    { name: "an unknown addressType", object: slice({ addressType: "IPv5" }), field: "object.addressType" },
    {
      name: "999.999.1.1",
      object: slice({ [address]: "999.999.1.1" }),
      field: `object.${address}`,
      message: /not a valid IP/,
    },
    { name: "not-an-ip", object: slice({ [address]: "not-an-ip" }), field: `object.${address}` },
    {
      name: "a CIDR",
      object: slice({ [address]: "10.244.1.0/24" }),
      field: `object.${address}`,
      message: /CIDR/,
    },
    {
      name: "IPv6 in an IPv4 slice",
      object: slice({ [address]: "fd00::1" }),
      field: `object.${address}`,
      message: /valid IPv4/,
    },
    {
      name: "IPv4 in an IPv6 slice",
      object: slice({ addressType: "IPv6" }),
      field: `object.${address}`,
      message: /valid IPv6/,
    },
    {
      name: "an IPv4-mapped IPv6 address",
      object: slice({ addressType: "IPv6", [address]: "::ffff:10.0.0.1" }),
      field: `object.${address}`,
      message: /IPv4-mapped/,
    },
    {
      name: "an IPv6 zone",
      object: slice({ addressType: "IPv6", [address]: "fe80::1%eth0" }),
      field: `object.${address}`,
      message: /zone/,
    },
    {
      name: "a one-label FQDN",
      object: slice({ addressType: "FQDN", [address]: "api" }),
      field: `object.${address}`,
      message: /two segments/,
    },
    {
      name: "an FQDN with '_'",
      object: slice({ addressType: "FQDN", [address]: "api_1.example.com" }),
      field: `object.${address}`,
    },
    {
      name: "an endpoint without addresses",
      object: slice({ "endpoints[0].addresses": [] }),
      field: "object.endpoints[0].addresses",
      message: /at least 1/,
    },
    {
      name: "101 addresses",
      object: slice({ "endpoints[0].addresses": Array(101).fill("10.0.0.1") }),
      field: "object.endpoints[0].addresses",
    },
    {
      name: "addresses as a string",
      object: slice({ "endpoints[0].addresses": "10.0.0.1" }),
      field: "object.endpoints[0].addresses",
      message: /array/,
    },
    {
      name: "a node name with '_'",
      object: slice({ "endpoints[0].nodeName": "worker_a" }),
      field: "object.endpoints[0].nodeName",
    },
    {
      name: "a hostname with a dot",
      object: slice({ "endpoints[0].hostname": "reviews.0" }),
      field: "object.endpoints[0].hostname",
    },
    {
      name: "ready as a string",
      object: slice({ "endpoints[0].conditions.ready": "yes" }),
      field: "object.endpoints[0].conditions.ready",
    },
    {
      name: "a pod targetRef named with '/'",
      object: slice({ "endpoints[0].targetRef.name": "a/b" }),
      field: "object.endpoints[0].targetRef.name",
    },
    {
      name: "a pod targetRef in a bad namespace",
      object: slice({ "endpoints[0].targetRef.namespace": "Other" }),
      field: "object.endpoints[0].targetRef.namespace",
    },
    {
      name: "a zone hint that is no label value",
      object: slice({ "endpoints[0].hints.forZones[0].name": "us east" }),
      field: "object.endpoints[0].hints.forZones[0].name",
    },
    {
      name: "a zone as a number",
      object: slice({ "endpoints[0].zone": 1 }),
      field: "object.endpoints[0].zone",
    },
    { name: "port 0", object: slice({ "ports[0].port": 0 }), field: "object.ports[0].port" },
    { name: "port 65536", object: slice({ "ports[0].port": 65536 }), field: "object.ports[0].port" },
    {
      name: "a port name with capitals",
      object: slice({ "ports[0].name": "Grpc" }),
      field: "object.ports[0].name",
    },
    {
      name: "duplicate port names",
      object: slice({
        ports: [
          { name: "grpc", port: 1 },
          { name: "grpc", port: 2 },
        ],
      }),
      field: "object.ports[1].name",
    },
    {
      name: "protocol HTTP",
      object: slice({ "ports[0].protocol": "HTTP" }),
      field: "object.ports[0].protocol",
    },
    {
      name: "a service-name label with '/' (would address another service)",
      object: slice({ [SERVICE_NAME]: "reviews/../ratings" }),
      field: LABEL_FIELD,
    },
    {
      name: "a service-name label with dots",
      object: slice({ [SERVICE_NAME]: "ratings.other" }),
      field: LABEL_FIELD,
      message: /RFC 1035.*Service this slice belongs to/,
    },
    {
      name: "a service-name label with capitals",
      object: slice({ [SERVICE_NAME]: "Reviews" }),
      field: LABEL_FIELD,
    },
    {
      name: "a slice name with '_'",
      object: slice({ "metadata.name": "reviews_1" }),
      field: "object.metadata.name",
    },
  ],
);

ruleTable(
  "v1 Endpoints",
  [
    { name: "two subsets' addresses and named ports", object: endpoints() },
    { name: "no subsets", object: endpoints({ subsets: DROP }) },
    { name: "one unnamed port", object: endpoints({ "subsets[0].ports": [{ port: 80 }] }) },
  ],
  [
    {
      name: "an address that is no IP",
      object: endpoints({ "subsets[0].addresses[0].ip": "not-an-ip" }),
      field: "object.subsets[0].addresses[0].ip",
    },
    {
      name: "an address without ip",
      object: endpoints({ "subsets[0].addresses[0].ip": DROP }),
      field: "object.subsets[0].addresses[0].ip",
      message: /required/,
    },
    {
      name: "a not-ready CIDR",
      object: endpoints({ "subsets[0].notReadyAddresses[0].ip": "10.0.0.0/8" }),
      field: "object.subsets[0].notReadyAddresses[0].ip",
    },
    {
      name: "a node name with a space",
      object: endpoints({ "subsets[0].addresses[0].nodeName": "worker a" }),
      field: "object.subsets[0].addresses[0].nodeName",
    },
    {
      name: "an unnamed port among two",
      object: endpoints({ "subsets[0].ports[1].name": DROP }),
      field: "object.subsets[0].ports[1].name",
    },
    {
      name: "a port without a number",
      object: endpoints({ "subsets[0].ports[0].port": DROP }),
      field: "object.subsets[0].ports[0].port",
    },
    {
      name: "protocol udp (lower case)",
      object: endpoints({ "subsets[0].ports[0].protocol": "udp" }),
      field: "object.subsets[0].ports[0].protocol",
    },
    {
      name: "a pod targetRef named with '/'",
      object: endpoints({ "subsets[0].addresses[0].targetRef.name": "x/y" }),
      field: "object.subsets[0].addresses[0].targetRef.name",
    },
  ],
);
