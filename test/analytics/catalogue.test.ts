/**
 * The catalogue against Genesys' own vocabulary (test/fixtures/shared/reference, the enums of its SDK):
 * every metric, every groupBy dimension and every filter dimension, no more, no fewer; and the query
 * accepts each of them, groups by each groupBy one and filters by each filter one.
 */
import { describe, expect, it } from 'vitest';
import {
  FILTER_DIMENSIONS as DIMENSIONS,
  GROUP_BY_DIMENSIONS,
  METRIC_NAMES,
  METRICS,
  MULTI_VALUED,
  NUMERIC,
} from '../../src/analytics/catalog';
import reference from '../fixtures/shared/reference/genesys-aggregate-catalogue.json';
import { query, queryOk } from './analytics-api';

const sorted = (names: readonly string[]) => [...names].sort();
const DAY = '2002-05-01T00:00:00.000Z/2002-05-02T00:00:00.000Z';

describe("the catalogue is Genesys' whole vocabulary", () => {
  it('has its 80 metrics, 83 groupBy dimensions and 85 filter dimensions', () => {
    expect(sorted(METRIC_NAMES)).toEqual(sorted(reference.metrics));
    expect(sorted(GROUP_BY_DIMENSIONS)).toEqual(sorted(reference.groupBy));
    expect(sorted(DIMENSIONS)).toEqual(sorted(reference.filterDimensions));
    expect([METRIC_NAMES.length, GROUP_BY_DIMENSIONS.length, DIMENSIONS.length]).toEqual([80, 83, 85]);
  });

  it('says who emits each observed metric, and numeric and multi-valued dimensions as documented', () => {
    for (const m of METRICS) expect(m.kind === 'calculated' || m.purposes.length > 0, m.name).toBe(true);
    const numeric = DIMENSIONS.filter((_, i) => NUMERIC[i]);
    // The reference names these as taking ranges (its `about`); the rest are from docs/catalogue.md.
    for (const d of ['agentRank', 'routingPriority', 'mediaCount', 'eligibleAgentCount']) expect(numeric).toContain(d);
    const multi = DIMENSIONS.filter((_, i) => MULTI_VALUED[i]);
    for (const d of ['divisionId', 'requestedRoutingSkillId', 'activeSkillId', 'removedSkillId']) expect(multi).toContain(d);
  });

  it('answers every metric, groups by every groupBy dimension and filters by every filter dimension', async () => {
    await queryOk({ interval: DAY, metrics: [...METRIC_NAMES] });
    for (let i = 0; i < GROUP_BY_DIMENSIONS.length; i += 8) await queryOk({ interval: DAY, groupBy: GROUP_BY_DIMENSIONS.slice(i, i + 8) });
    await queryOk({
      interval: DAY,
      filter: { type: 'or', predicates: DIMENSIONS.map((dimension) => ({ dimension, operator: 'exists' })) },
    });
    // Filter-only dimensions are refused in groupBy, naming the entry.
    const res = await query({ interval: DAY, groupBy: ['reoffered'] });
    expect(res.status).toBe(400);
    expect(res.body.details[0].fieldName).toBe('groupBy[0]');
  });
});
