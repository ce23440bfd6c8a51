import { beforeAll, describe, expect, it } from 'vitest';
import { declarationOf, HANDLERS, type HandlerFile } from '../../lambdas/registry.ts';
import {
  actionsAllowed,
  functionFor,
  grantsOf,
  logicalIdOfType,
  resourcesAllowed,
  type Synthesized,
  synth,
} from '../kit/synth.ts';

/** Every handler the workflows register: a new workflow's functions are checked without a line here. */
const HANDLER_FILES = Object.keys(HANDLERS) as HandlerFile[];

let synthesized: Synthesized;
let resultsArn: string;
let inputArn: string;

beforeAll(() => {
  synthesized = synth({
    scan: {
      // Every registered handler deployed, delete-scan included.
      deleteAtVendorAfterManifest: true,
      statusVocabulary: { pending: ['queued'], running: ['busy'], succeeded: ['done'], failed: ['error'] },
    },
  });
  resultsArn = `<GetAtt:${logicalIdOfType(synthesized, 'AWS::S3::Bucket', 'StorageResults')}.Arn>`;
  inputArn = `<GetAtt:${logicalIdOfType(synthesized, 'AWS::S3::Bucket', 'StorageInput')}.Arn>`;
});

/** Every object-level S3 resource the function's role may write to. */
function writableObjects(handler: string): string[] {
  const grants = grantsOf(synthesized, functionFor(synthesized, handler).roleLogicalId);
  return [...new Set(resourcesAllowed(grants, 's3:PutObject'))];
}

describe('PipelineFunction defaults', () => {
  it.each(HANDLER_FILES)(
    '%s runs Node.js 24 on arm64 with tracing, explicit memory and timeout',
    (handler) => {
      const { properties, environment } = functionFor(synthesized, handler);
      expect(properties).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        TracingConfig: { Mode: 'Active' },
        Handler: 'index.handler',
      });
      expect(properties.MemorySize).toEqual(expect.any(Number));
      expect(properties.Timeout).toEqual(expect.any(Number));
      // Source maps are off by default (lambdaSourceMaps), so Node.js runs without the flag.
      expect(environment).not.toHaveProperty('NODE_OPTIONS');
      expect(environment).toMatchObject({
        // The pipeline's name: the stack's, as the stack holds one pipeline.
        POWERTOOLS_SERVICE_NAME: 'SecurityPipeline',
        POWERTOOLS_LOG_LEVEL: 'INFO',
      });
    },
  );

  it.each(HANDLER_FILES)('%s logs to its own log group with the configured retention', (handler) => {
    const { properties } = functionFor(synthesized, handler);
    const logGroupId = (properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
    expect(synthesized.json.Resources[logGroupId]).toMatchObject({
      Type: 'AWS::Logs::LogGroup',
      Properties: { RetentionInDays: 90 },
    });
  });

  it('uses no AWS managed policy: each role may write only to its own log group', () => {
    for (const handler of HANDLER_FILES) {
      const fn = functionFor(synthesized, handler);
      const role = synthesized.json.Resources[fn.roleLogicalId];
      expect(role?.Properties).not.toHaveProperty('ManagedPolicyArns');
      const logGroupId = (fn.properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
      expect(resourcesAllowed(grantsOf(synthesized, fn.roleLogicalId), 'logs:PutLogEvents')).toEqual([
        `<GetAtt:${logGroupId}.Arn>`,
      ]);
    }
  });

  it('sizes the streaming function at 1024 MB, the summaries at 2048 MB, and 15/5 minutes', () => {
    expect(functionFor(synthesized, 'fetch-scan-output').properties).toMatchObject({
      MemorySize: 1024,
      Timeout: 900,
    });
    // Summaries of 100,000 results peaked above half of 1024 MB in the scale bench.
    expect(functionFor(synthesized, 'write-list-summary').properties).toMatchObject({
      MemorySize: 2048,
      Timeout: 300,
    });
    expect(functionFor(synthesized, 'write-watchlist-summary').properties).toMatchObject({
      MemorySize: 2048,
    });
    expect(functionFor(synthesized, 'start-scan').properties).toMatchObject({ MemorySize: 512 });
  });

  it('applies the configured log retention', () => {
    const shortLogs = synth({ logRetentionDays: 14 });
    const fn = functionFor(shortLogs, 'poll-scan-status');
    const logGroupId = (fn.properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
    expect(shortLogs.json.Resources[logGroupId]?.Properties?.RetentionInDays).toBe(14);
  });
});

describe('handler environment (docs/contracts.md)', () => {
  it('gives the scan steps the vendor URL, poll settings and status vocabulary', () => {
    for (const handler of ['start-scan', 'poll-scan-status', 'fetch-scan-output']) {
      expect(functionFor(synthesized, handler).environment).toMatchObject({
        SCAN_API_URL: 'https://vendor.example.com',
        POLL_MIN_WAIT_SECONDS: '60',
        POLL_MAX_WAIT_SECONDS: '300',
        POLL_GROWTH_FACTOR: '1.25',
        SCAN_DEADLINE_SECONDS: '86400',
        STATUS_VOCABULARY: JSON.stringify({
          pending: ['queued'],
          running: ['busy'],
          succeeded: ['done'],
          failed: ['error'],
        }),
        RESULTS_BUCKET: { Ref: expect.stringMatching(/^StorageResults/) },
      });
    }
  });

  it('gives the list steps both buckets and the accepted suffixes', () => {
    expect(functionFor(synthesized, 'prepare-domain-list').environment).toMatchObject({
      INPUT_BUCKET: { Ref: expect.stringMatching(/^StorageInput/) },
      RESULTS_BUCKET: { Ref: expect.stringMatching(/^StorageResults/) },
      INTAKE_SUFFIXES: '.txt,.csv',
    });
    expect(functionFor(synthesized, 'write-list-summary').environment).toMatchObject({
      RESULTS_BUCKET: { Ref: expect.stringMatching(/^StorageResults/) },
    });
  });

  it('keeps the caller environment and the defaults together', () => {
    const env = functionFor(synthesized, 'prepare-domain-list').environment;
    expect(Object.keys(env)).toEqual(
      expect.arrayContaining([
        'POWERTOOLS_SERVICE_NAME',
        'POWERTOOLS_LOG_LEVEL',
        'INTAKE_SUFFIXES',
        'INPUT_BUCKET',
      ]),
    );
  });
});

describe('least privilege', () => {
  it('lets the poll function read the scan secret and touch no S3 object outside the waiting records', () => {
    const fn = functionFor(synthesized, 'poll-scan-status');
    const grants = grantsOf(synthesized, fn.roleLogicalId);
    expect(resourcesAllowed(grants, 'secretsmanager:GetSecretValue')).toHaveLength(1);
    // The early-end watcher it also runs reads, marks and removes waiting records, nothing else.
    for (const action of actionsAllowed(grants).filter((a) => a.startsWith('s3:') && a !== 's3:ListBucket')) {
      expect(resourcesAllowed(grants, action), action).toEqual([
        expect.stringMatching(/\/scans\/waiting\/\*$/),
      ]);
    }
    expect(fn.environment).toHaveProperty('RESULTS_BUCKET');
  });

  it('gives record-failure and write-manifest PutObject under scans/ only (the manifest also lists it), no secret', () => {
    for (const [handler, actions] of [
      ['record-scan-failure', ['s3:PutObject']],
      // GetObject: the learned scan durations only (below).
      ['write-scan-manifest', ['s3:GetObject', 's3:ListBucket', 's3:PutObject']],
    ] as const) {
      const grants = grantsOf(synthesized, functionFor(synthesized, handler).roleLogicalId);
      expect(actionsAllowed(grants).filter((a) => a.startsWith('secretsmanager:'))).toEqual([]);
      expect(
        actionsAllowed(grants)
          .filter((a) => a.startsWith('s3:'))
          .sort(),
        handler,
      ).toEqual(actions);
      const learned = handler === 'write-scan-manifest' ? [`${resultsArn}/learned/*`] : [];
      expect(writableObjects(handler).sort()).toEqual([...learned, `${resultsArn}/scans/*`].sort());
    }
    const manifest = grantsOf(synthesized, functionFor(synthesized, 'write-scan-manifest').roleLogicalId);
    expect(resourcesAllowed(manifest, 's3:GetObject')).toEqual([`${resultsArn}/learned/*`]);
  });

  it('gives start-scan the secret and a read (and listing) of the learned scan durations only', () => {
    const grants = grantsOf(synthesized, functionFor(synthesized, 'start-scan').roleLogicalId);
    expect(
      actionsAllowed(grants)
        .filter((a) => a.startsWith('s3:'))
        .sort(),
    ).toEqual(['s3:GetObject', 's3:ListBucket']);
    expect(resourcesAllowed(grants, 's3:GetObject')).toEqual([`${resultsArn}/learned/*`]);
    expect(resourcesAllowed(grants, 'secretsmanager:GetSecretValue')).toHaveLength(1);
  });

  it('lets the fetch function stream, re-copy, find earlier verified outputs and clear its leftovers under scans/ and its staging prefix only', () => {
    const grants = grantsOf(synthesized, functionFor(synthesized, 'fetch-scan-output').roleLogicalId);
    const both = new Set([`${resultsArn}/scans/*`, `${resultsArn}/staging/scans/*`]);
    for (const action of ['s3:PutObject', 's3:AbortMultipartUpload', 's3:GetObject', 's3:DeleteObject']) {
      expect(new Set(resourcesAllowed(grants, action)), action).toEqual(both);
    }
    // Deleting a version, and reading one as a copy's source, only where uploads are staged: the
    // function that streams vendor downloads can never delete a verified output's history.
    for (const action of ['s3:GetObjectVersion', 's3:DeleteObjectVersion']) {
      expect(resourcesAllowed(grants, action), action).toEqual([`${resultsArn}/staging/scans/*`]);
    }
  });

  it('lets the list functions touch lists/ only, and prepare read the input bucket', () => {
    expect(writableObjects('prepare-domain-list')).toEqual([`${resultsArn}/lists/*`]);
    expect(writableObjects('write-list-summary')).toEqual([`${resultsArn}/lists/*`]);
    const prepare = grantsOf(synthesized, functionFor(synthesized, 'prepare-domain-list').roleLogicalId);
    expect(resourcesAllowed(prepare, 's3:GetObject')).toEqual([`${inputArn}/*`]);
    const summary = grantsOf(synthesized, functionFor(synthesized, 'write-list-summary').roleLogicalId);
    expect(resourcesAllowed(summary, 's3:GetObject')).toEqual([`${resultsArn}/lists/*`]);
  });

  it('lets no function delete an object unless its registry entry declares it (the fetch step, breach claims)', () => {
    const declaresDelete = (handler: HandlerFile) =>
      declarationOf(handler).s3.some((use) => use.actions.some((action) => action.startsWith('Delete')));
    expect(HANDLER_FILES.filter(declaresDelete)).toContain('fetch-scan-output');
    for (const handler of HANDLER_FILES.filter((h) => !declaresDelete(h))) {
      const grants = grantsOf(synthesized, functionFor(synthesized, handler).roleLogicalId);
      expect(
        actionsAllowed(grants).filter((a) => a.startsWith('s3:Delete') || a === 's3:*'),
        handler,
      ).toEqual([]);
    }
  });
});
