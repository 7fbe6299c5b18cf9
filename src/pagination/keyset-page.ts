// A keyset page (README, "Pagination"): the repository reads `limit + 1` rows from the cursor; the
// extra row only says that more follow, and the cursor names the last row shown. One home for
// users, tasks and meetings.

export interface Page<R> {
  page: R[];
  nextCursor: string | null;
}

/** The page of `rows` (read with `limit + 1`), and the cursor after its last row when more follow. */
export async function keysetPage<R>(rows: R[], limit: number, cursorAfter: (last: R) => string | Promise<string>): Promise<Page<R>> {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { page, nextCursor: rows.length > limit && last !== undefined ? await cursorAfter(last) : null };
}
