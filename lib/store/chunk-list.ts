/**
 * An append-only list kept in fixed-size chunks: a push never copies what the list holds. A JS
 * array copies all of itself when it grows, one step of the event loop that lengthens with the
 * list (a staged view of a large batch stages hundreds of thousands of keys).
 */

/** Items per chunk: a chunk is allocated in one small step. */
const chunkBits = 12;
const chunkSize = 1 << chunkBits;

/** An append-only list read by index. */
export interface ChunkList<T> {
  push(item: T): void;
  /** The item at `index` (0 <= index < length). */
  at(index: number): T;
  readonly length: number;
}

/** A fresh, empty list. */
export function createChunkList<T>(): ChunkList<T> {
  const chunks: T[][] = [];
  let length = 0;
  return {
    push(item) {
      if ((length & (chunkSize - 1)) === 0) chunks.push([]);
      (chunks[length >>> chunkBits] as T[]).push(item);
      length++;
    },
    at(index) {
      return (chunks[index >>> chunkBits] as T[])[index & (chunkSize - 1)] as T;
    },
    get length() {
      return length;
    },
  };
}
