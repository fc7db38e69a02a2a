/**
 * Kubernetes name syntaxes (apimachinery pkg/util/validation): each returns why a string is not
 * of the syntax, or undefined when it is. Pure; the messages follow the API server's.
 */

const label1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const label1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const subdomain1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const qualifiedNamePart = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const labelValueSyntax = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** A syntax rule: the problem with a string, or undefined. */
export type NameRule = (s: string) => string | undefined;

/** IsDNS1123Label: namespaces, Service port names, hostnames. At most 63 characters. */
export const dns1123Label: NameRule = (s) =>
  s.length > 63
    ? "must be no more than 63 characters"
    : label1123.test(s)
      ? undefined
      : "must be a lowercase RFC 1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit (e.g. 'my-name')";

/** IsDNS1035Label: Service names. At most 63 characters, starting with a letter, no dots. */
export const dns1035Label: NameRule = (s) =>
  s.length > 63
    ? "must be no more than 63 characters"
    : label1035.test(s)
      ? undefined
      : "must be a lowercase RFC 1035 label: lower-case letters, digits and '-', starting with a letter and ending with a letter or digit, no '.' (e.g. 'my-name')";

/** IsDNS1123Subdomain: most object names, node names, service accounts. At most 253 characters. */
export const dns1123Subdomain: NameRule = (s) =>
  s.length > 253
    ? "must be no more than 253 characters"
    : subdomain1123.test(s)
      ? undefined
      : "must be a lowercase RFC 1123 subdomain: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit (e.g. 'example.com')";

/** IsQualifiedName: label and annotation keys, appProtocol. `[prefix/]name`, prefix a DNS subdomain. */
export const qualifiedName: NameRule = (s) => {
  const parts = s.split("/");
  if (parts.length > 2)
    return "must be a name with an optional DNS subdomain prefix and one '/' (e.g. 'example.com/MyName')";
  const [name, prefix] = parts.length === 2 ? [parts[1] as string, parts[0] as string] : [s, undefined];
  if (prefix !== undefined) {
    if (prefix === "") return "prefix part must be non-empty";
    const p = dns1123Subdomain(prefix);
    if (p) return `prefix part ${p}`;
  }
  if (name === "") return "name part must be non-empty";
  if (name.length > 63) return "name part must be no more than 63 characters";
  return qualifiedNamePart.test(name)
    ? undefined
    : "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', 'my.name', '123-abc')";
};

/** IsValidLabelValue: empty, or at most 63 alphanumerics, '-', '_', '.', alphanumeric at both ends. */
export const labelValue: NameRule = (s) =>
  s.length > 63
    ? "must be no more than 63 characters"
    : labelValueSyntax.test(s)
      ? undefined
      : "a label value must be empty or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** IsValidPortName (IANA_SVC_NAME): container port names and named target ports. */
export const ianaPortName: NameRule = (s) => {
  if (s.length > 15) return "must be no more than 15 characters";
  if (!/^[-a-z0-9]+$/.test(s))
    return "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)";
  if (!/[a-z]/.test(s)) return "must contain at least one letter (a-z)";
  if (s.includes("--")) return "must not contain consecutive hyphens";
  if (s.startsWith("-") || s.endsWith("-")) return "must not begin or end with a hyphen";
  return undefined;
};

/** IsFullyQualifiedDomainName: FQDN slice addresses. A trailing dot is allowed; at least two labels. */
export const fullyQualifiedDomainName: NameRule = (s) => {
  const name = s.endsWith(".") ? s.slice(0, -1) : s;
  const sub = dns1123Subdomain(name);
  if (sub) return sub;
  const labels = name.split(".");
  if (labels.length < 2) return "should be a domain with at least two segments separated by dots";
  for (const l of labels) {
    const p = dns1123Label(l);
    if (p) return `label ${JSON.stringify(l)} ${p}`;
  }
  return undefined;
};
