/** The simulator's breach API: recon, its authentication, and the breach listing. */

import { describe, expect, it } from 'vitest';
import { startVendorSimulator } from '#local/simulator/index';
import { apiKeyHeader, bearer } from '../kit/simulator.ts';
import { type ReconBody, recon, sim, useBreachSimulator } from './breach-fixture.ts';

useBreachSimulator();

describe('POST /recon', () => {
  it('generates a report named after the person, with breaches derived from the emails', async () => {
    // Act
    const res = await recon({ name: 'Ada Lovelace', emails: ['ada@example.com', 'ada@analytical.example'] });

    // Assess
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = (await res.json()) as ReconBody;
    expect(body.status).toBe('success');
    expect(body.total_breaches).toBeGreaterThanOrEqual(1);
    expect(body.output).toMatch(/^ada-lovelace_20261102100000_[0-9a-f]{6}$/);
  });

  it('finds the same number of breaches for the same emails in any order or case', async () => {
    // Act
    const a = (await (
      await recon({ name: 'A', emails: ['x@corp.example', 'y@corp.example'] })
    ).json()) as ReconBody;
    const b = (await (
      await recon({ name: 'B', emails: ['Y@corp.example', 'x@corp.example'] })
    ).json()) as ReconBody;

    // Assess
    expect(b.total_breaches).toBe(a.total_breaches);
    expect(b.output).not.toBe(a.output);
  });

  it('answers no_results with zero breaches when every address is at example.org', async () => {
    // Act
    const res = await recon({ name: 'Clean Person', emails: ['a@example.org', 'b@EXAMPLE.ORG'] });

    // Assess
    expect(await res.json()).toEqual({ status: 'no_results', output: expect.any(String), total_breaches: 0 });
  });

  it.each([
    ['  Zoë  O’Brien-Łukasz!! ', 'zoe-o-brien-ukasz'],
    ['李小龍', 'report'],
    ['a'.repeat(60), 'a'.repeat(40)],
  ])('keeps the slug to [a-z0-9-], at most 40 long: %j names its report %j', async (name, slug) => {
    // Act
    const body = (await (await recon({ name, emails: ['z@corp.example'] })).json()) as ReconBody;

    // Assess
    expect(body.output).toMatch(new RegExp(`^${slug}_\\d{14}_[0-9a-f]{6}$`));
  });

  it.each([
    ['malformed JSON', '{"name": "x", '],
    ['a JSON array', '[]'],
    ['a missing name', { emails: ['a@b.example'] }],
    ['an empty name', { name: ' ', emails: ['a@b.example'] }],
    ['missing emails', { name: 'X' }],
    ['an empty emails array', { name: 'X', emails: [] }],
    ['emails that are not strings', { name: 'X', emails: [42] }],
    ['an address without @', { name: 'X', emails: ['nobody'] }],
  ])('rejects %s with 400 and a JSON error', async (_, body) => {
    // Act
    const res = await recon(body);

    // Assess
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'bad_request', message: expect.any(String) });
  });

  it('rejects a non-JSON content type with 415', async () => {
    // Act
    const res = await fetch(`${sim.url}/recon`, {
      method: 'POST',
      headers: { ...apiKeyHeader(sim.apiKey), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=x',
    });

    // Assess
    expect(res.status).toBe(415);
  });

  it('answers with a scripted report name once', async () => {
    // Prepare
    sim.scriptReportName('scripted name ü');

    // Act
    const first = (await (await recon({ name: 'S', emails: ['s@corp.example'] })).json()) as ReconBody;
    const second = (await (await recon({ name: 'S', emails: ['s@corp.example'] })).json()) as ReconBody;

    // Assess
    expect(first.output).toBe('scripted name ü');
    expect(second.output).toMatch(/^s_/);
  });
});

describe('authentication on the breach API', () => {
  it.each([
    ['no credential', {}],
    ['a wrong X-API-Key', { 'x-api-key': 'sk_sim_wrong' }],
    ['the key as a Bearer token', 'bearer'],
  ])('answers 401 JSON to %s', async (_, variant) => {
    // Prepare
    const headers = variant === 'bearer' ? bearer(sim.apiKey) : (variant as Record<string, string>);

    // Act
    const responses = [
      await fetch(`${sim.url}/view_breaches`, { headers }),
      await recon({ name: 'X', emails: ['x@corp.example'] }, headers),
      await fetch(`${sim.url}/download/whatever`, { headers, redirect: 'manual' }),
    ];

    // Assess
    for (const res of responses) {
      expect(res.status).toBe(401);
      const text = await res.text();
      expect(JSON.parse(text)).toMatchObject({ error: 'unauthorized' });
      expect(text).not.toContain(sim.apiKey);
    }
  });
});

describe('GET /view_breaches', () => {
  it('lists every report with its name, creation time and breach count', async () => {
    // Prepare
    const own = await startVendorSimulator();
    try {
      const made = (await (
        await fetch(`${own.url}/recon`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...apiKeyHeader(own.apiKey) },
          body: JSON.stringify({ name: 'List Me', emails: ['l@corp.example'] }),
        })
      ).json()) as ReconBody;
      own.createReport('made directly', { name: 'Direct', emails: ['d@example.org'] });

      // Act
      const res = await fetch(`${own.url}/view_breaches`, { headers: apiKeyHeader(own.apiKey) });

      // Assess
      expect(await res.json()).toEqual({
        reports: [
          { name: made.output, created_at: expect.any(String), total_breaches: made.total_breaches },
          { name: 'made directly', created_at: expect.any(String), total_breaches: 0 },
        ],
      });
    } finally {
      await own.close();
    }
  });
});
