/**
 * How `conversations.id` holds a conversation's id. Genesys' conversation ids are lowercase UUIDs: those are
 * kept as their 16 bytes (a BLOB in the column, whose TEXT affinity keeps a BLOB as is), any other id as its
 * text. The primary key's index and the row each hold 16 bytes instead of 36 (about 40 bytes a conversation
 * with the index's overhead). Rows written before 2026-11-27 hold every id as text and are still found.
 *
 * In SQL a key travels as text: 'x' and the 32 hex digits of the bytes, or 't' and the id's text
 * (`keySql` turns it into the column's value, STORED_KEY_SQL reads one back), so a row's key is
 * written back exactly as it was read, whatever form it has.
 */

const UUID_LENGTH = 36;
const DASHES = [8, 13, 18, 23];

function isLowercaseUuid(id: string): boolean {
  if (id.length !== UUID_LENGTH) return false;
  for (let i = 0; i < UUID_LENGTH; i++) {
    const c = id.charCodeAt(i);
    if (DASHES.includes(i)) {
      if (c !== 45) return false;
    } else if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/** The key of a conversation stored from now on. */
export function conversationKey(id: string): string {
  return isLowercaseUuid(id) ? `x${id.replaceAll('-', '')}` : `t${id}`;
}

/** The keys under which a conversation may be stored: a UUID also as the text that rows of before hold. */
export function lookupKeys(id: string): string[] {
  return isLowercaseUuid(id) ? [`x${id.replaceAll('-', '')}`, `t${id}`] : [`t${id}`];
}

/** The conversation id a key (as STORED_KEY_SQL reads it, hex in either case) stands for. */
export function conversationIdOfKey(key: string): string {
  if (key.charCodeAt(0) !== 120 /* x */) return key.slice(1);
  const hex = key.slice(1).toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The column's value for a key held by the SQL expression `expr` (`form`: known to be that form). The text
 * is cut as bytes: substr() of a TEXT stops at a NUL, which an id may hold ('t' is one byte).
 */
export function keySql(expr: string, form?: 'x' | 't'): string {
  const bytes = `unhex(substr(${expr}, 2))`;
  const text = `CAST(substr(CAST(${expr} AS BLOB), 2) AS TEXT)`;
  return form === 'x' ? bytes : form === 't' ? text : `CASE WHEN substr(${expr}, 1, 1) = 'x' THEN ${bytes} ELSE ${text} END`;
}

/** A row's key, as conversationIdOfKey reads it and keySql writes it back. */
export const STORED_KEY_SQL = `CASE WHEN typeof(id) = 'blob' THEN 'x' || hex(id) ELSE 't' || id END`;

/** A row's conversation id as text, in SQL (for reports and tests reading the table by hand). */
export const CONVERSATION_ID_SQL = `CASE WHEN typeof(id) = 'blob' THEN lower(substr(hex(id), 1, 8) || '-' || substr(hex(id), 9, 4) || '-' ||
  substr(hex(id), 13, 4) || '-' || substr(hex(id), 17, 4) || '-' || substr(hex(id), 21)) ELSE id END`;
