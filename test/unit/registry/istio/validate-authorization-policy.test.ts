/**
 * AuthorizationPolicy validation as istiod's webhook decides it: the cases of Istio's
 * TestValidateAuthorizationPolicy, its CRD test data (authz-valid.yaml, authz-invalid.yaml) and
 * pkg/config/security's attribute checks, translated to objects as the API server sends them. Each
 * refusal names its field and carries istiod's message; warnings are istiod's.
 */
import { describe, expect, it } from "vitest";
import { strict, validateEvent } from "../../../../lib/ingest/validate.ts";
import { istioWarnings } from "../../../../lib/registry/istio/warnings.ts";

type Spec = Record<string, unknown>;

const policy = (spec: Spec | undefined, annotations?: Record<string, string>) => ({
  apiVersion: "security.istio.io/v1",
  kind: "AuthorizationPolicy",
  metadata: {
    name: "name",
    namespace: "namespace",
    resourceVersion: "1",
    ...(annotations && { annotations }),
  },
  ...(spec !== undefined && { spec }),
});

const verdict = (obj: Record<string, unknown>) => {
  const r = strict(validateEvent({ type: "ADDED", object: obj }));
  return r.ok ? "valid" : `${r.error.field}: ${r.error.message}`;
};

const httpbin = { matchLabels: { app: "httpbin", version: "v1" } };
const from = (source: Spec) => ({ rules: [{ from: [{ source }] }] });
const to = (operation: Spec) => ({ rules: [{ to: [{ operation }] }] });
const when = (...conditions: unknown[]) => ({ rules: [{ when: conditions }] });
const gateway = { group: "gateway.networking.k8s.io", kind: "Gateway", name: "foo" };
const denyRule = {
  from: [{ source: { principals: ["temp"] } }],
  to: [{ operation: { ports: ["8080"], methods: ["GET", "DELETE"] } }],
};
const custom = (rules: unknown[], provider: unknown = { name: "my-custom-authz" }) => ({
  action: "CUSTOM",
  provider,
  rules,
});

/** authz-valid.yaml's "full" policy: every field, every attribute, every value form. */
const full: Spec = {
  selector: { matchLabels: { app: "httpbin" } },
  rules: [
    {
      from: [
        {
          source: {
            principals: ["principal", "principal-prefix-*", "*-suffix-principal", "*"],
            requestPrincipals: ["requestPrincipals", "requestPrincipals-prefix-*", "*"],
            namespaces: ["ns", "ns-prefix-*", "*-ns-suffix", "*"],
            ipBlocks: ["1.2.3.4", "5.6.0.0/16"],
            remoteIpBlocks: ["1.2.3.4", "5.6.0.0/16"],
            notPrincipals: ["not-principal", "*"],
            notRequestPrincipals: ["not-requestPrincipals", "*"],
            notNamespaces: ["not-ns", "*"],
            notIpBlocks: ["9.0.0.1", "9.2.0.0/16"],
            notRemoteIpBlocks: ["9.0.0.1", "9.2.0.0/16"],
            trustDomains: ["cluster.local", "cluster-prefix-*", "*-suffix-cluster", "*"],
            notTrustDomains: ["not-cluster.local", "*"],
          },
        },
      ],
      to: [
        {
          operation: {
            methods: ["method", "method-prefix-*", "*-suffix-method", "*"],
            hosts: ["exact.com", "*.suffix.com", "prefix.*", "*"],
            ports: ["80", "90"],
            paths: ["/exact", "/prefix/*", "*/suffix", "*", "/path/template/{*}", "/{**}/path/template"],
            notMethods: ["not-method", "*"],
            notHosts: ["not-exact.com", "*"],
            notPorts: ["8000", "9000"],
            notPaths: ["/not-exact", "/not-path/template/{*}", "/{**}/not-path/template"],
          },
        },
      ],
      when: [
        { key: "request.headers[X-header]", values: ["header", "*"], notValues: ["not-header"] },
        { key: "source.ip", values: ["10.10.10.10", "192.168.10.0/24"], notValues: ["90.10.10.10"] },
        { key: "remote.ip", values: ["10.10.10.10", "192.168.10.0/24"], notValues: ["90.168.10.0/24"] },
        { key: "source.namespace", values: ["ns", "*"], notValues: ["not-ns"] },
        { key: "source.principal", values: ["principal", "*"], notValues: ["not-principal"] },
        { key: "request.auth.principal", values: ["requestPrincipals", "https://example.com/*"] },
        { key: "request.auth.audiences", values: ["audiences", "*"] },
        { key: "request.auth.presenter", values: ["presenter", "*"] },
        { key: "request.auth.claims[iss]", values: ["iss", "*"] },
        { key: "request.auth.claims[nested1][nested2]", values: ["nested", "*"] },
        { key: "destination.ip", values: ["10.10.10.10", "192.168.10.0/24"] },
        { key: "destination.port", values: ["91", "92"], notValues: ["9001", "9002"] },
        { key: "connection.sni", values: ["exact.com", "*.suffix.com", "prefix.*", "*"] },
        { key: "source.trustDomain", values: ["cluster.local", "cluster-prefix-*", "*"] },
        { key: "source.serviceAccount", values: ["default/productpage", "bookinfo"] },
        { key: "experimental.envoy.filters.a.b[c]", values: ["exact", "prefix-*"] },
      ],
    },
  ],
};

describe("AuthorizationPolicy validation (istiod's ValidateAuthorizationPolicy)", () => {
  it.each<[string, Spec | undefined, Record<string, string>?]>([
    [
      "good",
      {
        selector: httpbin,
        rules: [
          {
            from: [{ source: { principals: ["sa1"] } }, { source: { principals: ["sa2"] } }],
            to: [{ operation: { methods: ["GET"] } }, { operation: { methods: ["POST"] } }],
            when: [
              { key: "source.ip", values: ["1.2.3.4", "5.6.7.0/24"] },
              { key: "request.headers[:authority]", values: ["v1", "v2"] },
            ],
          },
        ],
      },
    ],
    [
      "good serviceAccounts",
      {
        selector: httpbin,
        rules: [
          {
            from: [
              { source: { serviceAccounts: ["ns1/sa1", "ns2/sa2"] } },
              { source: { principals: ["sa2"] } },
            ],
          },
        ],
      },
    ],
    [
      "serviceAccounts split from principals and namespaces (CRD test data)",
      {
        rules: [
          {
            from: [
              { source: { serviceAccounts: ["baz/sa", "sa"] } },
              { source: { principals: ["bar"] } },
              { source: { namespaces: ["bar"] } },
            ],
          },
        ],
      },
    ],
    ["full (CRD test data)", full],
    ["custom-good", custom([{}])],
    ["allow-rules-nil", { action: "ALLOW" }],
    ["no spec at all", undefined],
    ["dry-run-valid-allow", { action: "ALLOW" }, { "istio.io/dry-run": "true" }],
    ["dry-run-valid-deny", { action: "DENY", rules: [{}] }, { "istio.io/dry-run": "false" }],
    ["dry-run with no action (ALLOW)", {}, { "istio.io/dry-run": "1" }],
    ["selector-empty-value", { selector: { matchLabels: { app: "", version: "v1" } } }],
    ["selector-empty-labels", { selector: {} }],
    ["target-ref-good", { action: "DENY", targetRef: gateway, rules: [denyRule] }],
    ["target-refs-good", { action: "DENY", targetRefs: [gateway], rules: [denyRule] }],
    [
      "target-refs-good-service",
      { action: "DENY", targetRefs: [{ group: "", kind: "Service", name: "foo" }], rules: [denyRule] },
    ],
    [
      "a targetRef to a ServiceEntry",
      { targetRef: { group: "networking.istio.io", kind: "ServiceEntry", name: "se" } },
    ],
    [
      "L7DenyWithFrom",
      { action: "DENY", selector: httpbin, ...from({ requestPrincipals: ["example.com/sub-1"] }) },
    ],
    ["L7DenyWithTo", { action: "DENY", selector: httpbin, ...to({ methods: ["GET", "DELETE"] }) }],
    ["AUDIT with rules", { action: "AUDIT", rules: [{ to: [{ operation: { paths: ["/audit"] } }] }] }],
    ["IPv6 blocks and a zero-length prefix", from({ ipBlocks: ["2001:db8::/32", "::1", "0.0.0.0/0"] })],
    ["port 0 and 65535", to({ ports: ["0", "65535"] })],
  ])("accepts %s", (_, spec, annotations) => expect(verdict(policy(spec, annotations))).toBe("valid"));

  it.each<[string, Spec, string, Record<string, string>?]>([
    [
      "serviceAccounts and namespaces",
      { selector: httpbin, ...from({ serviceAccounts: ["ns1/sa1", "ns2/sa2"], namespaces: ["ns"] }) },
      "object.spec.rules[0].from[0].source: cannot set serviceAccounts with namespaces or principals, found at rule 0",
    ],
    [
      "serviceAccounts and principals (CRD test data)",
      from({ serviceAccounts: ["baz/sa"], principals: ["bar"] }),
      "object.spec.rules[0].from[0].source: cannot set serviceAccounts with namespaces or principals, found at rule 0",
    ],
    [
      "custom-empty-provider",
      custom([{}], { name: "" }),
      "object.spec.provider.name: `provider.name` must not be empty",
    ],
    [
      "custom-nil-provider",
      { action: "CUSTOM", rules: [{}] },
      "object.spec.provider.name: `provider.name` must not be empty",
    ],
    [
      "custom without rules",
      { action: "CUSTOM", provider: { name: "ext" } },
      "object.spec.rules: CUSTOM action without `rules` is meaningless as it will never be triggered, add an empty rule `{}` if you want it be triggered for every request",
    ],
    [
      "custom-invalid-rule (namespaces)",
      custom([{ from: [{ source: { namespaces: ["ns"], principals: ["id"] } }] }]),
      "object.spec.rules[0].from[0].source.namespaces: From.Namespaces is currently not supported with CUSTOM action",
    ],
    [
      "custom-invalid-rule (requestPrincipals)",
      custom([{ from: [{ source: { requestPrincipals: ["req"] } }] }]),
      "object.spec.rules[0].from[0].source.requestPrincipals: From.RequestPrincipals is currently not supported with CUSTOM action",
    ],
    [
      "custom-invalid-rule (when source.principal)",
      custom([{ when: [{ key: "source.principal", values: ["p"] }] }]),
      "object.spec.rules[0].when[0].key: source.principal is currently not supported with CUSTOM action",
    ],
    [
      "custom-invalid-rule (when request.auth.claims)",
      custom([{ when: [{ key: "request.auth.claims[a]", values: ["c"] }] }]),
      "object.spec.rules[0].when[0].key: request.auth.claims[a] is currently not supported with CUSTOM action",
    ],
    [
      "provider-wrong-action",
      { action: "ALLOW", provider: { name: "" }, rules: [{}] },
      "object.spec.provider: `provider` must not be with non CUSTOM action, found ALLOW",
    ],
    [
      "a provider with no action",
      { provider: { name: "ext" }, rules: [{}] },
      "object.spec.provider: `provider` must not be with non CUSTOM action, found ALLOW",
    ],
    [
      "deny-rules-nil",
      { action: "DENY" },
      "object.spec.rules: DENY action without `rules` is meaningless as it will never be triggered, add an empty rule `{}` if you want it be triggered for every request",
    ],
    [
      "deny with an empty rules list (proto JSON reads it as none)",
      { action: "DENY", rules: [] },
      "object.spec.rules: DENY action without `rules` is meaningless as it will never be triggered, add an empty rule `{}` if you want it be triggered for every request",
    ],
    [
      "dry-run-invalid-value",
      { action: "ALLOW" },
      'object.metadata.annotations["istio.io/dry-run"]: namespace/name has annotation istio.io/dry-run with invalid value (foo): strconv.ParseBool: parsing "foo": invalid syntax',
      { "istio.io/dry-run": "foo" },
    ],
    [
      "dry-run-invalid-action-custom",
      { action: "CUSTOM" },
      'object.metadata.annotations["istio.io/dry-run"]: the annotation istio.io/dry-run currently only supports action ALLOW/DENY, found action CUSTOM in namespace/name',
      { "istio.io/dry-run": "true" },
    ],
    [
      "dry-run-invalid-action-audit",
      { action: "AUDIT" },
      'object.metadata.annotations["istio.io/dry-run"]: the annotation istio.io/dry-run currently only supports action ALLOW/DENY, found action AUDIT in namespace/name',
      { "istio.io/dry-run": "true" },
    ],
    [
      "selector-empty-key",
      { selector: { matchLabels: { app: "httpbin", "": "v1" } } },
      'object.spec.selector.matchLabels[""]: empty key is not supported in selector: "=v1"',
    ],
    [
      "selector-wildcard-value",
      { selector: { matchLabels: { app: "httpbin-*" } } },
      'object.spec.selector.matchLabels.app: wildcard is not supported in selector: "app=httpbin-*"',
    ],
    [
      "selector-wildcard-key",
      { selector: { matchLabels: { "app-*": "httpbin" } } },
      'object.spec.selector.matchLabels["app-*"]: wildcard is not supported in selector: "app-*=httpbin"',
    ],
    [
      "target-ref-non-empty-namespace",
      { action: "DENY", targetRef: { ...gateway, namespace: "bar" }, rules: [denyRule] },
      "object.spec.targetRef.namespace: targetRef namespace must not be set; cross namespace referencing is not supported",
    ],
    [
      "target-ref-empty-name",
      { action: "DENY", targetRef: { ...gateway, name: "" }, rules: [denyRule] },
      "object.spec.targetRef.name: targetRef name must be set",
    ],
    [
      "target-ref-wrong-group",
      { action: "DENY", targetRef: { ...gateway, group: "wrong-group" }, rules: [denyRule] },
      "object.spec.targetRef: targetRef must be to one of [core/v1/Service networking.istio.io/v1/ServiceEntry gateway.networking.k8s.io/v1/Gateway gateway.networking.k8s.io/v1/GatewayClass] but was wrong-group/Gateway",
    ],
    [
      "target-ref-wrong-kind",
      { action: "DENY", targetRefs: [{ ...gateway, kind: "wrong-kind" }], rules: [denyRule] },
      "object.spec.targetRefs[0]: targetRef must be to one of [core/v1/Service networking.istio.io/v1/ServiceEntry gateway.networking.k8s.io/v1/Gateway gateway.networking.k8s.io/v1/GatewayClass] but was gateway.networking.k8s.io/wrong-kind",
    ],
    [
      "target-ref-and-selector-cannot-both-be-set",
      { action: "DENY", targetRef: gateway, selector: httpbin, rules: [denyRule] },
      "object.spec: only one of targetRefs or workloadSelector can be set",
    ],
    [
      "target-refs-and-selector-cannot-both-be-set",
      { action: "DENY", targetRefs: [gateway], selector: httpbin, rules: [denyRule] },
      "object.spec: only one of targetRefs or workloadSelector can be set",
    ],
    [
      "source-nil",
      { rules: [{ from: [{}] }] },
      "object.spec.rules[0].from[0].source: `from.source` must not be nil, found at rule 0",
    ],
    [
      "source-empty",
      from({}),
      "object.spec.rules[0].from[0].source: `from.source` must not be empty, found at rule 0",
    ],
    [
      "source of empty lists",
      from({ principals: [] }),
      "object.spec.rules[0].from[0].source: `from.source` must not be empty, found at rule 0",
    ],
    [
      "operation-nil",
      { rules: [{ to: [{}] }] },
      "object.spec.rules[0].to[0].operation: `to.operation` must not be nil, found at rule 0",
    ],
    [
      "operation-empty",
      to({}),
      "object.spec.rules[0].to[0].operation: `to.operation` must not be empty, found at rule 0",
    ],
    ["a null rule", { rules: [null] }, "object.spec.rules[0]: `rule` must not be nil, found at rule 0"],
    ...(
      [
        ["principals", "Principals"],
        ["notPrincipals", "NotPrincipals"],
        ["requestPrincipals", "RequestPrincipals"],
        ["notRequestPrincipals", "NotRequestPrincipals"],
        ["namespaces", "Namespaces"],
        ["notNamespaces", "NotNamespaces"],
        ["serviceAccounts", "ServiceAccounts"],
        ["notServiceAccounts", "NotServiceAccounts"],
        ["trustDomains", "TrustDomains"],
      ] as const
    ).map(([field, name]): [string, Spec, string] => [
      `${name}-empty`,
      from({ [field]: ["good", ""] }),
      `object.spec.rules[0].from[0].source.${field}[1]: empty value not allowed, found in ${name}`,
    ]),
    ...(["ipBlocks", "notIpBlocks", "remoteIpBlocks", "notRemoteIpBlocks"] as const).map(
      (field): [string, Spec, string] => [
        `${field}-empty`,
        from({ [field]: ["1.2.3.4", ""] }),
        `object.spec.rules[0].from[0].source.${field}[1]: bad IP address ()`,
      ],
    ),
    ...(
      [
        ["hosts", "Hosts"],
        ["notHosts", "NotHosts"],
        ["methods", "Methods"],
        ["notMethods", "NotMethods"],
        ["paths", "Paths"],
        ["notPaths", "NotPaths"],
      ] as const
    ).map(([field, name]): [string, Spec, string] => [
      `${name}-empty`,
      to({ [field]: ["good", ""] }),
      `object.spec.rules[0].to[0].operation.${field}[1]: empty value not allowed, found in ${name}`,
    ]),
    [
      "Ports-empty",
      to({ ports: ["80", ""] }),
      'object.spec.rules[0].to[0].operation.ports[1]: bad port (): strconv.ParseUint: parsing "": invalid syntax',
    ],
    [
      "value-empty",
      when({ key: "request.headers[:authority]", values: ["v1", ""] }),
      "object.spec.rules[0].when[0].values[1]: invalid `value` for `key` request.headers[:authority]: empty value not allowed, found in request.headers[:authority]",
    ],
    [
      "invalid ip and port in ipBlocks",
      {
        rules: [
          {
            from: [{ source: { ipBlocks: ["1.2.3.4", "ip1"], notIpBlocks: ["5.6.7.8", "ip2"] } }],
            to: [{ operation: { ports: ["80", "port1"], notPorts: ["90", "port2"] } }],
          },
        ],
      },
      "object.spec.rules[0].from[0].source.ipBlocks[1]: bad IP address (ip1)",
    ],
    [
      "invalid ip in remoteIpBlocks",
      from({ remoteIpBlocks: ["1.2.3.4"], notRemoteIpBlocks: ["5.6.7.8", "ip2"] }),
      "object.spec.rules[0].from[0].source.notRemoteIpBlocks[1]: bad IP address (ip2)",
    ],
    [
      "invalid port",
      to({ ports: ["80", "port1"] }),
      'object.spec.rules[0].to[0].operation.ports[1]: bad port (port1): strconv.ParseUint: parsing "port1": invalid syntax',
    ],
    [
      "a port past 65535",
      to({ notPorts: ["65536"] }),
      "object.spec.rules[0].to[0].operation.notPorts[0]: bad port (65536): <nil>",
    ],
    [
      "a CIDR past its family's length",
      from({ ipBlocks: ["10.0.0.0/33"] }),
      'object.spec.rules[0].from[0].source.ipBlocks[0]: bad CIDR range (10.0.0.0/33): netip.ParsePrefix("10.0.0.0/33"): prefix length out of range',
    ],
    [
      "a CIDR with bad bits",
      from({ ipBlocks: ["10.0.0.0/08"] }),
      'object.spec.rules[0].from[0].source.ipBlocks[0]: bad CIDR range (10.0.0.0/08): netip.ParsePrefix("10.0.0.0/08"): bad bits after slash: "08"',
    ],
    [
      "a CIDR with a zone",
      from({ ipBlocks: ["fe80::1%eth0/64"] }),
      'object.spec.rules[0].from[0].source.ipBlocks[0]: bad CIDR range (fe80::1%eth0/64): netip.ParsePrefix("fe80::1%eth0/64"): IPv6 zones cannot be present in a prefix',
    ],
    [
      "a service account with two slashes",
      from({ serviceAccounts: ["a/b/c"] }),
      `object.spec.rules[0].from[0].source.serviceAccounts[0]: expected format 'serviceAccount' or 'namespace/serviceAccount', found "a/b/c" in ServiceAccounts`,
    ],
    [
      "a service account with a wildcard",
      from({ notServiceAccounts: ["ns/*"] }),
      "object.spec.rules[0].from[0].source.notServiceAccounts[0]: wildcard not allowed, found in NotServiceAccounts",
    ],
    [
      "a service account without its namespace",
      from({ serviceAccounts: ["/sa"] }),
      `object.spec.rules[0].from[0].source.serviceAccounts[0]: expected format 'serviceAccount' or 'namespace/serviceAccount', found empty namespace "/sa" in ServiceAccounts`,
    ],
    [
      "17 service accounts",
      from({ serviceAccounts: Array.from({ length: 17 }, (_, i) => `sa${i}`) }),
      "object.spec.rules[0].from[0].source.serviceAccounts: must have at most 16 items, got 17",
    ],
    [
      "a trust domain with a slash",
      from({ trustDomains: ["cluster.local/ns"] }),
      `object.spec.rules[0].from[0].source.trustDomains[0]: trust domain must not contain '/', found in TrustDomains: "cluster.local/ns"`,
    ],
    [
      "a trust domain with a wildcard inside",
      from({ notTrustDomains: ["clu*ster"] }),
      `object.spec.rules[0].from[0].source.notTrustDomains[0]: wildcard is only allowed at the start or end, found in NotTrustDomains: "clu*ster"`,
    ],
    [
      "a path template that is not last",
      to({ paths: ["/{**}/a/{**}"] }),
      "object.spec.rules[0].to[0].operation.paths[0]: invalid or unsupported path {**}/a/{**}, found in Paths. {**} is not the last operator",
    ],
    [
      "a path with a brace beyond a template",
      to({ notPaths: ["/a/{x}"] }),
      "object.spec.rules[0].to[0].operation.notPaths[0]: invalid or unsupported path a/{x}, found in NotPaths. Contains '{' or '}' beyond a supported path template",
    ],
    [
      "a template with a bad literal",
      to({ paths: ["/{*}/a b"] }),
      "object.spec.rules[0].to[0].operation.paths[0]: invalid or unsupported path {*}/a b, found in Paths. Contains segment a b with invalid string literal",
    ],
    [
      "condition-key-missing",
      when({ values: ["v1", "v2"] }),
      "object.spec.rules[0].when[0].key: `key` must not be empty",
    ],
    [
      "condition-key-empty",
      when({ key: "", values: ["v1", "v2"] }),
      "object.spec.rules[0].when[0].key: `key` must not be empty",
    ],
    [
      "condition-value-missing",
      when({ key: "source.principal" }),
      "object.spec.rules[0].when[0]: at least one of `values` or `notValues` must be set for key source.principal",
    ],
    [
      "condition-value-invalid",
      when({ key: "source.ip", values: ["a.b.c.d"] }),
      "object.spec.rules[0].when[0].values[0]: invalid `value` for `key` source.ip: bad IP address (a.b.c.d)",
    ],
    [
      "condition-notValue-invalid",
      when({ key: "source.ip", notValues: ["a.b.c.d"] }),
      "object.spec.rules[0].when[0].notValues[0]: invalid `notValue` for `key` source.ip: bad IP address (a.b.c.d)",
    ],
    [
      "condition-unknown",
      when({ key: "key1", values: ["v1"] }),
      "object.spec.rules[0].when[0].key: invalid `value` for `key` key1: unknown attribute: key1",
    ],
    [
      "a header key without a name",
      when({ key: "request.headers[]", values: ["v"] }),
      "object.spec.rules[0].when[0].key: invalid `value` for `key` request.headers[]: bad key (request.headers[]): should have format a[b]",
    ],
    [
      "destination.namespace",
      when({ key: "destination.namespace", values: ["ns"] }),
      "object.spec.rules[0].when[0].key: invalid `value` for `key` destination.namespace: attribute destination.namespace is replaced by the metadata.namespace",
    ],
    [
      "destination.labels",
      when({ key: "destination.labels[app]", values: ["a"] }),
      "object.spec.rules[0].when[0].key: invalid `value` for `key` destination.labels[app]: attribute destination.labels[app] is replaced by the workload selector",
    ],
    [
      "destination.user",
      when({ key: "destination.user", values: ["u"] }),
      "object.spec.rules[0].when[0].key: invalid `value` for `key` destination.user: deprecated attribute destination.user: only supported in v1alpha1",
    ],
    [
      "a destination.port that is no port",
      when({ key: "destination.port", values: ["80", "http"] }),
      'object.spec.rules[0].when[0].values[1]: invalid `value` for `key` destination.port: bad port (http): strconv.ParseUint: parsing "http": invalid syntax',
    ],
    [
      "a source.serviceAccount with a wildcard",
      when({ key: "source.serviceAccount", values: ["ns/*"] }),
      "object.spec.rules[0].when[0].values[0]: invalid `value` for `key` source.serviceAccount: wildcard not allowed, found in source.serviceAccount",
    ],
    [
      "an unknown action",
      { action: "LOG" },
      'object.spec.action: unsupported value "LOG"; want one of ALLOW, DENY, AUDIT, CUSTOM',
    ],
    ["rules that are no list", { rules: {} }, "object.spec.rules: must be an array, got object"],
    [
      "a principal that is no string",
      from({ principals: [1] }),
      "object.spec.rules[0].from[0].source.principals[0]: must be a string, got number",
    ],
  ])("refuses %s", (_, spec, want, annotations) => expect(verdict(policy(spec, annotations))).toBe(want));

  it("accepts v1beta1, the same spec", () => {
    const obj = { ...policy({ action: "DENY", rules: [{}] }), apiVersion: "security.istio.io/v1beta1" };
    expect(verdict(obj)).toBe("valid");
  });

  const tcpWarning =
    "spec.rules[0]: configured AuthorizationPolicy will deny all traffic to TCP ports under its scope due to the use of only HTTP attributes in a DENY rule; it is recommended to explicitly specify the port";
  it.each<[string, Spec, string[]]>([
    [
      "L7DenyWithFrom",
      { action: "DENY", selector: httpbin, ...from({ requestPrincipals: ["example.com/sub-1"] }) },
      [tcpWarning],
    ],
    [
      "L7DenyWithTo",
      { action: "DENY", selector: httpbin, ...to({ methods: ["GET", "DELETE"] }) },
      [tcpWarning],
    ],
    [
      "L7DenyWithFromAndTo",
      {
        action: "DENY",
        selector: httpbin,
        rules: [{ from: [{ source: { principals: ["temp"] } }], to: [{ operation: { methods: ["GET"] } }] }],
      },
      [tcpWarning],
    ],
    ["L7DenyWithFromAndToWithPort", { action: "DENY", selector: httpbin, rules: [denyRule] }, []],
    ["a DENY of TCP sources only", { action: "DENY", ...from({ ipBlocks: ["10.0.0.0/8"] }) }, []],
    ["an ALLOW of HTTP attributes", { selector: httpbin, ...to({ methods: ["GET"] }) }, []],
    [
      "selector-empty-labels",
      { selector: {} },
      ["spec.selector: workload selector specified without labels"],
    ],
  ])("warns as istiod for %s", (_, spec, want) => {
    expect(verdict(policy(spec))).toBe("valid");
    expect(istioWarnings("AuthorizationPolicy", policy(spec))).toEqual(want);
  });
});
