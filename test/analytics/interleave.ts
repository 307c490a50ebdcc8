/* What a concurrent writer can do between an ingest's read and its write, made to happen (ingest's guard). */

/**
 * `d1`, but running `interleave` just before each ingest write batch (the one that sets ingest_guard),
 * after the ingest has read and planned: where a concurrent writer can land.
 */
export function beforeEachWrite(d1: D1Database, interleave: (write: number) => Promise<void>): D1Database {
  let writes = 0;
  let guarded = false;
  return new Proxy(d1, {
    get(target, key) {
      if (key === 'prepare') {
        return (sql: string) => {
          if (sql.includes('ingest_guard')) guarded = true;
          return target.prepare(sql);
        };
      }
      if (key === 'batch') {
        return async (statements: D1PreparedStatement[]) => {
          if (guarded) {
            guarded = false;
            await interleave(++writes);
          }
          return target.batch(statements);
        };
      }
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
