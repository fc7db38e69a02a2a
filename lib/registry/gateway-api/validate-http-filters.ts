/**
 * HTTPRoute filters as the standard-channel CRD checks them: redirects and rewrites (their path
 * modifiers' type/field rules), CORS (a `*` stands alone), and the list rules (each kind of filter
 * once; a redirect and a rewrite never together). Messages of CEL rules are the CRD's.
 */
import { boolean, type Check } from "../check.ts";
import { extensionRef, filter, filterList, headerModifier, requestMirror } from "./validate-route-common.ts";
import {
  enumOf,
  get,
  has,
  headerName,
  int,
  list,
  listRules,
  obj,
  portNumber,
  preciseHostname,
  type Rule,
  text,
} from "./validate-schema.ts";

/** HTTPPathModifier: its type names the one field it sets. */
export const pathModifier: Check = obj(
  {
    type: enumOf(["ReplaceFullPath", "ReplacePrefixMatch"]),
    replaceFullPath: text({ max: 1024 }),
    replacePrefixMatch: text({ max: 1024 }),
  },
  ["type"],
  ["ReplaceFullPath", "ReplacePrefixMatch"].flatMap((t): Rule[] => {
    const field = t === "ReplaceFullPath" ? "replaceFullPath" : "replacePrefixMatch";
    return [
      [(p) => p.type !== t || has(p, field), `${field} must be specified when type is set to '${t}'`],
      [(p) => !has(p, field) || p.type === t, `type must be '${t}' when ${field} is set`],
    ];
  }),
);

const requestRedirect: Check = obj({
  scheme: enumOf(["http", "https"]),
  hostname: preciseHostname,
  path: pathModifier,
  port: portNumber,
  statusCode: enumOf([301, 302, 303, 307, 308]),
});

const urlRewrite: Check = obj({ hostname: preciseHostname, path: pathModifier });

/** A list that may hold `*` only alone. */
const starAlone =
  (item: Check, max: number, message: string): Check =>
  (v, path) =>
    list(item, { max, set: true })(v, path) ??
    listRules([[(xs) => !(xs.includes("*") && xs.length > 1), message]])(v, path);

const origin = text({
  min: 1,
  max: 253,
  pattern: /(^\*$)|(^(http(s)?):\/\/(((\*\.)?([a-zA-Z0-9-]+\.)*[a-zA-Z0-9-]+|\*)(:([0-9]{1,5}))?)$)/,
});
const methods = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "*"];

const cors: Check = obj({
  allowOrigins: starAlone(origin, 64, "AllowOrigins cannot contain '*' alongside other origins"),
  allowCredentials: boolean,
  allowMethods: starAlone(enumOf(methods), 9, "AllowMethods cannot contain '*' alongside other methods"),
  allowHeaders: starAlone(headerName, 64, "AllowHeaders cannot contain '*' alongside other methods"),
  exposeHeaders: list(headerName, { max: 64, set: true }),
  maxAge: int(1),
});

const types = [
  "RequestHeaderModifier",
  "ResponseHeaderModifier",
  "RequestMirror",
  "RequestRedirect",
  "URLRewrite",
  "ExtensionRef",
  "CORS",
  // The experimental channel's; its body is accepted unchecked, as other experimental fields.
  "ExternalAuth",
];

/** HTTPRouteFilter. */
export const httpFilter: Check = filter(types, {
  cors: ["CORS", cors],
  requestHeaderModifier: ["RequestHeaderModifier", headerModifier],
  responseHeaderModifier: ["ResponseHeaderModifier", headerModifier],
  requestMirror: ["RequestMirror", requestMirror],
  requestRedirect: ["RequestRedirect", requestRedirect],
  urlRewrite: ["URLRewrite", urlRewrite],
  extensionRef: ["ExtensionRef", extensionRef],
  externalAuth: ["ExternalAuth", obj({})],
});

/** A list of HTTPRouteFilters (a rule's, or a backend's): each kind once, no redirect beside a rewrite. */
export const httpFilters: Check = filterList(
  httpFilter,
  ["CORS", "RequestHeaderModifier", "ResponseHeaderModifier", "RequestRedirect", "URLRewrite"],
  [
    [
      (fs) =>
        !(
          fs.some((f) => get(f, "type") === "RequestRedirect") &&
          fs.some((f) => get(f, "type") === "URLRewrite")
        ),
      "May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both",
    ],
  ],
);
