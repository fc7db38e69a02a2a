import { ruleTable } from "./support/rule-table.ts";
import { at, DROP, namespace, node, pod } from "./support/valid-objects.ts";

ruleTable(
  "v1 Pod",
  [
    { name: "a dual-stack running pod", object: pod() },
    { name: "no status (not scheduled yet)", object: pod({ status: DROP }) },
    { name: "no spec (a partial object)", object: pod({ spec: DROP }) },
    { name: "an empty podIP and no podIPs", object: pod({ "status.podIP": "", "status.podIPs": DROP }) },
    {
      name: "a not-ready pod",
      object: pod({
        "status.conditions": [{ type: "Ready", status: "False", reason: "ContainersNotReady" }],
      }),
    },
    { name: "a terminating pod", object: pod({ "metadata.deletionTimestamp": "2025-03-14T09:27:41Z" }) },
  ],
  [
    {
      name: "podIPs as a string",
      object: pod({ "status.podIPs": "10.244.1.12" }),
      field: "object.status.podIPs",
      message: /array/,
    },
    {
      name: "a podIPs entry without ip",
      object: pod({ "status.podIPs": [{}] }),
      field: "object.status.podIPs[0].ip",
    },
    {
      name: "a podIPs entry that is no IP",
      object: pod({ "status.podIPs[0].ip": "10.244.1" }),
      field: "object.status.podIPs[0].ip",
    },
    {
      name: "a condition status that is not True/False/Unknown",
      object: pod({ "status.conditions": [{ type: "Ready", status: "yes" }] }),
      field: "object.status.conditions[0].status",
    },
    {
      name: "a condition without type",
      object: pod({ "status.conditions": [{ status: "True" }] }),
      field: "object.status.conditions[0].type",
    },
    { name: "podIP 999.1.1.1", object: pod({ "status.podIP": "999.1.1.1" }), field: "object.status.podIP" },
    {
      name: "two IPv4 pod IPs",
      object: pod({ "status.podIPs[1].ip": "10.244.1.13" }),
      field: "object.status.podIPs[1].ip",
      message: /one IP for each IP family/,
    },
    {
      name: "three pod IPs",
      object: pod({ "status.podIPs[2]": { ip: "10.0.0.1" } }),
      field: "object.status.podIPs",
    },
    {
      name: "a phase that does not exist",
      object: pod({ "status.phase": "Done" }),
      field: "object.status.phase",
    },
    {
      name: "a node name with a space",
      object: pod({ "spec.nodeName": "worker a" }),
      field: "object.spec.nodeName",
    },
    {
      name: "a service account with '/'",
      object: pod({ "spec.serviceAccountName": "ns/sa" }),
      field: "object.spec.serviceAccountName",
    },
    {
      name: "a deprecated service account with capitals",
      object: pod({ "spec.serviceAccount": "SA" }),
      field: "object.spec.serviceAccount",
    },
    {
      name: "a deletionTimestamp as a number",
      object: pod({ "metadata.deletionTimestamp": 5 }),
      field: "object.metadata.deletionTimestamp",
    },
    { name: "a name with '/'", object: pod({ "metadata.name": "a/b" }), field: "object.metadata.name" },
    {
      name: "a name of 254 characters",
      object: pod({ "metadata.name": "a".repeat(254) }),
      field: "object.metadata.name",
      message: /253/,
    },
  ],
);

ruleTable(
  "v1 Node",
  [{ name: "a DNS-subdomain name", object: node() }],
  [
    { name: "a name with '_'", object: node({ "metadata.name": "worker_a" }), field: "object.metadata.name" },
    {
      name: "a namespace (Nodes are cluster-scoped)",
      object: node({ "metadata.namespace": "default" }),
      field: "object.metadata.namespace",
      message: /cluster-scoped/,
    },
    {
      name: "a zone label with '/'",
      object: node({ [at("metadata", "labels", "topology.kubernetes.io/zone")]: "us/east" }),
      field: 'object.metadata.labels["topology.kubernetes.io/zone"]',
    },
  ],
);

ruleTable(
  "v1 Namespace",
  [{ name: "a DNS-1123 label", object: namespace() }],
  [
    {
      name: "a name with a dot",
      object: namespace({ "metadata.name": "book.info" }),
      field: "object.metadata.name",
      message: /RFC 1123 label/,
    },
    {
      name: "labels as a list",
      object: namespace({ "metadata.labels": ["a"] }),
      field: "object.metadata.labels",
    },
    {
      name: "a label key __proto__ (as JSON.parse makes it: an own property)",
      object: JSON.parse(
        '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a","labels":{"__proto__":"x"}}}',
      ),
      field: "object.metadata.labels.__proto__",
    },
  ],
);
