/**
 * The `meshNetworks` key of the `istio` ConfigMap (or MESH_NETWORKS_FILE) ▶ MeshNetworksModel, as
 * istiod's ParseMeshNetworks reads it (unknown keys ignored, two members of one oneof refused) and
 * ValidateMeshNetworks checks it: network names, localities and an entry or gateway that sets
 * neither member are accepted as istiod accepts them (such an entry or gateway contributes
 * nothing). The first problem wins and names its field path.
 */
import { child, isObject, type Problem, quote, typeName } from "../check.ts";
import { fqdnProblem, goIpFamily, ipSubnetProblem, isDns1123Label } from "../istio/istio-names.ts";
import type {
  MeshNetwork,
  MeshNetworkGateway,
  MeshNetworksModel,
  NetworkEndpoints,
} from "./mesh-networks.ts";
import { parseYamlMapping } from "./yaml-document.ts";

export type MeshNetworksResult = { ok: true; value: MeshNetworksModel } | { ok: false; problem: Problem };

/** Parses and validates a `meshNetworks` YAML document. */
export function parseMeshNetworks(text: string): MeshNetworksResult {
  const doc = parseYamlMapping(text);
  if (!doc.ok) return doc;
  return readMeshNetworks(doc.value);
}

/** parseMeshNetworks' work on an already decoded mapping. */
export function readMeshNetworks(doc: Record<string, unknown>): MeshNetworksResult {
  const networks: Record<string, MeshNetwork> = {};
  const raw = doc.networks;
  if (raw === undefined || raw === null) return { ok: true, value: { networks } };
  if (!isObject(raw)) return fail("networks", `must be a mapping of network names, got ${typeName(raw)}`);
  for (const name of Object.keys(raw).sort()) {
    const path = child("networks", name);
    const r = network(raw[name], path);
    if ("problem" in r) return { ok: false, problem: r.problem };
    networks[name] = r;
  }
  return { ok: true, value: { networks } };
}

function fail(field: string, message: string): { ok: false; problem: Problem } {
  return { ok: false, problem: { field, message } };
}

function network(v: unknown, path: string): MeshNetwork | { problem: Problem } {
  if (v === null || v === undefined) return { endpoints: [], gateways: [] };
  if (!isObject(v)) return { problem: { field: path, message: `must be an object, got ${typeName(v)}` } };
  const endpoints: NetworkEndpoints[] = [];
  const gateways: MeshNetworkGateway[] = [];
  const eps = items(v.endpoints, `${path}.endpoints`);
  if ("problem" in eps) return eps;
  for (let i = 0; i < eps.length; i++) {
    const r = endpointsEntry(eps[i], `${path}.endpoints[${i}]`);
    if (r && "problem" in r) return r;
    if (r) endpoints.push(r);
  }
  const gws = items(v.gateways, `${path}.gateways`);
  if ("problem" in gws) return gws;
  for (let i = 0; i < gws.length; i++) {
    const r = gateway(gws[i], `${path}.gateways[${i}]`);
    if (r && "problem" in r) return r;
    if (r) gateways.push(r);
  }
  return { endpoints, gateways };
}

function items(v: unknown, path: string): unknown[] | { problem: Problem } {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : { problem: { field: path, message: `must be a list, got ${typeName(v)}` } };
}

/** A string field of an object, or undefined when unset (protobuf JSON: absent or null). */
function stringField(o: Record<string, unknown>, name: string, path: string): string | undefined | Problem {
  const v = o[name];
  if (v === undefined || v === null) return undefined;
  return typeof v === "string"
    ? v
    : { field: `${path}.${name}`, message: `must be a string, got ${typeName(v)}` };
}

/** One endpoints entry; undefined when it sets neither member (istiod skips it). */
function endpointsEntry(v: unknown, path: string): NetworkEndpoints | undefined | { problem: Problem } {
  if (!isObject(v)) return { problem: { field: path, message: `must be an object, got ${typeName(v)}` } };
  const cidr = stringField(v, "fromCidr", path);
  if (typeof cidr === "object") return { problem: cidr };
  const registry = stringField(v, "fromRegistry", path);
  if (typeof registry === "object") return { problem: registry };
  if (cidr !== undefined && registry !== undefined)
    return { problem: { field: path, message: "only one of fromCidr or fromRegistry may be set" } };
  if (cidr !== undefined) {
    if (ipSubnetProblem(cidr))
      return { problem: { field: `${path}.fromCidr`, message: `invalid CIDR ${quote(cidr)}` } };
    return { fromCidr: cidr };
  }
  if (registry !== undefined) {
    // A registry is a cluster id: istiod checks it as a DNS-1123 label of either case ("Kubernetes").
    if (!isDns1123Label(registry))
      return {
        problem: { field: `${path}.fromRegistry`, message: `invalid registry name ${quote(registry)}` },
      };
    return { fromRegistry: registry };
  }
  return undefined;
}

/** One gateway; undefined when it names neither a service nor an address (its port still checked, as istiod). */
function gateway(v: unknown, path: string): MeshNetworkGateway | undefined | { problem: Problem } {
  if (!isObject(v)) return { problem: { field: path, message: `must be an object, got ${typeName(v)}` } };
  const service = stringField(v, "registryServiceName", path);
  if (typeof service === "object") return { problem: service };
  const address = stringField(v, "address", path);
  if (typeof address === "object") return { problem: address };
  if (service !== undefined && address !== undefined)
    return { problem: { field: path, message: "only one of registryServiceName or address may be set" } };
  const out: MeshNetworkGateway = { port: 0 };
  if (service !== undefined) {
    const why = fqdnProblem(service);
    if (why) return { problem: { field: `${path}.registryServiceName`, message: why } };
    out.registryServiceName = service;
  }
  if (address !== undefined) {
    // RESOLVE_HOSTNAME_GATEWAYS is on by default in istiod: a DNS name is accepted beside an IP.
    if (!goIpFamily(address) && fqdnProblem(address))
      return {
        problem: {
          field: `${path}.address`,
          message: `${quote(address)} is not a valid IP address or DNS name`,
        },
      };
    out.address = address;
  }
  const port = portValue(v.port);
  if (port === undefined)
    return {
      problem: {
        field: `${path}.port`,
        message:
          v.port === undefined || v.port === null
            ? "is required"
            : `port number ${quote(v.port)} must be in the range 1..65535`,
      },
    };
  out.port = port;
  if (service === undefined && address === undefined) return undefined;
  const locality = stringField(v, "locality", path);
  if (typeof locality === "object") return { problem: locality };
  if (locality !== undefined && locality !== "") out.locality = locality;
  return out;
}

/** A uint32 port 1-65535; protobuf JSON also takes a number in a string. */
function portValue(v: unknown): number | undefined {
  const n = typeof v === "string" && /^[0-9]+$/.test(v) ? Number(v) : v;
  return Number.isInteger(n) && (n as number) >= 1 && (n as number) <= 65535 ? (n as number) : undefined;
}
