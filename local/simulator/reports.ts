/**
 * Breach reports. The person's name and emails are personal data: they live in this store (and
 * in the ZIP the client downloads) and nowhere else; nothing here logs them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { ZipFile } from 'yazl';
import type { SimulatedPerson } from './types.ts';

const addressListeners = new Set<(addresses: readonly string[]) => void>();

/**
 * Calls `listener` with the addresses of every `POST /recon` any simulator of this process is sent,
 * so a test can look for the exact addresses a run sent wherever they must not be kept. Returns the
 * unsubscribe.
 */
export function onSimulatorAddresses(listener: (addresses: readonly string[]) => void): () => void {
  addressListeners.add(listener);
  return () => addressListeners.delete(listener);
}

export interface BreachEntry {
  readonly email: string;
  readonly breach: string;
  readonly breach_date: string;
  readonly data_classes: readonly string[];
}

export interface ReportRecord {
  readonly reportName: string;
  readonly personName: string;
  readonly emails: readonly string[];
  readonly createdAt: Date;
  readonly status: 'success' | 'no_results';
  readonly breaches: readonly BreachEntry[];
}

export interface Archive {
  readonly bytes: Buffer;
  readonly etag: string;
}

const BREACHES = [
  { breach: 'ExampleShop', date: '2019-03-14', classes: ['email addresses', 'passwords', 'names'] },
  { breach: 'FitTrackr', date: '2020-07-02', classes: ['email addresses', 'dates of birth', 'geolocation'] },
  {
    breach: 'GamerHub Forums',
    date: '2016-11-21',
    classes: ['email addresses', 'usernames', 'IP addresses'],
  },
  { breach: 'TravelDeals Mailer', date: '2021-01-09', classes: ['email addresses', 'phone numbers'] },
  { breach: 'CloudNotes', date: '2022-05-30', classes: ['email addresses', 'password hints'] },
  { breach: 'RecipeSwap', date: '2018-09-12', classes: ['email addresses', 'passwords', 'usernames'] },
  { breach: 'JobBoard Pro', date: '2023-02-17', classes: ['email addresses', 'employment history', 'names'] },
  { breach: 'PhotoVault', date: '2017-06-05', classes: ['email addresses', 'passwords'] },
] as const;

/** Addresses at this domain never appear in a breach: the documented way to get `no_results`. */
export const CLEAN_DOMAIN = 'example.org';

const EMAIL = /^[^\s@]+@([^\s@]+\.[^\s@]+)$/;

export function isEmail(value: string): boolean {
  return EMAIL.test(value);
}

function emailDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

/** The same set of emails always gives the same breaches, whatever their order or case. */
function findBreaches(emails: readonly string[]): BreachEntry[] {
  const exposed = [...new Set(emails.map((e) => e.toLowerCase()))]
    .filter((e) => emailDomain(e) !== CLEAN_DOMAIN)
    .sort();
  if (exposed.length === 0) return [];
  const hash = createHash('sha256').update(exposed.join('\n')).digest();
  const total = 1 + (hash.readUInt32BE(0) % 12);
  const entries: BreachEntry[] = [];
  for (let i = 0; i < total; i += 1) {
    const email = exposed[(hash[(4 + i) % hash.length] as number) % exposed.length] as string;
    const source = BREACHES[(hash[(16 + i) % hash.length] as number) % BREACHES.length] ?? BREACHES[0];
    entries.push({ email, breach: source.breach, breach_date: source.date, data_classes: source.classes });
  }
  return entries;
}

/** Lower-case ASCII slug of a person's name, [a-z0-9-] only. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return slug || 'report';
}

function compactTimestamp(date: Date): string {
  return date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export class ReportStore {
  private readonly reports = new Map<string, ReportRecord>();
  private readonly archives = new Map<string, Promise<Archive>>();
  private readonly scriptedNames: string[] = [];

  constructor(
    private readonly now: () => Date,
    /** Bytes of the extra `attachments.bin` entry of every archive (0: none). */
    private readonly paddingBytes = 0,
  ) {}

  /** What `POST /recon` does: analyse the emails and store a new report. */
  generate(personName: string, emails: readonly string[]): ReportRecord {
    for (const listener of addressListeners) listener(emails);
    const createdAt = this.now();
    let reportName = this.scriptedNames.shift();
    while (reportName === undefined || this.reports.has(reportName)) {
      reportName = `${slugify(personName)}_${compactTimestamp(createdAt)}_${randomBytes(3).toString('hex')}`;
    }
    return this.store(reportName, personName, emails, createdAt);
  }

  add(reportName: string, person: SimulatedPerson = {}): ReportRecord {
    if (typeof reportName !== 'string' || reportName === '')
      throw new TypeError('reportName must be a non-empty string');
    const emails = person.emails ?? ['sim.person@example.com'];
    if (emails.length === 0 || !emails.every((e) => typeof e === 'string' && isEmail(e))) {
      throw new TypeError('person.emails must be a non-empty array of email addresses');
    }
    return this.store(reportName, person.name ?? 'Sim Person', emails, this.now());
  }

  scriptName(reportName: string): void {
    if (typeof reportName !== 'string' || reportName === '')
      throw new TypeError('reportName must be a non-empty string');
    this.scriptedNames.push(reportName);
  }

  private store(
    reportName: string,
    personName: string,
    emails: readonly string[],
    createdAt: Date,
  ): ReportRecord {
    const breaches = findBreaches(emails);
    const record: ReportRecord = {
      reportName,
      personName,
      emails: [...emails],
      createdAt,
      status: breaches.length === 0 ? 'no_results' : 'success',
      breaches,
    };
    this.reports.set(reportName, record);
    this.archives.delete(reportName);
    return record;
  }

  get(reportName: string): ReportRecord | undefined {
    return this.reports.get(reportName);
  }

  list(): IterableIterator<ReportRecord> {
    return this.reports.values();
  }

  /** The report's ZIP, built once; a fixed mtime keeps the bytes (and so the ETag) stable. */
  archive(report: ReportRecord): Promise<Archive> {
    let archive = this.archives.get(report.reportName);
    if (!archive) {
      archive = buildArchive(report, this.paddingBytes);
      this.archives.set(report.reportName, archive);
    }
    return archive;
  }
}

async function buildArchive(report: ReportRecord, paddingBytes: number): Promise<Archive> {
  const summary = {
    report_name: report.reportName,
    name: report.personName,
    generated_at: report.createdAt.toISOString(),
    status: report.status,
    emails: report.emails,
    total_breaches: report.breaches.length,
    breaches: report.breaches,
  };
  const csv = [
    'email,breach,breach_date,data_classes',
    ...report.breaches.map((b) =>
      [b.email, b.breach, b.breach_date, b.data_classes.join('; ')].map(csvField).join(','),
    ),
  ].join('\r\n');
  const readme = [
    'Breach intelligence report (vendor simulator)',
    '',
    `Generated: ${report.createdAt.toISOString()}`,
    `Addresses checked: ${report.emails.length}`,
    `Breaches found: ${report.breaches.length}`,
    '',
    'report.json  summary and every breach entry',
    'breaches.csv the same entries as CSV',
    '',
  ].join('\n');
  const zip = new ZipFile();
  const options = { mtime: report.createdAt, compress: true };
  zip.addBuffer(Buffer.from(`${JSON.stringify(summary, null, 2)}\n`), 'report.json', options);
  zip.addBuffer(Buffer.from(`${csv}\r\n`), 'breaches.csv', options);
  zip.addBuffer(Buffer.from(readme), 'README.txt', options);
  if (paddingBytes > 0) {
    // Stored, not deflated: the archive is as large as asked, and building it stays cheap.
    zip.addBuffer(paddingOf(paddingBytes, report.reportName), 'attachments.bin', {
      ...options,
      compress: false,
    });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  return { bytes, etag: `"${createHash('md5').update(bytes).digest('hex')}"` };
}

export function summaryOf(report: ReportRecord) {
  return {
    name: report.reportName,
    created_at: report.createdAt.toISOString(),
    total_breaches: report.breaches.length,
  };
}

/** `size` bytes that do not compress: one random MiB, seeded by the report, repeated. */
function paddingOf(size: number, seed: string): Buffer {
  const block = Buffer.alloc(1024 * 1024);
  let state = createHash('sha256').update(seed).digest();
  for (let offset = 0; offset < block.length; offset += state.length) {
    state.copy(block, offset);
    state = createHash('sha256').update(state).digest();
  }
  const padding = Buffer.allocUnsafe(size);
  for (let offset = 0; offset < size; offset += block.length)
    block.copy(padding, offset, 0, Math.min(block.length, size - offset));
  return padding;
}
