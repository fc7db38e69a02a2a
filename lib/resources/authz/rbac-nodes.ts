/**
 * Constructors of Envoy RBAC permissions and principals (envoy.config.rbac.v3), one per oneof case
 * the authorization builder writes, as istiod's authz/model permission.go and principal.go. Pure.
 */
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import type { CidrRange } from "../../gen/envoy/config/core/v3/address_pb.ts";
import { TypedExtensionConfigSchema } from "../../gen/envoy/config/core/v3/extension_pb.ts";
import {
  type Permission,
  Permission_SetSchema,
  PermissionSchema,
  type Policy,
  PolicySchema,
  type Principal,
  Principal_AuthenticatedSchema,
  Principal_SetSchema,
  PrincipalSchema,
} from "../../gen/envoy/config/rbac/v3/rbac_pb.ts";
import type { HeaderMatcher } from "../../gen/envoy/config/route/v3/route_components_pb.ts";
import { UriTemplateMatchConfigSchema } from "../../gen/envoy/extensions/path/match/uri_template/v3/uri_template_match_pb.ts";
import type { MetadataMatcher } from "../../gen/envoy/type/matcher/v3/metadata_pb.ts";
import type { PathMatcher } from "../../gen/envoy/type/matcher/v3/path_pb.ts";
import type { StringMatcher } from "../../gen/envoy/type/matcher/v3/string_pb.ts";

type PermissionRule = Permission["rule"];
type PrincipalId = Principal["identifier"];

const permission = (rule: PermissionRule): Permission => create(PermissionSchema, { rule });
const principal = (identifier: PrincipalId): Principal => create(PrincipalSchema, { identifier });

/** A permission matching every request. */
export const permissionAny = (): Permission => permission({ case: "any", value: true });
/** A permission matching when every one of `rules` does. */
export const permissionAnd = (rules: Permission[]): Permission =>
  permission({ case: "andRules", value: create(Permission_SetSchema, { rules }) });
/** A permission matching when any one of `rules` does. */
export const permissionOr = (rules: Permission[]): Permission =>
  permission({ case: "orRules", value: create(Permission_SetSchema, { rules }) });
/** A permission matching when `rule` does not. */
export const permissionNot = (rule: Permission): Permission => permission({ case: "notRule", value: rule });
/** A permission on the connection's destination address. */
export const permissionDestinationIp = (cidr: CidrRange): Permission =>
  permission({ case: "destinationIp", value: cidr });
/** A permission on the connection's destination port. */
export const permissionDestinationPort = (port: number): Permission =>
  permission({ case: "destinationPort", value: port });
/** A permission on the TLS SNI the client asked for. */
export const permissionRequestedServerName = (m: StringMatcher): Permission =>
  permission({ case: "requestedServerName", value: m });
/** A permission on dynamic metadata. */
export const permissionMetadata = (m: MetadataMatcher): Permission =>
  permission({ case: "metadata", value: m });
/** A permission on a request header (`:method`, `:authority` included). */
export const permissionHeader = (m: HeaderMatcher): Permission => permission({ case: "header", value: m });
/** A permission on the request path (query and fragment excluded). */
export const permissionPath = (m: PathMatcher): Permission => permission({ case: "urlPath", value: m });
/** A permission on the path through Envoy's uri_template extension (istiod names it `uri-template`). */
export const permissionPathTemplate = (pathTemplate: string): Permission =>
  permission({
    case: "uriTemplate",
    value: create(TypedExtensionConfigSchema, {
      name: "uri-template",
      typedConfig: anyPack(
        UriTemplateMatchConfigSchema,
        create(UriTemplateMatchConfigSchema, { pathTemplate }),
      ),
    }),
  });

/** A principal matching every peer. */
export const principalAny = (): Principal => principal({ case: "any", value: true });
/** A principal matching when every one of `ids` does. */
export const principalAnd = (ids: Principal[]): Principal =>
  principal({ case: "andIds", value: create(Principal_SetSchema, { ids }) });
/** A principal matching when any one of `ids` does. */
export const principalOr = (ids: Principal[]): Principal =>
  principal({ case: "orIds", value: create(Principal_SetSchema, { ids }) });
/** A principal matching when `id` does not. */
export const principalNot = (id: Principal): Principal => principal({ case: "notId", value: id });
/** A principal on the peer certificate's identity (URI SAN, else DNS SAN, else subject). */
export const principalAuthenticated = (m: StringMatcher): Principal =>
  principal({ case: "authenticated", value: create(Principal_AuthenticatedSchema, { principalName: m }) });
/** A principal on the downstream connection's peer address. */
export const principalDirectRemoteIp = (cidr: CidrRange): Principal =>
  principal({ case: "directRemoteIp", value: cidr });
/** A principal on the original client address (X-Forwarded-For or PROXY protocol). */
export const principalRemoteIp = (cidr: CidrRange): Principal => principal({ case: "remoteIp", value: cidr });
/** A principal on dynamic metadata (verified JWT claims). */
export const principalMetadata = (m: MetadataMatcher): Principal => principal({ case: "metadata", value: m });
/** A principal on a request header. */
export const principalHeader = (m: HeaderMatcher): Principal => principal({ case: "header", value: m });

/** istiod's rbacPolicyMatchNever: the policy an ALLOW or DENY policy without rules contributes. */
export const policyMatchNever = (): Policy =>
  create(PolicySchema, {
    permissions: [permissionNot(permissionAny())],
    principals: [principalNot(principalAny())],
  });
