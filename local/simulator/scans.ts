/**
 * The scan store. Scans advance only when their status is polled, never with wall-clock time, so
 * tests control progress exactly and listing or stats never move anything.
 */
import { randomUUID } from 'node:crypto';
import { type ContentMeta, type ContentSource, type OutputContent, render } from './content.ts';
import type { ScanBehaviour } from './types.ts';

export type ScanStatusWord = 'queued' | 'running' | 'completed' | 'failed';

interface ResolvedBehaviour {
  readonly outcome: 'succeed' | 'fail' | 'never-finish';
  readonly pollsToFinish: number;
}

export interface ScanRecord {
  readonly uuid: string;
  readonly domain: string;
  /** How many scans of this domain were created before it: names it the same way in every run. */
  readonly ordinal: number;
  readonly createdAt: Date;
  readonly behaviour: ResolvedBehaviour;
  updatedAt: Date;
  /** Set once, by the poll that moves the scan to completed or failed; reports carry it as finished_at. */
  finishedAt: Date | undefined;
  status: ScanStatusWord;
  progress: number;
  polls: number;
  error: string | undefined;
  /** Listings this scan is still left out of (an index lagging behind the start). */
  hiddenListings: number;
  /** Length and ETag per output, computed on first download; outputs never change once finished. */
  readonly outputs: Map<string, ContentMeta>;
}

export interface ScanDefaults {
  readonly pollsToFinish: number;
  readonly failingDomains: readonly (string | RegExp)[];
}

function matchesDomain(pattern: string | RegExp, domain: string): boolean {
  if (typeof pattern === 'string') return pattern.toLowerCase() === domain;
  pattern.lastIndex = 0;
  return pattern.test(domain);
}

export function validatePolls(value: number, field: string): number {
  if (!Number.isInteger(value) || value < 0) throw new TypeError(`${field} must be a non-negative integer`);
  return value;
}

export class ScanStore {
  private readonly scans = new Map<string, ScanRecord>();
  private readonly scripts: { pattern: string | RegExp; behaviour: ScanBehaviour }[] = [];
  /** Kept in step with every change, so /stats stays O(1) with 100,000 scans. */
  private readonly byStatus: Record<ScanStatusWord, number> = {
    queued: 0,
    running: 0,
    completed: 0,
    failed: 0,
  };

  private listingLag = 0;
  private readonly createdPerDomain = new Map<string, number>();

  constructor(
    private readonly defaults: ScanDefaults,
    private readonly now: () => Date,
  ) {}

  /** Listings each scan created from now on stays out of. */
  setListingLag(listings: number): void {
    this.listingLag = validatePolls(listings, 'listingLag');
  }

  /** One `GET /scans`: the scans it shows; each lagging scan moves one listing closer to showing. */
  listed(): ScanRecord[] {
    const shown: ScanRecord[] = [];
    for (const scan of this.scans.values()) {
      if (scan.hiddenListings > 0) scan.hiddenListings -= 1;
      else shown.push(scan);
    }
    return shown;
  }

  script(pattern: string | RegExp, behaviour: ScanBehaviour): void {
    if (!['succeed', 'fail', 'never-finish'].includes(behaviour?.outcome)) {
      throw new TypeError(`scan behaviour outcome must be succeed, fail or never-finish`);
    }
    if ('pollsToFinish' in behaviour && behaviour.pollsToFinish !== undefined) {
      validatePolls(behaviour.pollsToFinish, 'behaviour.pollsToFinish');
    }
    this.scripts.push({ pattern, behaviour });
  }

  /** The latest script wins; the behaviour is fixed when the scan starts. */
  private behaviourFor(domain: string): ResolvedBehaviour {
    for (let i = this.scripts.length - 1; i >= 0; i -= 1) {
      const script = this.scripts[i];
      if (script && matchesDomain(script.pattern, domain)) {
        const b = script.behaviour;
        return {
          outcome: b.outcome,
          pollsToFinish: b.outcome === 'never-finish' ? 0 : (b.pollsToFinish ?? this.defaults.pollsToFinish),
        };
      }
    }
    const fails = this.defaults.failingDomains.some((p) => matchesDomain(p, domain));
    return { outcome: fails ? 'fail' : 'succeed', pollsToFinish: this.defaults.pollsToFinish };
  }

  create(domain: string): ScanRecord {
    const now = this.now();
    const ordinal = this.createdPerDomain.get(domain) ?? 0;
    this.createdPerDomain.set(domain, ordinal + 1);
    const scan: ScanRecord = {
      uuid: randomUUID(),
      domain,
      ordinal,
      createdAt: now,
      updatedAt: now,
      finishedAt: undefined,
      behaviour: this.behaviourFor(domain),
      status: 'queued',
      progress: 0,
      polls: 0,
      error: undefined,
      hiddenListings: this.listingLag,
      outputs: new Map(),
    };
    this.scans.set(scan.uuid, scan);
    this.byStatus.queued += 1;
    return scan;
  }

  /**
   * A scan that started and ran to its scripted end before anyone asked, without a request: how a
   * bench puts 100,000 scans in the vendor's hands in seconds (over HTTP it takes many minutes).
   */
  createFinished(domain: string): ScanRecord {
    const scan = this.create(domain);
    if (scan.behaviour.outcome === 'never-finish') return scan;
    // Each poll moves one step; pollsToFinish (at least 1 once polled) ends it.
    while (scan.status !== 'completed' && scan.status !== 'failed') this.poll(scan);
    return scan;
  }

  get(uuid: string): ScanRecord | undefined {
    return this.scans.get(uuid.toLowerCase());
  }

  /** One status poll: moves the scan one step along its scripted path. */
  poll(scan: ScanRecord): void {
    if (scan.status === 'completed' || scan.status === 'failed') return;
    scan.polls += 1;
    const step = scan.polls;
    const { outcome, pollsToFinish } = scan.behaviour;
    const before = `${scan.status}/${scan.progress}`;
    this.byStatus[scan.status] -= 1;
    if (outcome === 'never-finish') {
      scan.status = step === 1 ? 'queued' : 'running';
      scan.progress = Math.min(99, 5 * (step - 1));
    } else if (step >= pollsToFinish) {
      if (outcome === 'succeed') {
        scan.status = 'completed';
        scan.progress = 100;
      } else {
        scan.status = 'failed';
        scan.error = `scan of ${scan.domain} aborted: target unreachable (simulated failure)`;
      }
    } else if (step === 1) {
      scan.status = 'queued';
      scan.progress = 0;
    } else {
      scan.status = 'running';
      scan.progress = Math.min(99, Math.floor((100 * (step - 1)) / (pollsToFinish - 1)));
    }
    this.byStatus[scan.status] += 1;
    if (`${scan.status}/${scan.progress}` !== before) scan.updatedAt = this.now();
    if (scan.status === 'completed' || scan.status === 'failed') scan.finishedAt = scan.updatedAt;
  }

  delete(uuid: string): boolean {
    const scan = this.get(uuid);
    if (!scan) return false;
    this.byStatus[scan.status] -= 1;
    return this.scans.delete(scan.uuid);
  }

  list(): IterableIterator<ScanRecord> {
    return this.scans.values();
  }

  stats(): { total: number; by_status: Record<ScanStatusWord, number> } {
    return { total: this.scans.size, by_status: { ...this.byStatus } };
  }

  /** A finished scan's output; its length and ETag are computed once and kept. */
  output(
    scan: ScanRecord,
    name: string,
    content: OutputContent,
    targetBytes: number,
  ): { meta: ContentMeta; body: Iterable<Buffer> } {
    const rendered = render(content, contentSource(scan), targetBytes, scan.outputs.get(name));
    scan.outputs.set(name, rendered.meta);
    return rendered;
  }
}

export function contentSource(scan: ScanRecord): ContentSource {
  return {
    uuid: scan.uuid,
    domain: scan.domain,
    createdAt: scan.createdAt,
    finishedAt: scan.finishedAt ?? scan.updatedAt,
    outcome: scan.status === 'failed' ? 'failed' : 'completed',
    error: scan.error,
  };
}

export function statusBody(scan: ScanRecord) {
  return {
    uuid: scan.uuid,
    domain: scan.domain,
    status: scan.status,
    progress: scan.progress,
    created_at: scan.createdAt.toISOString(),
    updated_at: scan.updatedAt.toISOString(),
    ...(scan.error === undefined ? {} : { error: scan.error }),
  };
}
