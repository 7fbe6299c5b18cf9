// The shape of the ids this service issues (PostgreSQL's gen_random_uuid, printed in lower case).
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A resource's id as the database keeps it, from the text of a path or a body: UUIDs are
 * case-insensitive on input and lower case on output (RFC 9562, section 4), so `GET /tasks/{ID IN
 * CAPITALS}` finds the task. Undefined when the text cannot be an id (then nothing is looked up
 * and the answer is the resource's 404, as for an unknown id).
 */
export function resourceId(text: string): string | undefined {
  const id = text.toLowerCase();
  return UUID.test(id) ? id : undefined;
}

/** resourceId, or the resource's 404 (`notFound`) when the text cannot be an id. */
export function resourceIdOr(text: string, notFound: () => Error): string {
  const id = resourceId(text);
  if (id === undefined) throw notFound();
  return id;
}
