/**
 * What an operator is told when a server cannot bind: one line naming the variable that set the
 * port (or address) and what to do, instead of Node's stack. Pure: it reads only the error's `code`
 * (EADDRINUSE, EACCES, EADDRNOTAVAIL), which Node's net module sets, so lib/ stays runtime-free.
 */

/** Where a server tried to listen: the variable that chose it, the port (or socket path) and host. */
export interface ListenTarget {
  variable: string;
  port: number | string;
  host?: string;
}

/** The one-line message for `err`, raised by listening on `target`. */
export function listenErrorLine(err: unknown, target: ListenTarget): string {
  const code = (err as { code?: unknown } | null)?.code;
  const { variable, port, host } = target;
  const where = typeof port === "string" ? `socket ${port}` : `port ${port}${host ? ` on ${host}` : ""}`;
  switch (code) {
    case "EADDRINUSE":
      return `${variable}=${port}: ${where} is already in use by another process; stop it or set ${variable} to a free one`;
    case "EACCES":
      return `${variable}=${port}: not permitted to listen on ${where} (ports below 1024 need privileges)`;
    case "EADDRNOTAVAIL":
      return `${variable}=${port}: ${host ?? "the address"} is not an address of this machine (HOST)`;
    default:
      return `${variable}=${port}: cannot listen on ${where}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** An Error carrying listenErrorLine's message, for a start-up that rejects with one line. */
export function listenError(err: unknown, target: ListenTarget): Error {
  return new Error(listenErrorLine(err, target), { cause: err });
}
