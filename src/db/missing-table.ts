import { DomainError } from '../errors';

/**
 * A D1 error that means the database was never migrated (or not to this version): SQLite's "no such
 * table". D1 wraps it (`D1_ERROR: no such table: tokens: SQLITE_ERROR`, the original in `cause`), so the
 * whole cause chain is read. Plain `npx wrangler dev` on a fresh clone meets it first: nothing applies
 * migrations there (`npm run dev` does), and the answer should say so instead of a bare 500.
 */
export function missingTable(err: unknown): string | undefined {
  for (let at = err, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++) {
    const match = /no such table: ([\w.]+)/.exec(at.message);
    if (match) return match[1];
  }
  return undefined;
}

/** The error for a database without its tables (503), naming the table and the commands that migrate it; else undefined. */
export function notMigrated(err: unknown): DomainError | undefined {
  const table = missingTable(err);
  if (table === undefined) return undefined;
  return new DomainError(
    'unavailable',
    `The database is not migrated (it has no table ${table}), so nothing can be read or stored yet. Apply the migrations: ` +
      'locally `npm run dev` does it (or `npx wrangler d1 migrations apply DB --local`), deployed `npm run deploy` ' +
      '(or `npx wrangler d1 migrations apply DB --remote`).',
  );
}
