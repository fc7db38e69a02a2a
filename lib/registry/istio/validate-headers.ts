/**
 * Header names and values in a VirtualService as istiod checks them: match header names
 * (ValidateHTTPHeaderNameOrJwtClaimRoute), the names and values of header operations
 * (ValidateHTTPHeaderWithAuthorityOperationName, ValidateHTTPHeaderOperationName,
 * ValidateHTTPHeaderValue with its port of Envoy's header format parser), CORS header names, and
 * the rule that the authority is rewritten in one place only (validateAuthorityRewrite).
 */
import { child, isObject, typeName } from "../check.ts";
import { has, type P, str } from "./validate-fields.ts";

const tokenSyntax = /^[!#$%&'*+\-.^_`|~A-Za-z0-9]+$/;
const pseudoHeaders = new Set([":method", ":scheme", ":authority", ":path", ":status"]);
const jwtClaimPrefix = "@request.auth.claims";

/** jwt.ToRoutingClaim(...).Match: `@request.auth.claims.a.b` or `@request.auth.claims[a][b]`. */
export function isJwtClaimRoute(name: string): boolean {
  if (!name.toLowerCase().startsWith(jwtClaimPrefix)) return false;
  const rest = name.slice(jwtClaimPrefix.length);
  return (
    (rest.startsWith(".") && rest.length > 1) ||
    (rest.startsWith("[") && rest.endsWith("]") && rest.length > 2)
  );
}

/** ValidateHTTPHeaderNameOrJwtClaimRoute: an RFC 7230 token, a pseudo header, or a JWT claim. */
export function matchHeaderName(name: string, path: string): P {
  if (name === "") return { field: path, message: "header name cannot be empty" };
  if (isJwtClaimRoute(name) || pseudoHeaders.has(name) || tokenSyntax.test(name)) return undefined;
  return { field: path, message: `header name ${name} is not a valid header name` };
}

/** ValidateCORSHTTPHeaderName: `*` or an RFC 7230 token. */
export function corsHeaderName(name: unknown, path: string): P {
  if (typeof name !== "string") return { field: path, message: `must be a string, got ${typeName(name)}` };
  if (name === "") return { field: path, message: "header name cannot be empty" };
  if (name === "*" || tokenSyntax.test(name)) return undefined;
  return { field: path, message: `header name ${name} is not a valid header name` };
}

const isInternal = (k: string) => k.startsWith(":") || k.toLowerCase() === "host";
const isAuthority = (k: string) => k.toLowerCase() === ":authority" || k.toLowerCase() === "host";

/** The name of a header an operation sets on the request (the authority may be set) or removes or sets elsewhere. */
function operationName(name: string, path: string, authorityAllowed: boolean): P {
  if (name === "") return { field: path, message: "header name cannot be empty" };
  if (authorityAllowed) {
    if (isInternal(name) && !isAuthority(name))
      return { field: path, message: `invalid header "${name}": header cannot have ":" prefix` };
    return undefined;
  }
  if (name.toLowerCase() === "host")
    return { field: path, message: `invalid header "${name}": cannot set Host header` };
  if (isInternal(name))
    return { field: path, message: `invalid header "${name}": header cannot have ":" prefix` };
  return undefined;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters Envoy refuses in a header value
const headerValueChars = /^[^\u0000-\u0008\u000A-\u001F\u007F]*$/;

/** ValidateHTTPHeaderValue: no control characters, and `%` only as `%%` or around a `%VARIABLE(...)%`. */
function headerValueProblem(value: string): string | undefined {
  if (!headerValueChars.test(value)) return `header value configuration ${value} is invalid`;
  const why = formatProblem(value);
  return why ? `header value configuration: ${why}` : undefined;
}

type State = "literal" | "name" | "array" | "string" | "inString" | "delimiter" | "argsEnd" | "end";

/** validateHeaderValue, a port of Envoy's header_parser.cc state machine. */
function formatProblem(v: string): string | undefined {
  let state: State = "literal";
  for (let pos = 0; pos < v.length; pos++) {
    const ch = v[pos];
    const hasNext = pos + 1 < v.length;
    switch (state) {
      case "literal":
        if (ch !== "%") break;
        if (!hasNext) return "invalid header configuration. Un-escaped %";
        if (v[pos + 1] === "%") pos++;
        else state = "name";
        break;
      case "name":
        if (ch === "%") state = "literal";
        else if (ch === "(") state = "array";
        break;
      case "array":
        if (ch === "[") state = "string";
        else if (ch !== " ") state = "inString";
        break;
      case "delimiter":
        if (ch === ",") state = "string";
        else if (ch === "]") state = "argsEnd";
        else if (ch !== " ") return "invalid header configuration. Expecting ',', ']', or whitespace";
        break;
      case "string":
        if (ch === '"') state = "inString";
        else if (ch !== " ") return `invalid header configuration. Expecting '"'`;
        break;
      case "inString":
        if (ch === "\\") {
          if (!hasNext) return "invalid header configuration. Un-terminated backslash in JSON string";
          pos++;
        } else if (ch === ")") state = "end";
        else if (ch === '"') state = "delimiter";
        break;
      case "argsEnd":
        if (ch === ")") state = "end";
        else if (ch !== " ")
          return "invalid header configuration. Expecting ')' or whitespace after '{}', but found '{}'";
        break;
      case "end":
        if (ch === "%") state = "literal";
        else if (ch !== " ") return "invalid header configuration. Expecting '%' or whitespace after";
        break;
    }
  }
  return state === "literal"
    ? undefined
    : `invalid header configuration. Un-terminated variable expression '${v}'`;
}

/** A Headers message (`request`/`response`, each `add`, `set`, `remove`), as validateHTTPRoute checks it. */
export function headerOperations(h: unknown, path: string): P {
  if (!isObject(h)) return { field: path, message: `must be an object, got ${typeName(h)}` };
  for (const side of ["request", "response"] as const) {
    if (!has(h, side)) continue;
    const ops = h[side];
    const at = child(path, side);
    if (!isObject(ops)) return { field: at, message: `must be an object, got ${typeName(ops)}` };
    for (const op of ["add", "set"] as const) {
      if (!has(ops, op)) continue;
      const map = ops[op];
      const mapPath = child(at, op);
      if (!isObject(map)) return { field: mapPath, message: `must be an object, got ${typeName(map)}` };
      for (const [name, value] of Object.entries(map)) {
        const field = child(mapPath, name);
        if (typeof value !== "string") return { field, message: `must be a string, got ${typeName(value)}` };
        const p = operationName(name, field, side === "request");
        if (p) return p;
        const why = headerValueProblem(value);
        if (why) return { field, message: why };
      }
    }
    if (has(ops, "remove")) {
      const list = ops.remove;
      const listPath = child(at, "remove");
      if (!Array.isArray(list))
        return { field: listPath, message: `must be an array, got ${typeName(list)}` };
      for (let i = 0; i < list.length; i++) {
        const name = list[i];
        const field = `${listPath}[${i}]`;
        if (typeof name !== "string") return { field, message: `must be a string, got ${typeName(name)}` };
        const p = operationName(name, field, false);
        if (p) return p;
      }
    }
  }
  return undefined;
}

/** validateAuthorityRewrite: the rewrite's authority, and `:authority`/`host` set or added, at most one of them. */
export function authorityRewrite(r: Record<string, unknown>, path: string): P {
  let current = isObject(r.rewrite) ? str(r.rewrite, "authority") : "";
  const request = isObject(r.headers) && isObject(r.headers.request) ? r.headers.request : {};
  for (const op of ["set", "add"] as const) {
    const map = request[op];
    if (!isObject(map)) continue;
    for (const [k, v] of Object.entries(map)) {
      if (!isAuthority(k)) continue;
      if (current !== "")
        return {
          field: child(child(child(child(path, "headers"), "request"), op), k),
          message: `authority header cannot be set multiple times: have "${current}", attempting to set "${String(v)}"`,
        };
      current = String(v);
    }
  }
  return undefined;
}
