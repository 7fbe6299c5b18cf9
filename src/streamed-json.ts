// A JSON object written as it is read: a domain describes the document (its members in order, the
// long arrays as async sequences read page by page), the HTTP edge writes it (src/http/router.ts),
// so a document larger than memory never has to be held whole. Nothing here knows HTTP.

/** Each member: its value, or (for an array) an async sequence of its items. */
export type StreamedMembers<T> = {
  [K in keyof T]-?: T[K] | (T[K] extends readonly (infer Item)[] ? AsyncIterable<Item> : never);
};

export class StreamedJson<T extends object> {
  /** Typed by the document it stands for; the type parameter is read by the handlers' result types. */
  declare readonly document?: T;
  constructor(readonly members: StreamedMembers<T>) {}
}

export function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as Record<symbol, unknown>)[Symbol.asyncIterator] === 'function';
}
