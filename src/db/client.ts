import { drizzle } from 'drizzle-orm/d1';
import * as schema from './schema';

export type Db = ReturnType<typeof build>;

function build(d1: D1Database) {
  return drizzle(d1, { schema });
}

/**
 * Building a Drizzle instance walks the whole schema (about a fifth of a small request's CPU), so
 * one is kept per D1 binding object for the isolate's life. Keyed by the binding itself, weakly:
 * nothing outlives the binding it was made for.
 */
const instances = new WeakMap<D1Database, Db>();

export function createDb(d1: D1Database): Db {
  let db = instances.get(d1);
  if (!db) instances.set(d1, (db = build(d1)));
  return db;
}
