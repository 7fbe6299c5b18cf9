// Rows a test writes straight into the database carry the key their unique name is compared by,
// as the service writes it (src/text/normalize.ts; the columns of migration 20261212T1000).
import { uniqueNameKey } from '../../src/text/normalize.js';

export const roleRow = <T extends { name: string }>(row: T) => ({ ...row, name_key: uniqueNameKey(row.name) });
export const apiKeyRow = <T extends { name: string }>(row: T) => ({ ...row, name_key: uniqueNameKey(row.name) });
export const userRow = <T extends { email: string }>(row: T) => ({ ...row, email_key: uniqueNameKey(row.email) });
