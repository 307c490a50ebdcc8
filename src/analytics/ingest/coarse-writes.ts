import { COMPACTIONS, compactedKey, type Compaction } from '../rollups';

/*
 * Which coarse rollup rows an ingest batch builds (rollups.ts Compaction). A coarse resolution takes
 * upserts only before its watermark; its upsert drops the rows past it (observations-sql.ts writtenSql).
 * Built and then dropped, those rows were a fifth of a batch's JavaScript and SQL for live data, which
 * lies past the watermarks. So the batch reads the watermarks with the rows it will change, builds only
 * the coarse rows before them, and its guard (observations-sql.ts GUARD_SQL ?4) fails it if a concurrent
 * compaction moved a watermark past a row it left out: that row would now be due, and the batch is
 * planned again. A watermark only moves forward; one that moved back needs nothing (the upsert drops
 * what is past it).
 */

/** `SELECT key, value` of every watermark (their keys share the prefix `compacted:`). */
export const WATERMARKS_SQL = `SELECT key, value FROM meta WHERE key >= 'compacted:' AND key < 'compacted;'`;

/** Of one table at one resolution, whether the row of a slot (in widths of the resolution) is built. */
export type SlotFilter = (slot: number) => boolean;
/** A table's filters by resolution; undefined: every row of that resolution is built. */
export type RowFilter = (res: number) => SlotFilter | undefined;

export class CoarseWrites {
  /** Per watermark key: the earliest slot start (ms) left out. */
  private readonly leftOut = new Map<string, number>();

  /** `watermarks`: key -> ms, as read (a missing key: never compacted, every row is written). */
  constructor(private readonly watermarks: ReadonlyMap<string, number>) {}

  static fromRows(rows: readonly { key: string; value: number }[]): CoarseWrites {
    return new CoarseWrites(new Map(rows.map((r) => [r.key, Number(r.value)])));
  }

  /** The filters of `table`'s rows: a coarse resolution's keep the slots before its watermark. */
  of(table: Compaction['table']): RowFilter {
    const c = COMPACTIONS.find((x) => x.table === table);
    return (res) => {
      if (!c?.coarse.includes(res)) return undefined;
      const key = compactedKey(table, res);
      const watermark = this.watermarks.get(key);
      if (watermark === undefined) return undefined;
      const width = res * 60_000;
      return (slot) => {
        const start = slot * width;
        if (start < watermark) return true;
        const earliest = this.leftOut.get(key);
        if (earliest === undefined || start < earliest) this.leftOut.set(key, start);
        return false;
      };
    };
  }

  /** GUARD_SQL's ?4: `[watermark key, earliest slot left out]` rows; the batch fails if a watermark now lies past one. */
  guardRows(): string {
    return JSON.stringify([...this.leftOut]);
  }
}
