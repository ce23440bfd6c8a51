import { type ChildProcess, spawn } from 'node:child_process';
import { describe, expect, it, vi } from 'vitest';
import { startVendorSimulator } from '#local/simulator/index';
import { probe, rawRequest } from '../kit/http.ts';
import { apiKeyHeader, bearer, finishedScan } from '../kit/simulator.ts';

describe('starting and closing', () => {
  it('listens on an ephemeral loopback port with a URL without trailing slash, and a separate storage origin', async () => {
    // Act
    const sim = await startVendorSimulator();

    // Assess
    try {
      expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(sim.storageUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(sim.storageUrl).not.toBe(sim.url);
      expect(sim.apiKey).toMatch(/^sk_sim_[0-9a-f]{32}$/);
      expect(sim.orgUuid).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await sim.close();
    }
  });

  it('closes promptly while a request hangs, and the hanging client sees the connection end', async () => {
    // Prepare
    const sim = await startVendorSimulator();
    sim.addFault({ fault: { type: 'hang' } });
    const hanging = probe(`${sim.url}/stats`, bearer(sim.apiKey));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = performance.now();

    // Act
    await sim.close();

    // Assess
    // Far below the fault's wait (60 s, or a keep-alive's idle time), with room for a loaded machine.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect((await hanging).status).toBeUndefined();
  });

  it('closes promptly during a long latency fault', async () => {
    // Prepare
    const sim = await startVendorSimulator();
    sim.addFault({ fault: { type: 'latency', ms: 60_000 } });
    const waiting = probe(`${sim.url}/stats`, bearer(sim.apiKey));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = performance.now();

    // Act
    await sim.close();

    // Assess
    // Far below the fault's wait (60 s, or a keep-alive's idle time), with room for a loaded machine.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect((await waiting).status).toBeUndefined();
  });

  it('can be closed twice', async () => {
    // Prepare
    const sim = await startVendorSimulator();

    // Act
    await sim.close();

    // Assess
    await expect(sim.close()).resolves.toBeUndefined();
  });

  it('keeps keep-alive connections from holding close() up', async () => {
    // Prepare
    const sim = await startVendorSimulator({ pollsToFinish: 0 });
    await finishedScan(sim, 'keepalive.example.com');
    const started = performance.now();

    // Act
    await sim.close();

    // Assess
    // Half of Node's 5 s keep-alive idle time, which close() would otherwise wait out.
    expect(performance.now() - started).toBeLessThan(2_500);
  });

  it.each([
    ['a negative pollsToFinish', { pollsToFinish: -1 }],
    ['an apiKey with spaces', { apiKey: 'not a key' }],
    ['an orgUuid with a slash', { orgUuid: 'a/b' }],
    ['a zero URL lifetime', { downloadUrlTtlSeconds: 0 }],
  ])('refuses to start with %s', async (_, options) => {
    await expect(startVendorSimulator(options)).rejects.toThrow(TypeError);
  });
});

describe('verbose logging', () => {
  it('logs one line per request with route template, status and time, and no key or personal data', async () => {
    // Prepare
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const sim = await startVendorSimulator({ verbose: true, pollsToFinish: 0 });
    try {
      // Act
      await finishedScan(sim, 'verbose.example.com');
      const recon = await fetch(`${sim.url}/recon`, {
        method: 'POST',
        headers: { ...apiKeyHeader(sim.apiKey), 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Private Person', emails: ['private.person@corp.example'] }),
      });
      const { output } = (await recon.json()) as { output: string };
      const hop = await rawRequest(`${sim.url}/files/${encodeURIComponent(output)}.zip`, {
        headers: apiKeyHeader(sim.apiKey),
      });
      await rawRequest(String(hop.headers.location));
      await new Promise((resolve) => setTimeout(resolve, 20));

      // Assess
      const log = lines.join('');
      expect(lines.length).toBeGreaterThanOrEqual(5);
      expect(log).toMatch(/^\[simulator\] POST \/scan 200 \d+\.\dms$/m);
      expect(log).toMatch(/^\[simulator\] POST \/recon 200 /m);
      expect(log).toMatch(/^\[storage\] GET \/reports\/\{file_name\} 200 /m);
      for (const secret of [sim.apiKey, 'private', 'Private', output]) expect(log).not.toContain(secret);
    } finally {
      spy.mockRestore();
      await sim.close();
    }
  });
});

describe('throughput', () => {
  // 250 scans by 20 clients at once: each client's requests interleave with the others' from the
  // first scan on, so the counts and statuses are kept under concurrency from the start; 1,000 took
  // four times the CPU (about 3 s) to show the same.
  it('pushes 250 instant scans through start, status and report', async () => {
    // Prepare
    const sim = await startVendorSimulator({
      pollsToFinish: 0,
      reportBytes: 16 * 1024,
      debugBytes: 4 * 1024,
    });
    try {
      const domains = Array.from({ length: 250 }, (_, i) => `d${i}.example.com`);

      // Act
      const workers = Array.from({ length: 20 }, async (_, w) => {
        for (let i = w; i < domains.length; i += 20) {
          const uuid = await finishedScan(sim, domains[i] as string, 1);
          const res = await fetch(`${sim.url}/report/${uuid}`, { headers: bearer(sim.apiKey) });
          await res.arrayBuffer();
        }
      });
      await Promise.all(workers);
      const stats = await (await fetch(`${sim.url}/stats`, { headers: bearer(sim.apiKey) })).json();

      // Assess
      expect(stats).toEqual({
        total: 250,
        by_status: { queued: 0, running: 0, completed: 250, failed: 0 },
      });
      expect(sim.requestCount('GET /report/{uuid}')).toBe(250);
    } finally {
      await sim.close();
    }
  });
});

function waitForOutput(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no match for ${pattern} in: ${out}`)), timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (pattern.test(out)) {
        clearTimeout(timer);
        resolve(out);
      }
    });
    child.on('exit', () => {
      clearTimeout(timer);
      reject(new Error(`exited early: ${out}`));
    });
  });
}

describe('npm run simulator (main.ts)', () => {
  it('prints the URLs, key, org and a curl example, serves requests, and exits cleanly on SIGTERM', async () => {
    // Prepare: as `npm run simulator` runs it (package.json: node --import tsx), so SIGTERM reaches
    // main.ts itself. tsx's CLI would relay it from a parent process and exit 143 on its own when
    // the child took over 30 ms to acknowledge (seen once on the loaded machine).
    const key = 'sk_sim_feedfacefeedfacefeedfacefeedface';
    const org = '11111111-2222-4333-8444-555555555555';
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'local/simulator/main.ts', '--key', key, '--org', org, '--polls', '0'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      // Act
      const out = await waitForOutput(child, /Ctrl-C/, 20_000);
      const url = /API base URL\s+(\S+)/.exec(out)?.[1] ?? '';
      const scan = await fetch(`${url}/scan?domain=cli.example.com`, { headers: bearer(key) });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      child.kill('SIGTERM');

      // Assess
      expect(out).toMatch(/Storage URL\s+http:\/\/127\.0\.0\.1:\d+/);
      expect(out).toContain(key);
      expect(out).toContain(org);
      expect(out).toContain(
        'curl -s -X POST -H "Authorization: Bearer $KEY" -d domain=example.com $URL/scan',
      );
      expect(scan.status).toBe(200);
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('rejects a bad --port with a usage error', async () => {
    // Act
    const child = spawn(process.execPath, ['--import', 'tsx', 'local/simulator/main.ts', '--port', 'abc'], {
      stdio: 'pipe',
    });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));

    // Assess
    expect(code).not.toBe(0);
    expect(err).toMatch(/--port must be an integer/);
  });
});
