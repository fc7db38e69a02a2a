/**
 * The request side of a gRPC stream served straight on node:http2: splits the length-prefixed
 * messages out of DATA chunks however they were cut (one message over several chunks, several
 * in one), and hands them to ONE consumer one at a time, pull-based: while a message waits for its
 * consumer (none is waiting for it) the transport is paused (HTTP/2 flow control then holds the client back), and a message
 * is decompressed and parsed only when it is asked for. Errors are connect's, with connect's codes
 * and messages (a message over readMaxBytes ▶ ResourceExhausted from its 5-byte prefix, before its
 * body is read; a truncated one ▶ InvalidArgument; a compressed flag without an encoding ▶ Internal;
 * bytes that do not parse ▶ Internal "parse binary").
 */
import { type DescMessage, fromBinary, type MessageShape, mergeFromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type Compression,
  compressedFlag,
  type EnvelopedMessage,
  envelopeDecompress,
} from "@connectrpc/connect/protocol";
import { takeFirst } from "../../lib/take-first.ts";

/** Splits enveloped messages out of a byte stream; the 5-byte prefix is gRPC's (flags, big-endian length). */
export interface EnvelopeSplitter {
  /**
   * Appends the messages `chunk` completes to `into` (returned), in order; throws ResourceExhausted at
   * a prefix declaring more than readMaxBytes, the messages before it already in `into`.
   */
  decode(chunk: Uint8Array, into?: EnvelopedMessage[]): EnvelopedMessage[];
  /** Bytes held of a message not yet complete (0 between messages). */
  readonly pending: number;
}

const prefixBytes = 5;

/** Creates a splitter refusing messages over `readMaxBytes` (connect's message and code). */
export function createEnvelopeSplitter(readMaxBytes: number): EnvelopeSplitter {
  // The bytes of the current message (or prefix) so far, copied only when it spans chunks; `at`
  // bytes of the first chunk are taken already (an offset, not a view per message).
  let held: Uint8Array[] = [];
  let at = 0;
  let heldBytes = 0; // bytes held past `at`
  let want = -1; // the body length of the current message, once its prefix is known
  let flags = 0;
  /** Drops `n` taken bytes of the first chunk (it holds them). */
  const advance = (first: Uint8Array, n: number) => {
    at += n;
    heldBytes -= n;
    if (at === first.length) {
      held.shift();
      at = 0;
    }
  };
  /** The first chunk, holding at least `n` bytes past `at` (the held chunks joined when they must be). */
  const firstWith = (n: number): Uint8Array => {
    const first = held[0] as Uint8Array;
    if (first.length - at >= n) return first;
    const joined = concat(held, at, heldBytes);
    held = [joined];
    at = 0;
    return joined;
  };
  return {
    decode(chunk, out = []) {
      // The usual chunk between messages holds exactly one whole message (an ACK's DATA frame):
      // taken as it is, nothing held, no join.
      if (want < 0 && heldBytes === 0 && chunk.length >= prefixBytes) {
        const size = lengthAt(chunk, 0);
        if (size === chunk.length - prefixBytes && size <= readMaxBytes) {
          out.push({ flags: chunk[0] as number, data: size === 0 ? empty : chunk.subarray(prefixBytes) });
          return out;
        }
      }
      if (chunk.length > 0) {
        held.push(chunk);
        heldBytes += chunk.length;
      }
      for (;;) {
        if (want < 0) {
          if (heldBytes < prefixBytes) break;
          const p = firstWith(prefixBytes);
          flags = p[at] as number;
          want = lengthAt(p, at);
          advance(p, prefixBytes);
          if (want > readMaxBytes) {
            throw new ConnectError(
              `message size ${want} is larger than configured readMaxBytes ${readMaxBytes}`,
              Code.ResourceExhausted,
            );
          }
        }
        if (heldBytes < want) break;
        const body = want === 0 ? empty : firstWith(want);
        const data = want === 0 ? empty : body.subarray(at, at + want);
        if (want > 0) advance(body, want);
        out.push({ flags, data });
        want = -1;
      }
      return out;
    },
    get pending() {
      return heldBytes + (want >= 0 ? prefixBytes : 0);
    },
  };
}

/** The body length in the prefix at `at` of `p`: big-endian uint32 (multiplied, not shifted: a shift would make it signed). */
function lengthAt(p: Uint8Array, at: number): number {
  return (
    (p[at + 1] as number) * 0x1000000 +
    (((p[at + 2] as number) << 16) | ((p[at + 3] as number) << 8) | (p[at + 4] as number))
  );
}

/** The bytes of `parts` from offset `from` of the first, `length` of them, in one array. */
function concat(parts: Uint8Array[], from: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  let to = 0;
  for (const [i, p] of parts.entries()) {
    const part = i === 0 ? p.subarray(from) : p;
    out.set(part, to);
    to += part.length;
  }
  return out;
}

const empty = new Uint8Array(0);

export interface MessageReaderOptions<Desc extends DescMessage> {
  schema: Desc;
  /**
   * A new zero message of `schema` (create()'s, made cheaper: lib/xds/zero-requests.ts): each message
   * is parsed into one (mergeFromBinary of a zero message is fromBinary). Default: fromBinary.
   */
  zero?: () => MessageShape<Desc>;
  /**
   * The message `data` encodes, when it is recognised without parsing (lib/xds/ack-bytes.ts: a
   * plain Delta ACK); undefined parses it. Called once per message, in order, before its check.
   */
  recognise?: (data: Uint8Array) => MessageShape<Desc> | undefined;
  readMaxBytes: number;
  /** The request's grpc-encoding (connect's compressionNegotiate), or null for identity. */
  compression: Compression | null;
  /** Raised at the first read (connect raises its header errors there too): a bad encoding or timeout. */
  before?: ConnectError | undefined;
  /** Runs on each parsed message in order, `first` for the stream's first; a throw ends the reads with it. */
  check?: (message: MessageShape<Desc>, first: boolean) => void;
  /**
   * Stop / restart the transport's reads (flow control). Called only on a change: pause when a
   * message would wait with no consumer waiting for it, resume when none is left.
   */
  pause(): void;
  resume(): void;
  /** The transport is paused already when the reader is made (the first read resumes it). */
  paused?: boolean;
}

/**
 * The consumer's side is an AsyncIterable (runAdsStream's), which may also take messages at once
 * (offerTo, lib/xds/ads-stream.ts OfferingRequests); the transport pushes into the rest.
 */
export interface MessageReader<T> extends AsyncIterable<T> {
  /** A DATA chunk from the client. */
  push(chunk: Uint8Array): void;
  /** The client half-closed its side. */
  end(): void;
  /** The transport failed: the next read throws `error`. */
  fail(error: unknown): void;
  /**
   * While the consumer waits for a message, each plain (uncompressed) message that arrives is
   * parsed and checked at once and offered to `take`, in order: taken (true), it is done with and
   * the consumer keeps waiting, with no promise settled for it; declined (false), it is the
   * consumer's next read, and the messages after it wait their turn as ever.
   */
  offerTo(take: (message: T) => boolean): void;
}

/** Creates a reader for one stream; only one `for await` may consume it. */
export function createMessageReader<Desc extends DescMessage>(
  options: MessageReaderOptions<Desc>,
): MessageReader<MessageShape<Desc>> {
  type T = MessageShape<Desc>;
  const splitter = createEnvelopeSplitter(options.readMaxBytes);
  const { zero, recognise } = options;
  const ready: EnvelopedMessage[] = [];
  // A message parsed for an offer and declined: the consumer's next read, before `ready`.
  let declined: { message: T } | undefined;
  let take: ((message: T) => boolean) | undefined;
  let ended = false;
  let failure: unknown;
  let done = false;
  let first = true;
  let wake: (() => void) | undefined;
  let paused = options.paused === true;
  const pause = () => {
    if (paused) return;
    paused = true;
    options.pause();
  };
  const resume = () => {
    if (!paused) return;
    paused = false;
    options.resume();
  };
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  /** Parses and checks one plain (uncompressed) message: no promise on the usual path. */
  const parse = (data: Uint8Array): T => {
    let message = recognise?.(data);
    if (message === undefined)
      try {
        message = zero ? mergeFromBinary(options.schema, zero(), data) : fromBinary(options.schema, data);
      } catch (e) {
        throw new ConnectError(`parse binary: ${e instanceof Error ? e.message : String(e)}`, Code.Internal);
      }
    options.check?.(message, first);
    first = false;
    return message;
  };
  const open = (env: EnvelopedMessage): T | Promise<T> =>
    (env.flags & compressedFlag) === compressedFlag
      ? envelopeDecompress(env, options.compression, options.readMaxBytes).then((plain) => parse(plain.data))
      : parse(env.data);
  /**
   * Offers the plain messages at the head of `ready` to `consumer` until one is declined (it is the
   * next read) or compressed (read as ever); a message that does not parse or pass its check
   * makes the next read throw (the messages after it are never read).
   */
  const offer = (consumer: (message: T) => boolean) => {
    while (declined === undefined && ready.length > 0) {
      const env = ready[0] as EnvelopedMessage;
      if ((env.flags & compressedFlag) === compressedFlag) return;
      takeFirst(ready);
      let message: T;
      try {
        message = parse(env.data);
      } catch (e) {
        ready.length = 0;
        failure = e;
        return;
      }
      if (!consumer(message)) declined = { message };
    }
  };
  const next = async (): Promise<IteratorResult<T>> => {
    if (done) return { done: true, value: undefined };
    try {
      if (options.before) throw options.before;
      for (;;) {
        if (declined) {
          const { message } = declined;
          declined = undefined;
          if (ready.length === 0 && !ended && failure === undefined) resume();
          return { done: false, value: message };
        }
        const env = takeFirst(ready);
        if (env) {
          if (ready.length === 0 && !ended && failure === undefined) resume();
          return { done: false, value: await open(env) };
        }
        if (failure !== undefined) throw failure;
        if (ended) {
          if (splitter.pending > 0)
            throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
          done = true;
          return { done: true, value: undefined };
        }
        resume();
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    } catch (e) {
      done = true;
      pause();
      throw e;
    }
  };
  return {
    push(chunk) {
      if (ended || failure !== undefined) return;
      try {
        splitter.decode(chunk, ready);
      } catch (e) {
        // Messages before the refused one are still served; the error comes after them.
        failure = e;
      }
      if (take && wake && failure === undefined) offer(take);
      const waiting = ready.length + (declined ? 1 : 0);
      // Nothing left for the waiting consumer: every message was taken at once; it keeps waiting.
      if (waiting === 0 && failure === undefined) return;
      // A message handed straight to a waiting consumer waits for nobody: the transport keeps
      // flowing (no pause/resume round per message); one more, or one nobody waits for, pauses it.
      if (waiting > (wake ? 1 : 0) || failure !== undefined) pause();
      notify();
    },
    end() {
      ended = true;
      notify();
    },
    fail(error) {
      if (failure === undefined) failure = error;
      notify();
    },
    offerTo(consumer) {
      take = consumer;
    },
    [Symbol.asyncIterator]() {
      return {
        next,
        async return() {
          done = true;
          pause();
          return { done: true, value: undefined };
        },
      };
    },
  };
}
