// Generates lib/gen from proto/ and the Envoy v3 protos with buf + protoc-gen-es.
// Runs on install and before start/test; skips work when inputs are unchanged.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "lib/gen");
const stamp = join(out, ".stamp");

/** Envoy and xDS files we generate (with their imports). */
const envoyFiles = [
  "envoy/service/discovery/v3/ads.proto",
  "envoy/service/discovery/v3/discovery.proto",
  "envoy/service/cluster/v3/cds.proto",
  "envoy/service/endpoint/v3/eds.proto",
  "envoy/service/listener/v3/lds.proto",
  "envoy/service/route/v3/rds.proto",
  "envoy/config/cluster/v3/cluster.proto",
  "envoy/config/endpoint/v3/endpoint.proto",
  "envoy/config/listener/v3/listener.proto",
  "envoy/config/route/v3/route.proto",
  "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto",
  "envoy/extensions/filters/http/router/v3/router.proto",
  "envoy/extensions/filters/http/fault/v3/fault.proto",
  // Sidecar listeners name clusters through tcp_proxy; test/support/xds-refs.ts follows them.
  "envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto",
  // Sidecar listeners: listener filters (virtualInbound, protocol sniffing) and the default retry
  // policy's previous-hosts predicate (lib/resources/generators/sidecar/).
  "envoy/extensions/filters/listener/original_dst/v3/original_dst.proto",
  "envoy/extensions/filters/listener/http_inspector/v3/http_inspector.proto",
  "envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto",
  "envoy/extensions/retry/host/previous_hosts/v3/previous_hosts.proto",
  // `edgepilot agent bootstrap --generator envoy` output is checked against these (test/unit/agent).
  "envoy/config/bootstrap/v3/bootstrap.proto",
  "envoy/extensions/upstreams/http/v3/http_protocol_options.proto",
  // Sidecar clusters: ISTIO_MUTUAL / SIMPLE transport sockets and the plaintext match (generators/sidecar).
  "envoy/extensions/transport_sockets/tls/v3/tls.proto",
  "envoy/extensions/transport_sockets/raw_buffer/v3/raw_buffer.proto",
  // AuthorizationPolicy as RBAC filters (lib/resources/authz): HTTP and network RBAC, path templates.
  "envoy/extensions/filters/http/rbac/v3/rbac.proto",
  "envoy/extensions/filters/network/rbac/v3/rbac.proto",
  "envoy/extensions/path/match/uri_template/v3/uri_template_match.proto",
  // The agent's SDS server for Envoy (lib/agent/sds-*.ts): StreamSecrets and DeltaSecrets.
  "envoy/service/secret/v3/sds.proto",
];

function ownProtos(dir = join(root, "proto")) {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return ownProtos(full);
    return name.endsWith(".proto") ? [full.slice(join(root, "proto").length + 1)] : [];
  });
}

const own = ownProtos();
const pgv = join(root, "node_modules/protoc-gen-validate/src/proto/validate.proto");
const hash = createHash("sha256");
for (const f of [join(root, "buf.yaml"), join(root, "buf.gen.yaml"), pgv, join(root, "scripts/gen.mjs")]) {
  hash.update(readFileSync(f));
}
for (const f of own) hash.update(f).update(readFileSync(join(root, "proto", f)));
hash.update(readFileSync(join(root, "node_modules/@grpc/grpc-js-xds/package.json")));
const digest = hash.digest("hex");
if (existsSync(stamp) && readFileSync(stamp, "utf8") === digest) process.exit(0);

mkdirSync(join(root, ".gen/validate/validate"), { recursive: true });
cpSync(pgv, join(root, ".gen/validate/validate/validate.proto"));
rmSync(out, { recursive: true, force: true });
const bin = join(root, "node_modules/.bin");
const envoyDir = "node_modules/@grpc/grpc-js-xds/deps/envoy-api";
const paths = [...envoyFiles.map((f) => `${envoyDir}/${f}`), ...own.map((f) => `proto/${f}`)].flatMap((p) => [
  "--path",
  p,
]);
execFileSync(join(bin, "buf"), ["generate", ...paths], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
});
writeFileSync(stamp, digest);
console.log(`gen: lib/gen generated (${envoyFiles.length} Envoy roots, ${own.length} own protos)`);
