// A position in a walk read in keyset order by (time, id): the time of the last row read, as
// isoMicros prints it (a millisecond would skip or repeat rows), and its id. Unlike a cursor it
// never leaves the service, so it is not signed.
export interface Position {
  at: string;
  id: string;
}
