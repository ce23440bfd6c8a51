/**
 * `npm start -- rotate` in-process (`main(argv)`): the rotation against the built-in simulator with
 * the Secrets Manager stand-in over loopback, the same against an endpoint given in
 * AWS_ENDPOINT_URL_SECRETS_MANAGER, and the refusal to rotate a real vendor's key into memory; and
 * what it says while the vendor is slow, with the waits as defined (the lines it prints are the
 * same in a process of its own: which stream gets what and the exit codes the shell sees are
 * test/local/cli-process.test.ts's).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSecretsManagerServer } from '../../local/services/secrets-manager/server.ts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import { filesUnder, IAM_EVALUATED_CLEAN, runCli } from './cli-run.ts';

const FULL_KEY = /sk_sim_[0-9a-f]{32}/;
const DEFAULT_SECRET = 'security-pipeline/vendor-org-key';

let outDir: string;
beforeEach(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'rotate-cli-'));
});
afterEach(async () => {
  await rm(outDir, { recursive: true, force: true });
});

/** The variables that point the CLI's Secrets Manager client at `endpoint`. */
function usingStandIn(endpoint: { url: string }): Record<string, string> {
  return {
    AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoint.url,
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_REGION: 'eu-west-1',
  };
}

async function everythingWritten(): Promise<string> {
  const files = await filesUnder(outDir);
  const texts = await Promise.all(files.map((file) => readFile(join(outDir, file), 'utf8')));
  return texts.join('\n');
}

describe('npm start -- rotate', () => {
  it('rotates the simulator key into the stand-in, prints fingerprints only, and a scan with the new key succeeds', async () => {
    const run = await runCli(['rotate', '--out', outDir]);

    expect(run.stderr).toBe('');
    expect(run).toExitWith(0);
    expect(run.stdout).toMatch(IAM_EVALUATED_CLEAN);
    const before = /Before: key (sha256:[0-9a-f]{12}) \((key_\w+)\) created (\S+)/.exec(run.stdout);
    const after = /After: {2}key (sha256:[0-9a-f]{12}) \((key_\w+)\) created (\S+)/.exec(run.stdout);
    expect(before).not.toBeNull();
    expect(after).not.toBeNull();
    expect(after?.[1]).not.toBe(before?.[1]);
    expect(after?.[2]).not.toBe(before?.[2]);
    // Not even a prefix of a key: nothing that looks like one appears.
    expect(run.stdout).not.toMatch(/sk_sim_/);
    expect(Date.parse(after?.[3] ?? '')).toBeGreaterThanOrEqual(Date.parse(before?.[3] ?? ''));
    for (const step of [
      'createSecret: rotated',
      'setSecret: nothing-to-set',
      'testSecret: pending-key-works',
      'finishSecret: finished',
    ]) {
      expect(run.stdout).toContain(step);
    }
    expect(run.stdout).toMatch(/Scan of example\.com with the rotated key: succeeded \(.*manifest\.json\)/);
    const recordPath = /Record: (\S+)/.exec(run.stdout)?.[1] ?? '';
    const record = JSON.parse(await readFile(recordPath, 'utf8'));
    expect(record.steps).toHaveLength(4);
    expect(record.after.versionId).toBe(record.token);
    expect(record.event).toMatchObject({
      versionId: record.token,
      secretArn: expect.stringContaining('secret:'),
    });
    expect(record.scan.state).toBe('succeeded');
    expect(run.stdout).not.toMatch(FULL_KEY);
    expect(await everythingWritten()).not.toMatch(FULL_KEY);
  });

  it('uses the Secrets Manager at AWS_ENDPOINT_URL_SECRETS_MANAGER, leaving the new key current there', async () => {
    const endpoint = await startSecretsManagerServer();
    try {
      const run = await runCli(['rotate', '--out', outDir], {
        ...usingStandIn(endpoint),
        ROTATION_SECRET_ID: 'team/vendor-key',
      });

      expect(run.stderr).toBe('');
      expect(run).toExitWith(0);
      expect(run.stdout).toContain(`Secrets: Secrets Manager at ${endpoint.url}`);
      const operations = endpoint.store.calls.map((call) => call.operation);
      expect(operations).toEqual(
        expect.arrayContaining([
          'CreateSecret',
          'RotateSecret',
          'PutSecretValue',
          'UpdateSecretVersionStage',
        ]),
      );
      const stages = Object.values(endpoint.store.stagesOf('team/vendor-key')).flat();
      expect(stages.filter((stage) => stage === 'AWSCURRENT')).toHaveLength(1);
      expect(stages).toContain('AWSPREVIOUS');
      expect(stages).not.toContain('AWSPENDING');
      expect(JSON.parse(endpoint.store.valueAt('team/vendor-key', 'AWSCURRENT') ?? '{}').apiKey).toMatch(
        FULL_KEY,
      );
    } finally {
      await endpoint.close();
    }
  });

  it('a vendor whose key info names the key by itself: neither key is printed or written, before or after', async () => {
    // Prepare: GET …/api/key answers `key_id: <the key it was sent>`.
    const vendor = await startVendorSimulator({ pollsToFinish: 0 });
    const endpoint = await startSecretsManagerServer();
    vendor.addFault({
      api: 'keys',
      method: 'GET',
      path: /\/api\/key$/,
      times: 1_000,
      fault: { type: 'key-echo', into: 'key-id' },
    });
    const oldKey = vendor.apiKey;
    try {
      // Act
      const run = await runCli(['rotate', '--out', outDir], {
        ...usingStandIn(endpoint),
        SCAN_API_URL: vendor.url,
        VENDOR_API_KEY: oldKey,
        ORG_UUID: vendor.orgUuid,
      });

      // Assess
      expect(run).toExitWith(0);
      expect(vendor.apiKey).not.toBe(oldKey);
      expect(run.stdout).toMatch(/Before: key sha256:[0-9a-f]{12} \(\[REDACTED\]\)/);
      expect(run.stdout).toMatch(/After: {2}key sha256:[0-9a-f]{12} \(\[REDACTED\]\)/);
      for (const key of [oldKey, vendor.apiKey]) {
        expect(run.stdout).not.toContain(key);
        expect(await everythingWritten()).not.toContain(key);
      }
    } finally {
      await Promise.all([vendor.close(), endpoint.close()]);
    }
  });

  it("refuses (exit 2) to rotate a real vendor's key into the in-memory stand-in, before any rotate", async () => {
    const vendor = await startVendorSimulator({ pollsToFinish: 0 });
    try {
      const run = await runCli(['rotate', '--out', outDir], {
        SCAN_API_URL: vendor.url,
        VENDOR_API_KEY: vendor.apiKey,
        ORG_UUID: vendor.orgUuid,
      });

      expect(run).toExitWith(2);
      expect(run.stderr).toMatch(/would lose the new key.*AWS_ENDPOINT_URL_SECRETS_MANAGER/);
      expect(vendor.requestCount('POST /orgs/{org_uuid}/api/key/rotate')).toBe(0);
    } finally {
      await vendor.close();
    }
  });

  // Where the key sits in each shape is the rotation function's to find, held shape by shape by
  // test/rotation/answer-shapes.test.ts; here, what the CLI adds (the flag, the check scan with the
  // new key, nothing of it printed or written) for a JSON answer and a text one.
  it.each(['json-string', 'plain-text'])(
    '--fault rotate-answer=%s: the working key ends in AWSCURRENT and the scan with it succeeds',
    async (shape) => {
      const endpoint = await startSecretsManagerServer();
      try {
        const run = await runCli(['rotate', '--out', outDir, '--fault', `rotate-answer=${shape}`], {
          ...usingStandIn(endpoint),
        });

        expect(run.stderr).toBe('');
        expect(run).toExitWith(0);
        expect(run.stdout).toContain('finishSecret: finished');
        expect(run.stdout).toMatch(/Scan of example\.com with the rotated key: succeeded/);
        const current = JSON.parse(endpoint.store.valueAt(DEFAULT_SECRET, 'AWSCURRENT') ?? '{}');
        expect(current.apiKey).toMatch(FULL_KEY);
        expect(current.rotateAnswer.body).toContain(current.apiKey);
        expect(run.stdout).not.toMatch(FULL_KEY);
        expect(await everythingWritten()).not.toMatch(FULL_KEY);
      } finally {
        await endpoint.close();
      }
    },
  );

  it('--fault rotate-answer=no-key: ends in RotationResponseLost (exit 1) with the raw answer kept', async () => {
    const endpoint = await startSecretsManagerServer();
    try {
      const run = await runCli(
        ['rotate', '--out', outDir, '--fault', 'rotate-answer=no-key', '--propagation-seconds', '1'],
        {
          ...usingStandIn(endpoint),
        },
      );

      expect(run).toExitWith(1);
      expect(run.stdout).toContain('Propagation window: 1 s');
      expect(run.stdout).toMatch(/failed: RotationResponseLost: .*1 s propagation window.*ROTATION-ANSWER/);
      // AWSPENDING is written only with a key that works; the answer is kept in its own version.
      expect(endpoint.store.valueAt(DEFAULT_SECRET, 'AWSPENDING')).toBeUndefined();
      const kept = JSON.parse(endpoint.store.valueAt(DEFAULT_SECRET, 'ROTATION-ANSWER') ?? '{}');
      expect(JSON.parse(kept.rotateAnswer.body)).toMatchObject({ key_id: expect.any(String) });
      const recordPath = /Record: (\S+)/.exec(run.stdout)?.[1] ?? '';
      expect(JSON.parse(await readFile(recordPath, 'utf8'))).toMatchObject({
        error: 'RotationResponseLost',
        rotateAnswerFault: { shape: 'no-key' },
      });
      expect(await everythingWritten()).not.toMatch(FULL_KEY);
    } finally {
      await endpoint.close();
    }
  });

  it('refuses (exit 2) a --check-domain the scan would refuse, before anything is rotated', async () => {
    const vendor = await startVendorSimulator({ pollsToFinish: 0 });
    const endpoint = await startSecretsManagerServer();
    try {
      const run = await runCli(['rotate', '--out', outDir, '--check-domain', 'foo.test'], {
        SCAN_API_URL: vendor.url,
        VENDOR_API_KEY: vendor.apiKey,
        ORG_UUID: vendor.orgUuid,
        ...usingStandIn(endpoint),
      });

      expect(run).toExitWith(2);
      expect(run.stderr).toMatch(/^error: Invalid --check-domain: .*\.test.*; nothing was rotated\n$/);
      expect(vendor.requestCount('POST /orgs/{org_uuid}/api/key/rotate')).toBe(0);
      expect(endpoint.store.calls).toEqual([]);
      expect(await filesUnder(outDir)).toEqual([]);
    } finally {
      await endpoint.close();
      await vendor.close();
    }
  });

  it('refuses (exit 2) a --fault it does not know, naming the shapes', async () => {
    const run = await runCli(['rotate', '--out', outDir, '--fault', 'rotate-answer=xml']);

    expect(run).toExitWith(2);
    expect(run.stderr).toMatch(/--fault rotate-answer=xml: expected rotate-answer=<shape>.*nested/);
  });

  it('--fault rotate-delay=2 with rotate-answer=decoy-first,decoys=30: the key found behind 30 decoys once it works', async () => {
    const endpoint = await startSecretsManagerServer();
    try {
      const run = await runCli(
        [
          'rotate',
          '--out',
          outDir,
          '--fault',
          'rotate-answer=decoy-first,decoys=30',
          '--fault',
          'rotate-delay=2',
          '--propagation-seconds',
          '10',
        ],
        {
          ...usingStandIn(endpoint),
        },
      );

      expect(run.stderr).toBe('');
      expect(run).toExitWith(0);
      expect(run.stdout).toContain('createSecret: rotated');
      expect(run.stdout).toMatch(/Scan of example\.com with the rotated key: succeeded/);
      expect(run.stdout).toMatch(/Simulator faults spent by this run: rotate-answer on POST/);
      const current = JSON.parse(endpoint.store.valueAt(DEFAULT_SECRET, 'AWSCURRENT') ?? '{}');
      expect(current.apiKey).toMatch(FULL_KEY);
      expect(JSON.parse(current.rotateAnswer.body).revoked).toHaveLength(29);
      expect(await everythingWritten()).not.toMatch(FULL_KEY);
    } finally {
      await endpoint.close();
    }
  });

  it.each([
    ['rotate-answer=slow,pace=3', /unknown or empty "pace=3"/],
    ['rotate-answer=huge,key-at=middle', /keyAt must be 'start' or 'end'/],
    ['rotate-delay=soon', /expected rotate-answer=<shape>.*rotate-delay=<seconds>/],
  ])('refuses (exit 2) --fault %s before anything is rotated', async (spec, message) => {
    const run = await runCli(['rotate', '--out', outDir, '--fault', spec]);

    expect(run).toExitWith(2);
    expect(run.stderr).toMatch(message);
  });
});

describe('npm start -- rotate while the vendor is slow', () => {
  it('says what it waits for while the answer trickles in and while the new key is probed, and how long', async () => {
    // The answer takes 8 s to arrive; the new key is refused until 12 s after the rotate. The
    // waits and probe pauses are the real ones: what is printed is about them.
    const run = await runCli(
      [
        'rotate',
        '--out',
        outDir,
        '--fault',
        'rotate-answer=slow,seconds=8',
        '--fault',
        'rotate-delay=12',
        '--propagation-seconds',
        '60',
      ],
      {},
      { timing: 'as-defined' },
    );

    expect(run).toExitWith(0);
    const lines = run.stdout.split('\n');
    const at = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line));
    const answer = at(/^ {2}createSecret: waiting for the vendor's answer to the rotate$/);
    const stillAnswer =
      /^ {2}createSecret: still waiting for the vendor's answer to the rotate \((\d+)s\)$/m.exec(run.stdout);
    const probing = at(
      /^ {2}createSecret: waiting for the vendor to accept the new key, probing it within the 60 s propagation window$/,
    );
    const rotated = at(/^ {2}createSecret: rotated$/);
    expect(answer, run.stdout).toBeGreaterThan(-1);
    // Said after the quiet threshold, then every few seconds with the time so far.
    expect(Number(stillAnswer?.[1])).toBeGreaterThanOrEqual(5);
    expect(probing, run.stdout).toBeGreaterThan(answer);
    expect(rotated).toBeGreaterThan(probing);
    // Nothing more is said of a wait once it is over.
    expect(run.stdout.slice(run.stdout.indexOf('createSecret: rotated'))).not.toMatch(
      /createSecret: (still )?waiting/,
    );
  }, 180_000);
});
