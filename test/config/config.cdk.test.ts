/** The pipeline configuration: defaults, merging, and the vendor, poll, scan, intake and list settings. */
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PIPELINE_CONFIG } from '../../lib/config/defaults.ts';
import { pollEnvironment } from '../../lib/config/environment.ts';
import { loadPipelineConfig } from '../../lib/config/load.ts';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import { LOG_RETENTION_DAYS, VENDOR_URL_PLACEHOLDER } from '../../lib/config/schema.ts';
import { list, problemsOf } from './config-problems.ts';

describe('parsePipelineConfig: defaults and merging', () => {
  it('returns the documented defaults when nothing is configured', () => {
    // Act
    const config = parsePipelineConfig(undefined, 'none');

    // Assess
    expect(config).toEqual(DEFAULT_PIPELINE_CONFIG);
    expect(config.vendor.scanApiUrl).toBe(VENDOR_URL_PLACEHOLDER);
    expect(config.poll).toEqual({
      minWaitSeconds: 60,
      maxWaitSeconds: 300,
      growthFactor: 1.25,
      deadlineSeconds: 86_400,
    });
    expect(config.scan).toEqual({
      deleteAtVendorAfterManifest: false,
      maxConcurrency: 2500,
      maxOutputBytes: 1024 ** 3,
      maxDecodingRatio: 100,
      allowSpecialUseDomains: [],
      reconciliation: {
        enabled: true,
        schedule: 'rate(1 day)',
        matchWindowMinutes: 30,
        maxArchivesPerRun: 25,
        listFields: {},
        statsFields: {},
      },
    });
    expect(config.intake).toEqual({
      prefix: 'incoming/',
      suffixes: ['.txt', '.csv'],
      maxListBytes: 20 * 1024 * 1024,
    });
    expect(config.logRetentionDays).toBe(90);
    expect(config.removalPolicy).toBe('retain');
  });

  it('merges partial settings onto the defaults and defaults the keys and breach URLs to the scan URL', () => {
    // Act
    const config = parsePipelineConfig(
      { vendor: { scanApiUrl: 'https://scan.vendor.test' }, poll: { maxWaitSeconds: 600 } },
      'test',
    );

    // Assess
    expect(config.vendor).toEqual({
      scanApiUrl: 'https://scan.vendor.test',
      keysApiUrl: 'https://scan.vendor.test',
      breachApiUrl: 'https://scan.vendor.test',
      keys: 'single',
    });
    expect(config.poll).toEqual({ ...DEFAULT_PIPELINE_CONFIG.poll, maxWaitSeconds: 600 });
  });

  it('fills every omitted schedule setting with its default', () => {
    // Act
    const config = parsePipelineConfig(
      {
        domainLists: list,
        schedules: [{ name: 'nightly', expression: 'cron(0 2 * * ? *)', domainList: 'main' }],
      },
      'test',
    );

    // Assess
    expect(config.schedules).toEqual([
      {
        name: 'nightly',
        expression: 'cron(0 2 * * ? *)',
        domainList: 'main',
        timeZone: 'UTC',
        flexibleWindowMinutes: 15,
        maxRetryAttempts: 3,
        maxEventAgeSeconds: 3600,
        enabled: true,
      },
    ]);
  });

  it('accepts the example configuration file', () => {
    // Act
    const config = loadPipelineConfig({ pipelineConfigFile: 'config/pipeline.example.json' });

    // Assess
    expect(config.schedules.map((s) => s.name)).toEqual(['nightly-critical', 'weekly-marketing']);
    expect(config.vendor.scanApiUrl).not.toBe(VENDOR_URL_PLACEHOLDER);
  });

  it('offers exactly the retention values CDK RetentionDays accepts', () => {
    const cdkValues = Object.values(RetentionDays).filter((v): v is number => typeof v === 'number');
    expect([...LOG_RETENTION_DAYS].sort((a, b) => a - b)).toEqual([...cdkValues].sort((a, b) => a - b));
  });

  it('renders the poll settings as the handler environment variables', () => {
    expect(pollEnvironment(DEFAULT_PIPELINE_CONFIG.poll)).toEqual({
      POLL_MIN_WAIT_SECONDS: '60',
      POLL_MAX_WAIT_SECONDS: '300',
      POLL_GROWTH_FACTOR: '1.25',
      SCAN_DEADLINE_SECONDS: '86400',
    });
  });
});

describe('parsePipelineConfig: vendor', () => {
  it('rejects a plain-http URL to a remote host, naming the setting', () => {
    expect(problemsOf({ vendor: { scanApiUrl: 'http://vendor.example.net' } })).toContain(
      'pipeline.vendor.scanApiUrl must use https (http is allowed only for loopback hosts)',
    );
  });

  it('allows http for the loopback simulator', () => {
    const config = parsePipelineConfig({ vendor: { scanApiUrl: 'http://127.0.0.1:4010' } }, 'test');
    expect(config.vendor.breachApiUrl).toBe('http://127.0.0.1:4010');
  });

  it('rejects credentials in a URL and a URL that does not parse', () => {
    const message = problemsOf({
      vendor: { keysApiUrl: 'https://user:pw@vendor.example.net', breachApiUrl: 'not a url' },
    });
    expect(message).toContain('pipeline.vendor.keysApiUrl must not contain credentials');
    expect(message).toContain('pipeline.vendor.breachApiUrl must be an absolute URL');
  });

  it('rejects an org UUID that is not a UUID and an unknown key mode', () => {
    const message = problemsOf({ vendor: { orgUuid: 'org-1', keys: 'three' } });
    expect(message).toContain('pipeline.vendor.orgUuid must be a UUID');
    expect(message).toContain("pipeline.vendor.keys must be one of 'single', 'per-api'");
  });

  it('reports a misspelt setting instead of silently using the default', () => {
    expect(problemsOf({ vendor: { scanApiURL: 'https://x.test' } })).toContain(
      'pipeline.vendor.scanApiURL is not a known setting',
    );
  });
});

describe('parsePipelineConfig: poll loop', () => {
  it('rejects a maximum wait below the minimum, with both values', () => {
    expect(problemsOf({ poll: { minWaitSeconds: 15, maxWaitSeconds: 10 } })).toContain(
      'pipeline.poll.maxWaitSeconds must be >= pipeline.poll.minWaitSeconds (got 10 < 15)',
    );
  });

  it('rejects values outside their bounds', () => {
    const message = problemsOf({
      poll: { minWaitSeconds: 0, maxWaitSeconds: 7200, growthFactor: 5, deadlineSeconds: 0 },
    });
    expect(message).toContain('pipeline.poll.minWaitSeconds must be between 1 and 3600 (got 0)');
    expect(message).toContain('pipeline.poll.maxWaitSeconds must be between 1 and 3600 (got 7200)');
    expect(message).toContain('pipeline.poll.growthFactor must be between 1 and 4 (got 5)');
    expect(message).toContain('pipeline.poll.deadlineSeconds must be between 1 and 604800 (got 0)');
  });

  it('rejects a loop whose worst case would exhaust the execution history, naming the settings to change', () => {
    // Prepare: one poll a minute for a week is ~10,000 polls.
    const message = problemsOf({
      poll: { minWaitSeconds: 60, maxWaitSeconds: 60, deadlineSeconds: 604_800 },
    });

    // Assess
    expect(message).toMatch(
      /pipeline\.poll with pipeline\.poll\.minWaitSeconds \d+, .* makes a worst-case poll loop of \d+ polls/,
    );
    expect(message).toContain('pipeline.poll.maxWaitSeconds (60)');
    expect(message).toContain('pipeline.poll.deadlineSeconds (604800)');
  });

  it('accepts a week-long deadline when the waits grow to an hour', () => {
    const config = parsePipelineConfig({ poll: { maxWaitSeconds: 3600, deadlineSeconds: 604_800 } }, 'test');
    expect(config.poll.deadlineSeconds).toBe(604_800);
  });
});

describe('parsePipelineConfig: scan, intake and lists', () => {
  it('rejects a status word listed under two states', () => {
    const message = problemsOf({
      scan: {
        statusVocabulary: {
          pending: ['queued'],
          running: ['running'],
          succeeded: ['done'],
          failed: ['DONE'],
        },
      },
    });
    expect(message).toContain(
      'pipeline.scan.statusVocabulary.failed repeats "DONE", already listed under succeeded',
    );
  });

  it("rejects a concurrency outside 1..10,000 (a Distributed Map's most child executions at once)", () => {
    expect(problemsOf({ scan: { maxConcurrency: 0 } })).toContain(
      'pipeline.scan.maxConcurrency must be between 1 and 10000 (got 0)',
    );
    expect(problemsOf({ scan: { maxConcurrency: 10_001 } })).toContain(
      'pipeline.scan.maxConcurrency must be between 1 and 10000 (got 10001)',
    );
    expect(parsePipelineConfig({ scan: { maxConcurrency: 10_000 } }, 'test').scan.maxConcurrency).toBe(
      10_000,
    );
  });

  it('rejects an intake prefix with a leading slash or without a trailing one', () => {
    expect(problemsOf({ intake: { prefix: '/incoming/' } })).toContain(
      "pipeline.intake.prefix must not start with '/'",
    );
    expect(problemsOf({ intake: { prefix: 'incoming' } })).toContain(
      "pipeline.intake.prefix must end with '/'",
    );
    expect(problemsOf({ intake: { prefix: '' } })).toContain(
      'pipeline.intake.prefix must be a non-empty string',
    );
  });

  it('rejects a list object the list handler would refuse (wrong suffix)', () => {
    expect(problemsOf({ domainLists: { main: { objectKey: 'lists/main.json' } } })).toContain(
      'pipeline.domainLists.main.objectKey must end with one of .txt, .csv',
    );
  });

  it('refuses inline domains the CLI and handlers would refuse, naming list, index and reason', () => {
    // Act
    const message = problemsOf({
      domainLists: {
        lab: { domains: ['example.com', 'metadata.google.internal', 'xn--example-.com', 'printer.local'] },
      },
    });

    // Assess
    expect(message).toContain(
      "pipeline.domainLists.lab.domains[1] is a special-use name ('metadata.google.internal') that is never scanned",
    );
    expect(message).toContain(
      "pipeline.domainLists.lab.domains[2] label 'xn--example-' is punycode for a plain ASCII label",
    );
    expect(message).toContain("domains[3] is under the special-use top-level domain '.local'");
    expect(message).not.toContain('example.com');
  });

  it('rejects a list name outside [A-Za-z0-9_-] and a list with both a key and domains', () => {
    const message = problemsOf({
      domainLists: { 'bad name': { domains: ['a.test'] }, both: { objectKey: 'a.txt', domains: ['a.test'] } },
    });
    expect(message).toContain('pipeline.domainLists.bad name has an invalid name');
    expect(message).toContain('pipeline.domainLists.both must set exactly one of objectKey and domains');
  });

  it('rejects a log retention CloudWatch does not offer and an unknown removal policy', () => {
    const message = problemsOf({ logRetentionDays: 10, removalPolicy: 'delete' });
    expect(message).toContain("pipeline.logRetentionDays must be one of CloudWatch's retention values");
    expect(message).toContain("pipeline.removalPolicy must be one of 'retain', 'destroy'");
  });
});
