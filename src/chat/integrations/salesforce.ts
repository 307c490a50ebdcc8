import { z } from 'zod';
import { count, esc, link, metadata } from './text';
import { expectShape, message, Unrecognised, type NativePost, type Translation } from './types';
import { childrenNamed, parseXml, XmlError, type XmlElement } from './xml';

/**
 * Salesforce, two ways:
 * - Outbound Messages (workflow rules): a SOAP 1.1 `notifications` call of up to 100 notifications
 *   of one sObject type. The answer must be the SOAP `notificationsResponse` with `Ack` true, or
 *   Salesforce redelivers (for up to 24 hours). Notifications carry ids, and "because a message may
 *   be delivered more than once, your listener should check the notification IDs": the ids are the
 *   idempotency key, and the id alone decides, as a redelivery may carry the record's newer values.
 * - A Flow's HTTP callout (or any JSON sender): `{object, action, record, recordUrl?, user?}`.
 */

export const SOAP_ENVELOPE = 'http://schemas.xmlsoap.org/soap/envelope/';
export const OUTBOUND_NAMESPACE = 'http://soap.sforce.com/2005/09/outbound';

/** The acknowledgement Salesforce's outbound messaging WSDL defines (`notificationsResponse`). */
export const SOAP_ACK =
  '<?xml version="1.0" encoding="UTF-8"?>\n' +
  `<soapenv:Envelope xmlns:soapenv="${SOAP_ENVELOPE}">\n` +
  '  <soapenv:Body>\n' +
  `    <notificationsResponse xmlns="${OUTBOUND_NAMESPACE}">\n` +
  '      <Ack>true</Ack>\n' +
  '    </notificationsResponse>\n' +
  '  </soapenv:Body>\n' +
  '</soapenv:Envelope>\n';

const SOBJECT_NAME = /^[A-Za-z][A-Za-z0-9_]{0,79}$/;
const RECORD_ID = /^[A-Za-z0-9]{15}(?:[A-Za-z0-9]{3})?$/;
/** Fields that name a record, in the order tried; the record id otherwise. */
const NAME_FIELDS = ['Name', 'Subject', 'CaseNumber', 'Title'];
const MAX_RECORDS = 10;
const MAX_FIELDS = 10;
/** Per record when several are listed on one line each. */
const MAX_SUMMARY_FIELDS = 5;

type Value = string | null;

interface SfRecord {
  id: string | null;
  fields: Array<readonly [string, Value]>;
  url: string | null;
}

function titleOf(record: SfRecord): { title: string; nameField: string | null } {
  for (const field of NAME_FIELDS) {
    const value = record.fields.find(([name]) => name === field)?.[1];
    if (value && value.trim() !== '') return { title: value, nameField: field };
  }
  return { title: record.id ?? 'record', nameField: null };
}

function shownFields(record: SfRecord, nameField: string | null): Array<readonly [string, Value]> {
  return record.fields.filter(([name]) => name !== 'Id' && name !== nameField);
}

function valueText(value: Value): string {
  return value === null || value === '' ? '(empty)' : esc(value, 100);
}

function fieldBullets(fields: Array<readonly [string, Value]>): string[] {
  const lines = fields.slice(0, MAX_FIELDS).map(([name, value]) => `- **${esc(name, 80)}**: ${valueText(value)}`);
  if (fields.length > MAX_FIELDS) lines.push(`- \u2026 and ${count(fields.length - MAX_FIELDS, 'more field')}`);
  return lines;
}

function recordMarkdown(object: string, records: SfRecord[], suffix: string): string {
  const [only] = records;
  if (records.length === 1 && only) {
    const { title, nameField } = titleOf(only);
    const bullets = fieldBullets(shownFields(only, nameField));
    const head = `Salesforce: ${esc(object, 80)} ${link(title, only.url)}${suffix}`;
    return bullets.length > 0 ? `${head}\n${bullets.join('\n')}` : head;
  }
  const lines = records.slice(0, MAX_RECORDS).map((record) => {
    const { title, nameField } = titleOf(record);
    const fields = shownFields(record, nameField);
    const summary =
      fields
        .slice(0, MAX_SUMMARY_FIELDS)
        .map(([name, value]) => `${esc(name, 80)}: ${valueText(value)}`)
        .join(', ') + (fields.length > MAX_SUMMARY_FIELDS ? ', \u2026' : '');
    return `- ${link(title, record.url)}${summary ? ` \u2014 ${summary}` : ''}`;
  });
  if (records.length > MAX_RECORDS) lines.push(`- \u2026 and ${count(records.length - MAX_RECORDS, 'more record')}`);
  return `Salesforce: ${count(records.length, `${esc(object, 80)} record`)}${suffix}\n${lines.join('\n')}`;
}

// ---------------------------------------------------------------------------------------------
// Outbound Messages (SOAP)
// ---------------------------------------------------------------------------------------------

function only(element: XmlElement, local: string, namespace: string | null): XmlElement {
  const found = childrenNamed(element, local, namespace);
  const [first] = found;
  if (found.length !== 1 || !first)
    throw new Unrecognised(`Not a Salesforce Outbound Message: expected one ${local} in ${element.local}.`, 'body');
  return first;
}

function optionalText(element: XmlElement, local: string): string | null {
  const found = childrenNamed(element, local, OUTBOUND_NAMESPACE)[0];
  return found ? found.text.trim() : null;
}

function isNil(element: XmlElement): boolean {
  for (const [name, value] of element.attributes) {
    if ((name === 'nil' || name.endsWith(':nil')) && value.trim() === 'true') return true;
  }
  return false;
}

/** `xsi:type="sf:Opportunity"` → `Opportunity`. */
function sObjectType(sObject: XmlElement): string {
  for (const [name, value] of sObject.attributes) {
    if (name === 'type' || name.endsWith(':type')) {
      const local = value.trim().split(':').at(-1) ?? '';
      if (SOBJECT_NAME.test(local)) return local;
    }
  }
  throw new Unrecognised('Not a Salesforce Outbound Message: an sObject has no xsi:type naming its object.', 'body');
}

/** `https://na1.salesforce.com/services/Soap/c/…` → `https://na1.salesforce.com`. */
function instanceOrigin(url: string | null): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.origin : null;
  } catch {
    return null;
  }
}

function outboundMessage(text: string): Translation {
  let root: XmlElement;
  try {
    root = parseXml(text);
  } catch (err) {
    if (err instanceof XmlError) throw new Unrecognised(`Not a Salesforce Outbound Message: ${err.message}`, 'body');
    throw err;
  }
  if (root.local !== 'Envelope' || root.namespace !== SOAP_ENVELOPE) {
    throw new Unrecognised('Not a Salesforce Outbound Message: expected a SOAP 1.1 Envelope.', 'body');
  }
  const notifications = only(only(root, 'Body', SOAP_ENVELOPE), 'notifications', OUTBOUND_NAMESPACE);
  const origin = instanceOrigin(optionalText(notifications, 'EnterpriseUrl') ?? optionalText(notifications, 'PartnerUrl'));
  const organization = optionalText(notifications, 'OrganizationId');
  const items = childrenNamed(notifications, 'Notification', OUTBOUND_NAMESPACE);
  if (items.length === 0 || items.length > 100) {
    throw new Unrecognised('Not a Salesforce Outbound Message: expected 1 to 100 Notification elements.', 'body');
  }
  const ids: string[] = [];
  const types = new Set<string>();
  const records = items.map((item): SfRecord => {
    const id = optionalText(item, 'Id');
    if (!id) throw new Unrecognised('Not a Salesforce Outbound Message: a Notification has no Id.', 'body');
    ids.push(id);
    const sObject = only(item, 'sObject', OUTBOUND_NAMESPACE);
    types.add(sObjectType(sObject));
    // Flat fields only: an outbound message never nests, anything else is left out.
    const fields = sObject.children
      .filter((field) => field.children.length === 0)
      .map((field) => [field.local, isNil(field) ? null : field.text.trim()] as const);
    const recordId = fields.find(([name]) => name === 'Id')?.[1] ?? null;
    // Salesforce always sends the record's Id: a notification without it names no record.
    if (!recordId) throw new Unrecognised('Not a Salesforce Outbound Message: an sObject has no Id.', 'sObject.Id');
    const url = origin && recordId && RECORD_ID.test(recordId) ? `${origin}/${recordId}` : null;
    return { id: recordId, fields, url };
  });
  const object = types.size === 1 ? [...types][0]! : 'mixed';
  return message(
    recordMarkdown(object, records, ''),
    metadata('salesforce:outbound', [
      ['object', object],
      ['org', organization],
    ]),
    { id: `salesforce-outbound:${ids.join(',')}`, contentMayChange: true },
  );
}

// ---------------------------------------------------------------------------------------------
// Flow HTTP callout (JSON)
// ---------------------------------------------------------------------------------------------

const flowBody = z.object({
  object: z.string().regex(SOBJECT_NAME, 'must be an sObject API name such as Case'),
  action: z.string().trim().min(1).max(100),
  record: z.record(z.string(), z.unknown()),
  recordUrl: z.string().nullish(),
  user: z.string().nullish(),
});

function flowMessage(json: unknown): Translation {
  const body = expectShape(flowBody, json, 'Salesforce Flow callout body ({"object", "action", "record"})');
  const fields: Array<readonly [string, Value]> = [];
  for (const [name, value] of Object.entries(body.record)) {
    if (value === null) fields.push([name, null]);
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') fields.push([name, String(value)]);
    // Nested values (Salesforce's `attributes`, related records) are left out.
  }
  const rawId = body.record.Id;
  const record: SfRecord = { id: typeof rawId === 'string' ? rawId : null, fields, url: body.recordUrl ?? null };
  const by = body.user ? ` by ${esc(body.user, 100)}` : '';
  return message(
    recordMarkdown(body.object, [record], ` ${esc(body.action, 100)}${by}`),
    metadata('salesforce:flow', [
      ['object', body.object],
      ['action', body.action],
    ]),
  );
}

export function translateSalesforce(post: NativePost): Translation {
  if (post.mediaType === 'text/xml') return outboundMessage(post.text);
  const json = post.json;
  if (json === null || typeof json !== 'object' || !('record' in json)) {
    throw new Unrecognised(
      'A salesforce webhook takes an Outbound Message (SOAP, text/xml), a Flow callout body {"object", "action", "record", "recordUrl"?, "user"?}, or the generic {"message", "metadata"} body.',
    );
  }
  return flowMessage(json);
}
