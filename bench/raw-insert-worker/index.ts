/**
 * POST {"rows": [[metric, emit, value, dim_0 … dim_13], …]} → inserts every row into `obs` in one
 * D1 batch (a transaction) and answers {"rows": n}. The client derives the rows; no validation,
 * no dedupe, no rollups: the floor of what storing raw observations costs on this path.
 */
interface RawEnv {
  DB: D1Database;
}

const DIMENSIONS = [
  'conversationId',
  'originatingDirection',
  'divisionId',
  'purpose',
  'participantName',
  'userId',
  'mediaType',
  'direction',
  'ani',
  'dnis',
  'sessionId',
  'queueId',
  'wrapUpCode',
  'disconnectType',
];
const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS obs (metric TEXT NOT NULL, emit INTEGER NOT NULL, value INTEGER NOT NULL, ${DIMENSIONS.map((d) => `${d} TEXT`).join(', ')})`,
  'CREATE INDEX IF NOT EXISTS obs_emit ON obs (emit)',
];
/** D1 caps a bound string at 2 MB. */
const MAX_PARAM_CHARS = 900_000;
let schemaReady: Promise<unknown> | undefined;
const INSERT = `INSERT INTO obs SELECT value->>0, value->>1, value->>2, ${DIMENSIONS.map((_, i) => `value->>${3 + i}`).join(', ')} FROM json_each(?1)`;

export default {
  async fetch(request: Request, env: RawEnv): Promise<Response> {
    if (request.method !== 'POST') return new Response('POST {"rows": [...]}', { status: 405 });
    schemaReady ??= env.DB.batch(SCHEMA.map((sql) => env.DB.prepare(sql)));
    await schemaReady;
    const { rows } = await request.json<{ rows: unknown[] }>();
    const statements: D1PreparedStatement[] = [];
    let parts: string[] = [];
    let size = 2;
    const push = () => {
      if (parts.length > 0) statements.push(env.DB.prepare(INSERT).bind(`[${parts.join(',')}]`));
      parts = [];
      size = 2;
    };
    for (const row of rows) {
      const text = JSON.stringify(row);
      if (size + text.length + 1 > MAX_PARAM_CHARS) push();
      parts.push(text);
      size += text.length + 1;
    }
    push();
    if (statements.length > 0) await env.DB.batch(statements);
    return Response.json({ rows: rows.length });
  },
};
