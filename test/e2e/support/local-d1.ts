/**
 * A local D1 database as `wrangler dev` and `wrangler d1 … --local` keep it (under
 * `<persist-to>/v3/d1`, keyed by the binding's database id), opened in one Miniflare for a test to
 * write or read it independently of the code under test. Disposed before returning, so wrangler can
 * open the file again.
 */
import path from 'node:path';
import { Miniflare } from 'miniflare';

export async function withLocalD1<T>(persistTo: string, id: string, use: (db: D1Database) => Promise<T>): Promise<T> {
  const mf = new Miniflare({
    modules: true,
    script: 'export default {}',
    d1Databases: { DB: id },
    d1Persist: path.join(persistTo, 'v3', 'd1'),
  });
  try {
    return await use(await mf.getD1Database('DB'));
  } finally {
    await mf.dispose();
  }
}
