import { createHash } from 'node:crypto';
import { get, type IncomingMessage } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError, VendorHttpError, VendorResponseError } from '#lambdas/platform/errors';
import { parseOutputName } from '#lambdas/scan/parse';
import { SCAN_VARIABLES } from '#lambdas/scan/variables';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import { parseStatusVocabulary } from '#lambdas/vendor-api/scan/status';
import type { VendorSimulator } from '#local/simulator/types';
import { digestStream, readAll } from '../../kit/digest.ts';
import { startSimulator } from '../../kit/simulator.ts';
import { rejectionOf, testSettings } from '../transport/helpers.ts';

let sim: VendorSimulator;
let client: ScanClient;

beforeAll(async () => {
  sim = await startSimulator({ reportBytes: 200 * 1024, logsBytes: 100 * 1024, debugBytes: 50 * 1024 });
  client = new ScanClient(testSettings(sim));
});

afterEach(() => sim.clearFaults());

afterAll(async () => {
  await client.close();
  await sim.close();
});

/** The bytes the simulator serves when asked without Accept-Encoding (the identity representation). */
async function identityBytes(path: string): Promise<{ body: Buffer; headers: Record<string, unknown> }> {
  // node:http sends no Accept-Encoding unless asked (fetch would ask for gzip).
  const res = await new Promise<IncomingMessage>((resolve, reject) =>
    get(`${sim.url}${path}`, { headers: { authorization: `Bearer ${sim.apiKey}` } }, resolve).on(
      'error',
      reject,
    ),
  );
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return { body: Buffer.concat(chunks), headers: res.headers };
}

describe('ScanClient success paths', () => {
  it('starts a scan with a form POST and returns the validated uuid', async () => {
    // Prepare
    const before = sim.requestCount('POST /scan');

    // Act
    const started = await client.startScan('  Example.COM ');

    // Assess
    expect(started.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(started.raw).toMatchObject({ uuid: started.uuid, domain: 'example.com' });
    expect(sim.requestCount('POST /scan')).toBe(before + 1);
  });

  it('starts a scan with the GET alternative when asked', async () => {
    // Prepare
    const before = sim.requestCount('GET /scan');

    // Act
    const started = await client.startScan('https://www.example.net/some/path', { via: 'GET' });

    // Assess
    expect(started.raw).toMatchObject({ uuid: started.uuid, domain: 'www.example.net' });
    expect(sim.requestCount('GET /scan')).toBe(before + 1);
  });

  it('normalises an IDN domain to punycode before sending it', async () => {
    // Act
    const started = await client.startScan('bücher.example.com');

    // Assess
    expect(started.raw).toMatchObject({ domain: 'xn--bcher-kva.example.com' });
  });

  it('rejects an invalid domain before anything is sent', async () => {
    // Prepare
    const before = sim.requestCount('POST /scan');

    // Act
    const error = await rejectionOf(client.startScan('not a domain'));

    // Assess
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).input).toBe('domain');
    expect(sim.requestCount('POST /scan')).toBe(before);
  });

  it('rejects a malformed scan uuid before anything is sent', async () => {
    // Act
    const error = await rejectionOf(client.getStatus('../stats'));

    // Assess
    expect(error).toBeInstanceOf(InvalidInputError);
  });

  it('reads and classifies the status, keeping the raw body', async () => {
    // Prepare
    const { uuid } = await client.startScan('status.example.com');

    // Act
    const status = await client.getStatus(uuid);

    // Assess
    expect(status.state).toBe('succeeded');
    expect(status.vendorStatus).toBe('completed');
    expect(JSON.parse(status.raw)).toMatchObject({ uuid, status: 'completed' });
    expect(status.contentType).toMatch(/application\/json/);
  });

  it('streams the report with its content type, length and ETag passed through', async () => {
    // Prepare
    const { uuid } = await client.startScan('report.example.com');
    await client.getStatus(uuid);
    const reference = await identityBytes(`/report/${uuid}`);

    // Act
    const download = await client.getOutput(parseOutputName('report'), uuid);
    const body = await readAll(download.body);

    // Assess
    expect(download.contentType).toBe('application/json');
    expect(download.etag).toBe(reference.headers.etag);
    expect(download.contentLength).toBe(body.length);
    expect(download.contentEncoding).toBeUndefined();
    expect(download.redirects).toBe(0);
    expect(download.finalUrl).toBe(`${sim.url}/report/${uuid}`);
    expect(body.equals(reference.body)).toBe(true);
  });

  it('decodes gzip logs transparently, byte-identical to the uncompressed representation', async () => {
    // Prepare
    const { uuid } = await client.startScan('logs.example.com');
    await client.getStatus(uuid);
    const reference = await identityBytes(`/logs/${uuid}`);

    // Act
    const download = await client.getOutput(parseOutputName('logs'), uuid);
    const body = await readAll(download.body);

    // Assess: the vendor did gzip (it told us), we removed it, and nothing else changed.
    expect(download.decodedContentEncoding).toBe('gzip');
    expect(download.contentEncoding).toBeUndefined();
    expect(download.contentLength).toBeUndefined();
    expect(download.contentType).toBe('text/plain; charset=utf-8');
    expect(reference.headers['content-encoding']).toBeUndefined();
    expect(body.length).toBe(reference.body.length);
    expect(createHash('sha256').update(body).digest('hex')).toBe(
      createHash('sha256').update(reference.body).digest('hex'),
    );
  });

  it('streams the debug output as NDJSON', async () => {
    // Prepare
    const { uuid } = await client.startScan('debug.example.com');
    await client.getStatus(uuid);

    // Act
    const download = await client.getOutput(parseOutputName('debug'), uuid);
    const text = (await readAll(download.body)).toString('utf8');

    // Assess
    expect(download.contentType).toBe('application/x-ndjson');
    const firstLine = text.split('\n')[0] ?? '';
    expect(() => JSON.parse(firstLine)).not.toThrow();
  });

  it('lists scans from the scans array', async () => {
    // Prepare
    const { uuid } = await client.startScan('list.example.com');

    // Act
    const listed = await client.listScans();

    // Assess
    expect(listed.scans).toEqual(expect.arrayContaining([expect.objectContaining({ uuid })]));
    expect(listed.raw).toMatchObject({ scans: listed.scans });
  });

  it('reads the stats', async () => {
    // Act
    const stats = await client.getStats();

    // Assess
    expect(stats.raw).toMatchObject({ total: expect.any(Number), by_status: expect.any(Object) });
  });

  it('deletes a scan, after which its status is a permanent 404', async () => {
    // Prepare
    const { uuid } = await client.startScan('delete.example.com');

    // Act
    const deleted = await client.deleteScan(uuid);
    const after = await rejectionOf(client.getStatus(uuid));

    // Assess
    expect(deleted.raw).toMatchObject({ uuid, deleted: true });
    expect(after).toBeInstanceOf(VendorHttpError);
    expect(after).toMatchObject({ name: 'VendorHttpError', status: 404, retryable: false });
  });
});

describe('ScanClient scan lifecycles across polls', () => {
  it('classifies a scan that fails as pending, running, then failed', async () => {
    // Prepare
    sim.scriptScan('fails.example.com', { outcome: 'fail', pollsToFinish: 3 });
    const { uuid } = await client.startScan('fails.example.com');

    // Act
    const states = [];
    for (let poll = 0; poll < 4; poll += 1) states.push((await client.getStatus(uuid)).state);

    // Assess
    expect(states[0]).toBe('pending');
    expect(states).toContain('running');
    expect(states.at(-1)).toBe('failed');
  });

  it('keeps a scan that never finishes out of the terminal states on every poll', async () => {
    // Prepare
    sim.scriptScan('forever.example.com', { outcome: 'never-finish' });
    const { uuid } = await client.startScan('forever.example.com');

    // Act
    const states = new Set<string>();
    for (let poll = 0; poll < 6; poll += 1) states.add((await client.getStatus(uuid)).state);

    // Assess
    expect(states.has('succeeded')).toBe(false);
    expect(states.has('failed')).toBe(false);
    expect([...states].every((s) => s === 'pending' || s === 'running')).toBe(true);
  });

  it('reports progress while running', async () => {
    // Prepare
    sim.scriptScan('progress.example.com', { outcome: 'succeed', pollsToFinish: 4 });
    const { uuid } = await client.startScan('progress.example.com');

    // Act
    const progress = [];
    for (let poll = 0; poll < 4; poll += 1) progress.push((await client.getStatus(uuid)).progress);

    // Assess
    expect(progress.every((p) => p === undefined || (p >= 0 && p <= 100))).toBe(true);
    expect(progress.at(-1)).toBe(100);
  });

  it('uses the vocabulary given in the constructor', async () => {
    // Prepare
    const strict = new ScanClient({
      ...testSettings(sim),
      statusVocabulary: parseStatusVocabulary('{"succeeded": ["all-good"]}', SCAN_VARIABLES.statusVocabulary),
    });
    const { uuid } = await client.startScan('vocab.example.com');

    // Act
    const status = await strict.getStatus(uuid);

    // Assess: "completed" is not a success word of this vocabulary.
    expect(status.vendorStatus).toBe('completed');
    expect(status.state).toBe('unknown');
    await strict.close();
  });

  it('classifies a plain-text status body', async () => {
    // Prepare
    const { uuid } = await client.startScan('text.example.com');
    sim.addFault({ api: 'scan', path: '/status/', fault: { type: 'status', status: 200, body: 'RUNNING' } });

    // Act
    const status = await client.getStatus(uuid);

    // Assess
    expect(status).toMatchObject({ state: 'running', vendorStatus: 'RUNNING', raw: 'RUNNING' });
    expect(status.contentType).toMatch(/text\/plain/);
  });
});

describe('ScanClient unusable answers', () => {
  it('throws VendorResponseError when the start answer has no uuid', async () => {
    // Prepare
    sim.addFault({
      api: 'scan',
      method: 'POST',
      fault: { type: 'status', status: 200, body: '{"ok":true}' },
    });

    // Act
    const error = await rejectionOf(client.startScan('nouuid.example.com'));

    // Assess
    expect(error).toBeInstanceOf(VendorResponseError);
    expect(error.message).toMatch(/scan\.startScan.*no uuid/);
  });

  it('throws VendorResponseError when the start answer carries something that is not a UUID', async () => {
    // Prepare
    sim.addFault({
      api: 'scan',
      method: 'POST',
      fault: { type: 'status', status: 200, body: '{"uuid":"42"}' },
    });

    // Act
    const error = await rejectionOf(client.startScan('baduuid.example.com'));

    // Assess
    expect(error).toBeInstanceOf(VendorResponseError);
  });

  it('accepts the uuid under scan_uuid or id', async () => {
    // Prepare
    const id = '0b56a9df-50fa-44ae-87d7-c51248d4d9d5';
    sim.addFault({
      api: 'scan',
      method: 'POST',
      fault: { type: 'status', status: 201, body: `{"id":"${id}"}` },
    });

    // Act
    const started = await client.startScan('altid.example.com');

    // Assess
    expect(started.uuid).toBe(id);
  });

  it('keeps the raw text of a malformed list answer instead of failing', async () => {
    // Prepare
    sim.addFault({ api: 'scan', path: '/scans', fault: { type: 'malformed-json' } });

    // Act
    const listed = await client.listScans();

    // Assess
    expect(listed.scans).toEqual([]);
    expect(typeof listed.raw).toBe('string');
  });

  it('digests the same report identically on two independent fetches', async () => {
    // Prepare
    const { uuid } = await client.startScan('twice.example.com');
    await client.getStatus(uuid);

    // Act
    const first = await digestStream((await client.getOutput(parseOutputName('report'), uuid)).body);
    const second = await digestStream((await client.getOutput(parseOutputName('report'), uuid)).body);

    // Assess
    expect(first).toEqual(second);
  });
});
