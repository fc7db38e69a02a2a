/**
 * A hand-framed HTTP/2 client for attacks a real client library will not make: it opens streams
 * without waiting for the server's SETTINGS_MAX_CONCURRENT_STREAMS (RFC 9113 §4.1 frames,
 * RFC 7541 HPACK literals). Only what the abuse suite needs; loopback only.
 */
import { connect, type Socket } from "node:net";

const FRAME = { data: 0, headers: 1, rstStream: 3, settings: 4, goaway: 7 } as const;
const FLAG = { endHeaders: 0x4, ack: 0x1 } as const;

function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(9);
  h.writeUIntBE(payload.length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([h, payload]);
}

/** An HPACK string literal, not Huffman-coded (lengths below 127 only, which is all we send). */
function str(s: string): Buffer {
  if (s.length >= 127) throw new Error("raw-h2: header too long for this encoder");
  return Buffer.concat([Buffer.from([s.length]), Buffer.from(s, "latin1")]);
}

/** A gRPC request's header block: literals without indexing, new names (RFC 7541 §6.2.2). */
function grpcHeaders(path: string, authority: string): Buffer {
  const fields: [string, string][] = [
    [":method", "POST"],
    [":scheme", "http"],
    [":path", path],
    [":authority", authority],
    ["content-type", "application/grpc"],
    ["te", "trailers"],
  ];
  return Buffer.concat(fields.flatMap(([n, v]) => [Buffer.from([0]), str(n), str(v)]));
}

export interface FloodResult {
  /** Streams the server answered with response HEADERS. */
  answered: number;
  /** Streams the server reset with REFUSED_STREAM (0x7). */
  refused: number;
  /** Streams reset with another code. */
  reset: number;
  /** The GOAWAY error code, if the server closed the connection with one. */
  goaway?: number;
  /** The connection was closed by the server. */
  closed: boolean;
}

/**
 * Opens `streams` gRPC streams to `path` at once on one connection, ignoring the server's stream
 * limit, and reports what the server did within `waitMs`. Sends no request messages: each stream
 * stays open until the server answers or resets it.
 */
export function floodStreams(
  port: number,
  path: string,
  streams: number,
  waitMs = 1500,
): Promise<FloodResult> {
  return new Promise((resolve, reject) => {
    const result: FloodResult = { answered: 0, refused: 0, reset: 0, closed: false };
    const socket: Socket = connect(port, "127.0.0.1");
    let buf = Buffer.alloc(0);
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(finish, waitMs);
    socket.on("error", (e) => (result.closed ? undefined : reject(e)));
    socket.on("close", () => {
      result.closed = true;
      finish();
    });
    socket.on("data", (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 9) {
        const len = buf.readUIntBE(0, 3);
        if (buf.length < 9 + len) break;
        const type = buf[3];
        const payload = buf.subarray(9, 9 + len);
        if (type === FRAME.headers) result.answered++;
        if (type === FRAME.rstStream) {
          if (payload.readUInt32BE(0) === 7) result.refused++;
          else result.reset++;
        }
        if (type === FRAME.goaway) result.goaway = payload.readUInt32BE(4);
        buf = buf.subarray(9 + len);
      }
    });
    socket.on("connect", () => {
      const out: Buffer[] = [Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1")];
      out.push(frame(FRAME.settings, 0, 0, Buffer.alloc(0)));
      const block = grpcHeaders(path, `127.0.0.1:${port}`);
      for (let i = 0; i < streams; i++) out.push(frame(FRAME.headers, FLAG.endHeaders, 1 + 2 * i, block));
      socket.write(Buffer.concat(out));
    });
  });
}
