/**
 * `GET /scans` answers with every scan the vendor keeps (the seed shows no paging), so at the
 * documented maximum (100,000 domains, one scan each) it is past the 8 MiB every other answer may
 * be. The listing has its own cap, SCAN_LISTING_MAX_BYTES.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VendorJsonLimitError } from '#lambdas/platform/errors';
import { SCAN_LISTING_MAX_BYTES, ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import { MAX_TEXT_BYTES } from '#lambdas/vendor-api/transport/body';
import { JSON_LIMITS, parseJsonBody, rawOf } from '#lambdas/vendor-api/transport/json';
import type { VendorSimulator } from '#local/simulator/types';
import { startSimulator } from '../../kit/simulator.ts';
import { testSettings } from '../transport/helpers.ts';

const DOMAINS = 100_000;

let sim: VendorSimulator;
let client: ScanClient;

beforeAll(async () => {
  sim = await startSimulator({ pollsToFinish: 0 });
  sim.seedFinishedScans(Array.from({ length: DOMAINS }, (_, i) => `host-${i}.max-list.example.com`));
  client = new ScanClient(testSettings(sim));
});

afterAll(async () => {
  await client.close();
  await sim.close();
});

describe('the scan listing at the documented maximum', () => {
  it('reads a listing of 100,000 scans, past the 8 MiB of other answers, whole', async () => {
    // Act
    const listed = await client.listScans();

    // Assess: every scan, and the answer really was past the ordinary cap.
    expect(listed.scans).toHaveLength(DOMAINS);
    expect(Buffer.byteLength(JSON.stringify(listed.raw))).toBeGreaterThan(MAX_TEXT_BYTES);
    expect(SCAN_LISTING_MAX_BYTES).toBeGreaterThan(MAX_TEXT_BYTES);
  });
});

describe('the listing cap', () => {
  it('refuses JSON past the cap it is given, naming the operation, and keeps the default elsewhere', () => {
    // Prepare
    const past = `"${'x'.repeat(64)}"`;

    // Act and assess
    expect(() => rawOf(past, 'scan.listScans', 32)).toThrow(VendorJsonLimitError);
    expect(() => rawOf(past, 'scan.listScans', 32)).toThrow(/scan\.listScans.*longer than 32 characters/);
    expect(parseJsonBody(past)).toMatchObject({ ok: true });
    expect(parseJsonBody(`"${'x'.repeat(JSON_LIMITS.maxChars)}"`)).toMatchObject({ ok: false });
  });
});
