import { ruleTable } from "./support/rule-table.ts";
import { at, DROP, service } from "./support/valid-objects.ts";

const bigAnnotation = "x".repeat(256 * 1024);

ruleTable(
  "v1 Service",
  [
    { name: "a ClusterIP service with two named ports", object: service() },
    {
      name: "defaulted fields absent (type, protocol, targetPort) and one unnamed port",
      object: service({ "spec.type": DROP, "spec.ports": [{ port: 80 }] }),
    },
    {
      name: "headless without ports",
      object: service({ "spec.clusterIP": "None", "spec.clusterIPs": ["None"], "spec.ports": DROP }),
    },
    {
      name: "dual-stack cluster IPs in ipFamilies' order",
      object: service({
        "spec.clusterIPs": ["10.96.0.10", "fd00:10:96::a"],
        "spec.ipFamilies": ["IPv4", "IPv6"],
      }),
    },
    {
      name: "an IPv6 primary cluster IP",
      object: service({
        "spec.clusterIP": "2001:db8::1",
        "spec.clusterIPs": ["2001:db8::1"],
        "spec.ipFamilies": ["IPv6"],
      }),
    },
    {
      name: "ExternalName with a trailing dot",
      object: service({
        "spec.type": "ExternalName",
        "spec.externalName": "api.example.com.",
        "spec.clusterIP": DROP,
        "spec.clusterIPs": DROP,
        "spec.ipFamilies": DROP,
      }),
    },
    {
      name: "LoadBalancer with external IPs, load balancer IP and ingress ip and hostname",
      object: service({
        "spec.type": "LoadBalancer",
        "spec.externalIPs": ["203.0.113.7"],
        "spec.loadBalancerIP": "203.0.113.8",
        "spec.ports[0].nodePort": 30080,
        "status.loadBalancer.ingress": [
          { ip: "203.0.113.9", hostname: "" },
          { ip: "", hostname: "lb-1.elb.example.com" },
        ],
      }),
    },
    {
      name: "a 63-character name and a prefixed label key",
      object: service({
        "metadata.name": `a${"b".repeat(62)}`,
        [at("metadata", "labels", "istio.io/persistent-session")]: "x-y",
      }),
    },
  ],
  [
    {
      name: "a name with dots (reviews.prod would shadow service reviews in namespace prod)",
      object: service({ "metadata.name": "reviews.prod" }),
      field: "object.metadata.name",
      message: /RFC 1035 label.*no '\.'/,
    },
    {
      name: "a name starting with a digit",
      object: service({ "metadata.name": "1reviews" }),
      field: "object.metadata.name",
    },
    {
      name: "a 64-character name",
      object: service({ "metadata.name": "a".repeat(64) }),
      field: "object.metadata.name",
      message: /no more than 63/,
    },
    {
      name: "a namespace with capitals",
      object: service({ "metadata.namespace": "Default" }),
      field: "object.metadata.namespace",
    },
    { name: "no spec", object: service({ spec: DROP }), field: "object.spec", message: /required/ },
    {
      name: "clusterIP 999.999.1.1",
      object: service({ "spec.clusterIP": "999.999.1.1", "spec.clusterIPs": DROP }),
      field: "object.spec.clusterIP",
      message: /not a valid IP/,
    },
    {
      name: "clusterIP not-an-ip",
      object: service({ "spec.clusterIP": "not-an-ip", "spec.clusterIPs": DROP }),
      field: "object.spec.clusterIP",
    },
    {
      name: "clusterIP a CIDR",
      object: service({ "spec.clusterIP": "10.96.0.0/16", "spec.clusterIPs": DROP }),
      field: "object.spec.clusterIP",
      message: /got CIDR/,
    },
    {
      name: "clusterIP with leading zeros",
      object: service({ "spec.clusterIP": "10.96.0.010", "spec.clusterIPs": DROP }),
      field: "object.spec.clusterIP",
      message: /leading 0s/,
    },
    {
      name: "clusterIPs[0] not clusterIP",
      object: service({ "spec.clusterIPs": ["10.96.0.11"] }),
      field: "object.spec.clusterIPs[0]",
      message: /must match/,
    },
    {
      name: "two IPv4 cluster IPs",
      object: service({ "spec.clusterIPs": ["10.96.0.10", "10.96.0.11"], "spec.ipFamilies": DROP }),
      field: "object.spec.clusterIPs[1]",
      message: /one IP for each IP family/,
    },
    {
      name: "clusterIPs holding a bad IP",
      object: service({ "spec.clusterIPs": ["10.96.0.10", "fd00::zz"], "spec.ipFamilies": DROP }),
      field: "object.spec.clusterIPs[1]",
    },
    {
      name: "a family that contradicts ipFamilies",
      object: service({ "spec.ipFamilies": ["IPv6"] }),
      field: "object.spec.clusterIPs[0]",
      message: /IPv6/,
    },
    {
      name: "an unknown IP family",
      object: service({ "spec.ipFamilies": ["IPv5"] }),
      field: "object.spec.ipFamilies[0]",
    },
    {
      name: "an external IP of three octets",
      object: service({ "spec.externalIPs": ["1.2.3"] }),
      field: "object.spec.externalIPs[0]",
    },
    {
      name: "a loadBalancerIP that is no IP",
      object: service({ "spec.loadBalancerIP": "lb" }),
      field: "object.spec.loadBalancerIP",
    },
    {
      name: "an ingress IP out of range",
      object: service({ "status.loadBalancer.ingress": [{ ip: "300.1.1.1" }] }),
      field: "object.status.loadBalancer.ingress[0].ip",
    },
    {
      name: "an ingress hostname that is an IP",
      object: service({ "status.loadBalancer.ingress": [{ hostname: "1.2.3.4" }] }),
      field: "object.status.loadBalancer.ingress[0].hostname",
      message: /not an IP/,
    },
    {
      name: "an ingress hostname with '_'",
      object: service({ "status.loadBalancer.ingress": [{ hostname: "lb_1.example.com" }] }),
      field: "object.status.loadBalancer.ingress[0].hostname",
    },
    {
      name: "port 70000",
      object: service({ "spec.ports[0].port": 70000 }),
      field: "object.spec.ports[0].port",
    },
    { name: "port 0", object: service({ "spec.ports[0].port": 0 }), field: "object.spec.ports[0].port" },
    {
      name: "protocol tcp (lower case)",
      object: service({ "spec.ports[0].protocol": "tcp" }),
      field: "object.spec.ports[0].protocol",
      message: /TCP, UDP, SCTP/,
    },
    {
      name: "an unnamed port among two",
      object: service({ "spec.ports[1].name": "" }),
      field: "object.spec.ports[1].name",
      message: /more than one port/,
    },
    {
      name: "a duplicate port name",
      object: service({ "spec.ports[1].name": "grpc" }),
      field: "object.spec.ports[1].name",
      message: /duplicate/,
    },
    {
      name: "a port name with capitals",
      object: service({ "spec.ports[0].name": "Grpc" }),
      field: "object.spec.ports[0].name",
    },
    {
      name: "a named targetPort with '_'",
      object: service({ "spec.ports[1].targetPort": "http_web" }),
      field: "object.spec.ports[1].targetPort",
    },
    {
      name: "a named targetPort over 15 characters",
      object: service({ "spec.ports[1].targetPort": "http-web-frontend" }),
      field: "object.spec.ports[1].targetPort",
      message: /15/,
    },
    {
      name: "targetPort 0",
      object: service({ "spec.ports[0].targetPort": 0 }),
      field: "object.spec.ports[0].targetPort",
    },
    {
      name: "an appProtocol with two '/'",
      object: service({ "spec.ports[1].appProtocol": "a/b/c" }),
      field: "object.spec.ports[1].appProtocol",
    },
    {
      name: "nodePort 70000",
      object: service({ "spec.ports[0].nodePort": 70000 }),
      field: "object.spec.ports[0].nodePort",
    },
    { name: "an unknown type", object: service({ "spec.type": "Internal" }), field: "object.spec.type" },
    {
      name: "no ports on a ClusterIP service",
      object: service({ "spec.ports": [] }),
      field: "object.spec.ports",
      message: /required/,
    },
    {
      name: "ExternalName without a name",
      object: service({ "spec.type": "ExternalName", "spec.clusterIP": DROP, "spec.clusterIPs": DROP }),
      field: "object.spec.externalName",
    },
    {
      name: "ExternalName with a cluster IP",
      object: service({ "spec.type": "ExternalName", "spec.externalName": "api.example.com" }),
      field: "object.spec.clusterIP",
      message: /ExternalName/,
    },
    {
      name: "ExternalName that is no DNS name",
      object: service({
        "spec.type": "ExternalName",
        "spec.externalName": "api example",
        "spec.clusterIP": DROP,
        "spec.clusterIPs": DROP,
      }),
      field: "object.spec.externalName",
    },
    {
      name: "a selector key with two '/'",
      object: service({ [at("spec", "selector", "a/b/c")]: "x" }),
      field: 'object.spec.selector["a/b/c"]',
    },
    {
      name: "internalTrafficPolicy local (lower case)",
      object: service({ "spec.internalTrafficPolicy": "local" }),
      field: "object.spec.internalTrafficPolicy",
    },
    {
      name: "publishNotReadyAddresses as a string",
      object: service({ "spec.publishNotReadyAddresses": "true" }),
      field: "object.spec.publishNotReadyAddresses",
      message: /boolean/,
    },
    {
      name: "a label value starting with '-'",
      object: service({ "metadata.labels.app": "-reviews" }),
      field: "object.metadata.labels.app",
    },
    {
      name: "a label value of 64 characters",
      object: service({ "metadata.labels.app": "a".repeat(64) }),
      field: "object.metadata.labels.app",
    },
    {
      name: "a label key with an empty name part",
      object: service({ [at("metadata", "labels", "example.com/")]: "x" }),
      field: 'object.metadata.labels["example.com/"]',
      message: /name part/,
    },
    {
      name: "an annotation key with a space",
      object: service({ [at("metadata", "annotations", "bad key")]: "x" }),
      field: 'object.metadata.annotations["bad key"]',
    },
    {
      name: "annotations over 256 KiB",
      object: service({ "metadata.annotations.big": bigAnnotation }),
      field: "object.metadata.annotations",
      message: /262144 bytes/,
    },
  ],
);
