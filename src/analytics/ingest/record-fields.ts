import { DIMENSION_DEFS, type DimensionDef, type FieldKind } from '../catalog';

/**
 * The fields of a conversation-detail record that ingest reads, per level, beyond the structural ones
 * record.schema.ts spells out (ids, dates, the nested lists): every record field a dimension of the
 * catalogue is read from, plus the few the derived dimensions look at. The schema, its fast path and
 * to-observations all walk these lists, so a dimension added to the catalogue is read everywhere.
 */
export type RecordLevel = 'conversation' | 'participant' | 'session' | 'segment';

export interface RecordField {
  field: string;
  kind: FieldKind;
}

/** Lists of objects whose fields are dimensions (`proposedAgents[].agentRank`): per level, the list and its fields. */
export interface ObjectListField {
  field: string;
  items: RecordField[];
}

/** Structural fields the schema types by hand (never read through these lists). */
const STRUCTURAL: Record<RecordLevel, readonly string[]> = {
  conversation: ['conversationId', 'conversationStart', 'conversationEnd', 'participants'],
  participant: ['participantId', 'purpose', 'sessions'],
  session: ['sessionId', 'mediaType', 'segments', 'metrics'],
  segment: ['segmentStart', 'segmentEnd', 'segmentType'],
};

/** Read only for derived dimensions (docs/catalogue.md, "Dimensions with no record field"). */
const FOR_DERIVED: Record<RecordLevel, RecordField[]> = {
  conversation: [],
  participant: [],
  session: [
    { field: 'videoRoomId', kind: 'string' },
    { field: 'videoAddressSelf', kind: 'string' },
  ],
  segment: [],
};

const DEFS: readonly DimensionDef[] = DIMENSION_DEFS;

function plainFields(level: RecordLevel): RecordField[] {
  const out = new Map<string, FieldKind>();
  for (const d of DEFS) {
    if (d.level !== level || d.field === undefined || d.field.includes('.') || STRUCTURAL[level].includes(d.field)) continue;
    out.set(d.field, d.kind!);
  }
  for (const f of FOR_DERIVED[level]) out.set(f.field, f.kind);
  return [...out].map(([field, kind]) => ({ field, kind }));
}

/** `proposedAgents.agentRank` (kind integers) → list proposedAgents, item field agentRank (kind integer). */
function objectLists(level: RecordLevel): ObjectListField[] {
  const lists = new Map<string, RecordField[]>();
  for (const d of DEFS) {
    if (d.level !== level || d.field === undefined || !d.field.includes('.')) continue;
    const [list, item] = d.field.split('.') as [string, string];
    const kind: FieldKind = d.kind === 'integers' ? 'integer' : 'string';
    lists.set(list, [...(lists.get(list) ?? []), { field: item, kind }]);
  }
  return [...lists].map(([field, items]) => ({ field, items }));
}

export const RECORD_FIELDS: Readonly<Record<RecordLevel, readonly RecordField[]>> = {
  conversation: plainFields('conversation'),
  participant: plainFields('participant'),
  session: plainFields('session'),
  segment: plainFields('segment'),
};

export const OBJECT_LISTS: Readonly<Record<RecordLevel, readonly ObjectListField[]>> = {
  conversation: objectLists('conversation'),
  participant: objectLists('participant'),
  session: objectLists('session'),
  segment: objectLists('segment'),
};
