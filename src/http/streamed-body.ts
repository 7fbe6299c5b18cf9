// Writes a StreamedJson (src/streamed-json.ts) as one JSON object, member by member and item by
// item, in the client's key style: each piece goes through the same KeyInflector, along the same
// schema, as a whole body would (it is styled as `{member: [item]}` under the response's schema),
// so the streamed document is byte for byte what res.json of the whole would be. Writing waits
// for the socket to drain, so a slow reader holds back the reading of the next page rather than
// filling the memory; a client that goes away stops the reading. A failure after the first byte
// cannot become a problem: the error handler cuts the connection, and the client holds a document
// that does not parse.
import type { Response } from 'express';
import type { Inflection, KeyInflector } from '../contract/inflection.js';
import type { JsonSchema } from '../contract/spec.js';
import { isAsyncIterable, type StreamedJson } from '../streamed-json.js';
import { sentMethodOf } from './request-context.js';

/**
 * Until the socket takes more or the client is gone. Both listeners are removed as soon as either
 * fires: a race of two `once` would leave the loser registered, one more per wait, for as long as
 * a slow reader keeps the response open.
 */
function drainedOrClosed(res: Response): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve();
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

export async function writeStreamedJson(res: Response, doc: StreamedJson<object>, inflector: KeyInflector, schema: JsonSchema | undefined, style: Inflection): Promise<void> {
  const styled = (key: string, value: unknown): [string, unknown] => {
    const one = inflector.toStyle({ [key]: value }, schema, style) as Record<string, unknown>;
    return Object.entries(one)[0]!;
  };
  const write = async (chunk: string) => {
    if (!res.write(chunk)) await drainedOrClosed(res);
  };
  res.type('application/json');
  // A HEAD has the GET's status and headers and no body: none of the document is read, so asking
  // for the headers costs no walk of the database.
  if (sentMethodOf(res.req) === 'HEAD') {
    res.end();
    return;
  }
  res.write('{');
  let separator = '';
  for (const [key, value] of Object.entries(doc.members)) {
    if (res.destroyed) return;
    if (isAsyncIterable(value)) {
      const [name] = styled(key, []);
      await write(`${separator}${JSON.stringify(name)}:[`);
      let itemSeparator = '';
      for await (const item of value) {
        // Leaving the loop closes the sequence (its `return`), so no further page is read.
        if (res.destroyed) return;
        const [, items] = styled(key, [item]);
        await write(itemSeparator + JSON.stringify((items as unknown[])[0]));
        itemSeparator = ',';
      }
      await write(']');
    } else {
      const [name, inner] = styled(key, value);
      await write(`${separator}${JSON.stringify(name)}:${JSON.stringify(inner)}`);
    }
    separator = ',';
  }
  res.end('}');
}
