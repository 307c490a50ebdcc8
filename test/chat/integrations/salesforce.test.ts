/// <reference types="vite/client" />
import { describe, expect, it } from 'vitest';
import { translate } from '../../../src/chat/integrations';
import { ACME, outboundMessage, SALESFORCE_FLOW, SALESFORCE_OUTBOUND } from './fixtures';
import { nativePost } from './support';
import CASE_XML from '../../fixtures/shared/native-payloads/salesforce/index-39072867399__Case.xml?raw';

describe('Salesforce Outbound Messages (SOAP)', () => {
  it.each(Object.entries(SALESFORCE_OUTBOUND))('turns %s into its message and metadata, keyed by the notification ids', (name, c) => {
    const ids = name.startsWith('two') ? '04l000000000001AAA,04l000000000002AAA' : '04l000000000001AAA';
    expect(translate('salesforce', nativePost(c.xml, {}, 'text/xml'))).toEqual({
      kind: 'message',
      markdown: c.markdown,
      metadata: c.metadata,
      deliveryKey: { id: `salesforce-outbound:${ids}`, contentMayChange: true },
    });
  });

  it('lists at most ten records and ten fields of each', () => {
    const fields = Array.from({ length: 12 }, (_, i) => `<sf:F${i}__c>v${i}</sf:F${i}__c>`).join('');
    const one = translate('salesforce', nativePost(outboundMessage(ACME.replace('<sf:Amount>', `${fields}<sf:Amount>`)), {}, 'text/xml'));
    expect((one as { markdown: string }).markdown.split('\n').slice(-2)).toEqual(['- **F9\\_\\_c**: v9', '- \u2026 and 4 more fields']);
    const many = Array.from({ length: 12 }, (_, i) =>
      ACME.replace('04l000000000001AAA', `04l0000000000${String(i).padStart(2, '0')}AAA`),
    ).join('');
    const lines = (translate('salesforce', nativePost(outboundMessage(many), {}, 'text/xml')) as { markdown: string }).markdown.split('\n');
    expect(lines[0]).toBe('Salesforce: 12 Opportunity records');
    expect(lines).toHaveLength(12);
    expect(lines[11]).toBe('- \u2026 and 2 more records');
  });

  it('refuses a notification whose sObject has no Id (Salesforce always sends it) with a field naming it', () => {
    // A real Outbound Message (a Case), first as sent, then with the record's Id taken out.
    const recordId = /<sf:Id>([^<]+)<\/sf:Id>/.exec(CASE_XML)![1]!;
    const origin = new URL(/<EnterpriseUrl>([^<]+)</.exec(CASE_XML)![1]!).origin;
    expect(translate('salesforce', nativePost(CASE_XML, {}, 'text/xml'))).toMatchObject({
      kind: 'message',
      markdown: expect.stringContaining(`[${recordId}](${origin}/${recordId})`),
    });
    const withoutId = CASE_XML.replace(/<sf:Id>[^<]*<\/sf:Id>/, '');
    expect(withoutId).not.toContain(recordId);
    expect(translate('salesforce', nativePost(withoutId, {}, 'text/xml'))).toEqual({
      kind: 'unrecognised',
      expected: 'Not a Salesforce Outbound Message: an sObject has no Id.',
      fieldName: 'sObject.Id',
    });
    const empty = outboundMessage(ACME.replace(/<sf:Id>[^<]*<\/sf:Id>/, '<sf:Id></sf:Id>'));
    expect(translate('salesforce', nativePost(empty, {}, 'text/xml'))).toMatchObject({ kind: 'unrecognised', fieldName: 'sObject.Id' });
    const bare = outboundMessage(ACME.replace(/(<sObject[^>]*>)[\s\S]*<\/sObject>/, '$1</sObject>'));
    expect(translate('salesforce', nativePost(bare, {}, 'text/xml'))).toMatchObject({ kind: 'unrecognised', fieldName: 'sObject.Id' });
  });

  it.each([
    [
      'a DOCTYPE with entities',
      '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>',
      /^Not a Salesforce Outbound Message: A DOCTYPE is not allowed/,
    ],
    ['an external entity reference', outboundMessage(ACME.replace('Prospecting', '&xxe;')), /entity &xxe; is not allowed/],
    [
      'another SOAP call',
      '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><login xmlns="urn:x"/></soapenv:Body></soapenv:Envelope>',
      /expected one notifications in Body/,
    ],
    ['SOAP 1.2', '<e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope"><e:Body/></e:Envelope>', /expected a SOAP 1\.1 Envelope/],
    ['notifications without a Notification', outboundMessage(''), /expected 1 to 100 Notification elements/],
    ['an sObject without its type', outboundMessage(ACME.replace(' xsi:type="sf:Opportunity"', '')), /no xsi:type/],
    ['malformed XML', outboundMessage(ACME).replace('</soapenv:Envelope>\n', ''), /soapenv:Envelope is not closed/],
  ])('answers %s as unrecognised', (_, xml, reason) => {
    const result = translate('salesforce', nativePost(xml, {}, 'text/xml'));
    expect(result).toMatchObject({ kind: 'unrecognised', fieldName: 'body' });
    expect((result as { expected: string }).expected).toMatch(reason);
  });
});

describe('Salesforce Flow HTTP callouts (JSON)', () => {
  it('turns {object, action, record, recordUrl, user} into its message and metadata', () => {
    expect(translate('salesforce', nativePost(SALESFORCE_FLOW.body))).toEqual({
      kind: 'message',
      markdown: SALESFORCE_FLOW.markdown,
      metadata: SALESFORCE_FLOW.metadata,
    });
  });

  it('names the record by its Id when it has no name field, and links nothing without an http(s) recordUrl', () => {
    const body = {
      object: 'Lead',
      action: 'created',
      recordUrl: 'javascript:alert(1)',
      record: { Id: '00Q000000000001AAA', Company: 'Initech', Rating: null },
    };
    expect(translate('salesforce', nativePost(body))).toEqual({
      kind: 'message',
      markdown: 'Salesforce: Lead 00Q000000000001AAA created\n- **Company**: Initech\n- **Rating**: (empty)',
      metadata: 'salesforce:flow object=Lead action=created',
    });
  });

  it('answers a body that is not the callout shape as unrecognised, saying what it expects', () => {
    expect(translate('salesforce', nativePost({ text: 'hello' }))).toEqual({
      kind: 'unrecognised',
      expected: expect.stringContaining('{"object", "action", "record"'),
      fieldName: 'body',
    });
    expect(translate('salesforce', nativePost({ object: 'Case; DROP', action: 'x', record: {} }))).toEqual({
      kind: 'unrecognised',
      expected: 'Not a Salesforce Flow callout body ({"object", "action", "record"}): object: must be an sObject API name such as Case.',
      fieldName: 'body',
    });
  });
});
