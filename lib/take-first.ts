/**
 * The first element of an array used as a queue, taken as shift() takes it. V8's shift() of an
 * array's only element leaves the array without storage, so its next push allocates it again: a
 * queue emptied and refilled once per message (a stream's one request waiting, its one response
 * in flight) would allocate per message. pop() takes that last element and keeps the storage.
 */
export function takeFirst<T>(queue: T[]): T | undefined {
  return queue.length === 1 ? queue.pop() : queue.shift();
}
