/** The simulator's breach report downloads: the redirect chain to the storage origin, and what that origin serves. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rawRequest } from '../kit/http.ts';
import { apiKeyHeader, bearer } from '../kit/simulator.ts';
import { readZip } from '../kit/zip.ts';
import {
  advanceClock,
  downloadHops,
  type ReconBody,
  recon,
  sim,
  useBreachSimulator,
} from './breach-fixture.ts';

useBreachSimulator();

describe('downloading a report', () => {
  it('redirects 302 to a relative path, then 307 to a pre-signed URL on the storage origin', async () => {
    // Prepare
    const { output } = (await (
      await recon({ name: 'Grace Hopper', emails: ['grace@navy.example'] })
    ).json()) as ReconBody;

    // Act
    const { first, second, third } = await downloadHops(output);

    // Assess
    expect(first.status).toBe(302);
    expect(first.headers.location).toBe(`/files/${output}.zip`);
    expect(second.status).toBe(307);
    const location = new URL(String(second.headers.location));
    expect(location.origin).toBe(sim.storageUrl);
    expect(location.origin).not.toBe(sim.url);
    expect(location.pathname).toBe(`/reports/${output}.zip`);
    expect(location.searchParams.get('X-Amz-Expires')).toBe('300');
    expect(location.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(third.status).toBe(200);
    expect(third.headers['content-type']).toBe('application/zip');
    expect(third.headers['content-length']).toBe(String(third.body.length));
    expect(third.headers.etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(sim.requestCount('GET /download/{report_name}')).toBeGreaterThanOrEqual(1);
    expect(sim.requestCount('GET /reports/{file_name}')).toBeGreaterThanOrEqual(1);
  });

  it('serves a valid ZIP with report.json, breaches.csv and README.txt', async () => {
    // Prepare
    const emails = ['linus@kernel.example', 'linus@example.org'];
    const { output, total_breaches } = (await (await recon({ name: 'Linus T', emails })).json()) as ReconBody;

    // Act
    const { third } = await downloadHops(output);

    // Assess
    expect(third.body.subarray(0, 4)).toEqual(Buffer.from('PK\x03\x04', 'latin1'));
    const entries = readZip(third.body);
    expect(entries.map((e) => e.name)).toEqual(['report.json', 'breaches.csv', 'README.txt']);
    const report = JSON.parse(entries[0]?.content.toString() ?? '') as Record<string, unknown> & {
      breaches: unknown[];
    };
    expect(report).toMatchObject({ report_name: output, name: 'Linus T', total_breaches, emails });
    expect(report.breaches).toHaveLength(total_breaches);
    const csv = entries[1]?.content.toString().trimEnd().split('\r\n') ?? [];
    expect(csv[0]).toBe('email,breach,breach_date,data_classes');
    expect(csv).toHaveLength(total_breaches + 1);
  });

  it('produces a ZIP that unzip accepts, when unzip is installed', async (context) => {
    // Prepare
    let hasUnzip = true;
    try {
      execFileSync('unzip', ['-v'], { stdio: 'ignore' });
    } catch {
      hasUnzip = false;
    }
    if (!hasUnzip) context.skip();
    sim.createReport('unzip check');
    const { third } = await downloadHops('unzip check');
    const dir = mkdtempSync(join(tmpdir(), 'sim-zip-'));
    try {
      writeFileSync(join(dir, 'r.zip'), third.body);

      // Act
      const listing = execFileSync('unzip', ['-l', join(dir, 'r.zip')]).toString();
      execFileSync('unzip', ['-tq', join(dir, 'r.zip')]);

      // Assess
      expect(listing).toMatch(/report\.json/);
      expect(listing).toMatch(/breaches\.csv/);
      expect(listing).toMatch(/README\.txt/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sends the same ZIP bytes and ETag on every download', async () => {
    // Prepare
    sim.createReport('stable zip', { emails: ['s@corp.example'] });

    // Act
    const a = (await downloadHops('stable zip')).third;
    const b = (await downloadHops('stable zip')).third;

    // Assess
    expect(b.body.equals(a.body)).toBe(true);
    expect(b.headers.etag).toBe(a.headers.etag);
  });

  it('works for report names with spaces, unicode, slashes and percent signs', async () => {
    // Prepare
    const name = 'Jürgen Müller / 100% 報告';
    sim.createReport(name, { name: 'Jürgen Müller', emails: ['j@corp.example'] });

    // Act
    const { first, second, third } = await downloadHops(name);

    // Assess
    expect(first.status).toBe(302);
    expect(first.headers.location).toBe(`/files/${encodeURIComponent(name)}.zip`);
    expect(second.status).toBe(307);
    expect(third.status).toBe(200);
    const report = JSON.parse(readZip(third.body)[0]?.content.toString() ?? '') as { report_name: string };
    expect(report.report_name).toBe(name);
  });

  it('catches a client that lets fetch follow the chain, since fetch forwards X-API-Key across origins', async () => {
    // Prepare
    sim.createReport('fetch me');
    const before = sim.storageRequests.length;

    // Act
    const res = await fetch(`${sim.url}/download/fetch%20me`, { headers: apiKeyHeader(sim.apiKey) });

    // Assess
    expect(res.redirected).toBe(true);
    expect(res.status).toBe(400);
    expect(sim.storageRequests.slice(before)[0]?.headers['x-api-key']).toBeDefined();
  });

  it('answers 404 for an unknown report on both hops', async () => {
    // Act
    const first = await rawRequest(`${sim.url}/download/no-such-report`, {
      headers: apiKeyHeader(sim.apiKey),
    });
    const second = await rawRequest(`${sim.url}/files/no-such-report.zip`, {
      headers: apiKeyHeader(sim.apiKey),
    });

    // Assess
    expect(first.status).toBe(404);
    expect(second.status).toBe(404);
  });

  it('requires the X-API-Key on the second hop too', async () => {
    // Prepare
    sim.createReport('second hop');

    // Act
    const res = await rawRequest(`${sim.url}/files/second%20hop.zip`);

    // Assess
    expect(res.status).toBe(401);
  });
});

describe('the storage origin', () => {
  it('rejects requests that carry Authorization or X-API-Key with 400, and records them', async () => {
    // Prepare
    sim.createReport('leak check');
    const { second } = await downloadHops('leak check');
    const signed = String(second.headers.location);
    const before = sim.storageRequests.length;

    // Act
    const withKey = await rawRequest(signed, { headers: apiKeyHeader(sim.apiKey) });
    const withBearer = await rawRequest(signed, { headers: bearer(sim.apiKey) });

    // Assess
    expect(withKey.status).toBe(400);
    expect(withKey.headers['content-type']).toBe('application/xml');
    expect(withKey.body.toString()).toMatch(/<Code>InvalidArgument<\/Code>/);
    expect(withBearer.status).toBe(400);
    const recorded = sim.storageRequests.slice(before);
    expect(recorded.map((r) => r.path)).toEqual(['/reports/leak%20check.zip', '/reports/leak%20check.zip']);
    expect(recorded[0]?.headers['x-api-key']).toBe(sim.apiKey);
  });

  it('records clean downloads without any credential header', async () => {
    // Prepare
    sim.createReport('clean');
    const before = sim.storageRequests.length;

    // Act
    await downloadHops('clean');

    // Assess
    const recorded = sim.storageRequests.slice(before);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]?.headers.authorization).toBeUndefined();
    expect(recorded[0]?.headers['x-api-key']).toBeUndefined();
  });

  it('rejects a tampered signature, a changed path and an unsigned request with 403', async () => {
    // Prepare
    sim.createReport('tamper');
    sim.createReport('other');
    const signed = new URL(String((await downloadHops('tamper')).second.headers.location));
    const badSignature = new URL(signed);
    badSignature.searchParams.set('X-Amz-Signature', '0'.repeat(64));
    const otherPath = new URL(signed);
    otherPath.pathname = '/reports/other.zip';
    const longer = new URL(signed);
    longer.searchParams.set('X-Amz-Expires', '999999');

    // Act
    const statuses = await Promise.all(
      [badSignature, otherPath, longer, `${sim.storageUrl}/reports/tamper.zip`].map(
        async (url) => (await rawRequest(String(url))).status,
      ),
    );

    // Assess
    expect(statuses).toEqual([403, 403, 403, 403]);
  });

  it('rejects a pre-signed URL after it expired', async () => {
    // Prepare
    sim.createReport('expiring');
    const signed = String((await downloadHops('expiring')).second.headers.location);

    // Act
    advanceClock(301_000);
    const res = await rawRequest(signed);

    // Assess
    expect(res.status).toBe(403);
    expect(res.body.toString()).toMatch(/expired/);
  });

  it('answers 404 for paths it does not serve', async () => {
    expect((await rawRequest(`${sim.storageUrl}/elsewhere`)).status).toBe(404);
  });
});
