/**
 * Injected latency of the local stand-ins: the embedded S3 and the vendor simulator answer as
 * slowly as S3 and a vendor do from Lambda when asked to, and at loopback speed otherwise.
 */
import { ListBucketsCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { parseLatency } from '#local/services/latency';
import { startS3rver } from '#local/services/s3/embedded-s3';
import { startVendorSimulator } from '#local/simulator/index';

describe('parseLatency', () => {
  it.each([
    ['25ms', { meanMs: 25, jitterMs: 0 }],
    ['0.03s', { meanMs: 30, jitterMs: 0 }],
    ['25ms,10ms', { meanMs: 25, jitterMs: 10 }],
    ['40', { meanMs: 40, jitterMs: 0 }],
  ])('reads %s', (text, latency) => {
    expect(parseLatency(text, '--s3-latency')).toEqual(latency);
  });

  it.each([
    ['fast', /--s3-latency must be a duration such as 25ms/],
    ['25ms,30ms', /--s3-latency's jitter \(30 ms\) must not exceed its latency \(25 ms\)/],
    ['1min', /--s3-latency must be a duration/],
    ['20s', /--s3-latency must be at most 10s/],
  ])('refuses %s, naming the flag', (text, message) => {
    expect(() => parseLatency(text, '--s3-latency')).toThrow(message);
  });
});

describe('injected latency', () => {
  it('delays and counts every embedded-S3 request', async () => {
    const s3 = await startS3rver({ buckets: ['latency'], latency: { meanMs: 60 } });
    try {
      const started = performance.now();
      for (let i = 0; i < 3; i += 1) await s3.client.send(new ListBucketsCommand({}));
      expect(performance.now() - started).toBeGreaterThanOrEqual(3 * 60 - 5);
      expect(s3.requests.count).toBe(3);
    } finally {
      await s3.close();
    }
  });

  it('delays every vendor-simulator answer', async () => {
    const sim = await startVendorSimulator({ latency: { meanMs: 80 } });
    try {
      const started = performance.now();
      const response = await fetch(`${sim.url}/scans`, {
        headers: { authorization: `Bearer ${sim.apiKey}` },
      });
      await response.arrayBuffer();
      expect(performance.now() - started).toBeGreaterThanOrEqual(75);
    } finally {
      await sim.close();
    }
  });
});
