/**
 * @types/node 24 types the iterators of its APIs (URLSearchParams, Map, ...) as IteratorObject, which
 * lib esnext.disposable makes Disposable (on Node 24 and in workerd every built-in iterator inherits
 * Iterator.prototype[Symbol.dispose]). @cloudflare/workers-types, which declares the global URL, types
 * the same iterators as plain IterableIterator, so a global `new URL(...)` was no longer assignable to
 * node:url's URL (node:child_process cwd, node:http request, ...). Declaring IterableIterator Disposable
 * too makes the two URL types agree; it states what both runtimes do.
 */
interface IterableIterator<T, TReturn, TNext> extends Disposable {}
