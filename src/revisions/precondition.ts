// Conditional writes (docs/SAFE-WRITES.md). A resource's revision is a string made of the versions
// kept with the rows its representation is read from (see each repository's `...Revision`); the
// HTTP edge turns a request's If-Match into a Precondition, which the service checks against the
// revision it reads under the lock of its write, so that the check and the write are one step.
import { DomainError } from '../errors.js';

/** Whether the caller's precondition holds for the resource's current revision. */
export type Precondition = (revision: string) => boolean;

export const preconditionFailed = () =>
  new DomainError(
    'precondition_failed',
    'precondition_failed',
    'The resource changed since you read it (If-Match no longer matches its entity tag). Nothing was changed: read it again, then reapply your change.',
  );

/** Throws precondition_failed, changing nothing, when the caller read an older revision. */
export function assertPrecondition(precondition: Precondition | undefined, revision: string): void {
  if (precondition && !precondition(revision)) throw preconditionFailed();
}
