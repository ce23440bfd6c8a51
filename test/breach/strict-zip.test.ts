/**
 * Archives a strict reader refuses are refused here too, whatever else in them is valid: a
 * directory entry (`notes/`) carrying 4 KiB of data under a wrong CRC-32, and an entry whose local
 * header disagrees with its central directory entry (the name a streaming extractor would write,
 * the method, the flags, the sizes). Which field disagrees, and the bytes the directory entry
 * carries, are drawn (fixed seed). Each is refused by ArchiveReport with the check named, and
 * nothing is left under the report's final key. A well-formed archive with a directory entry
 * still passes.
 */
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { archiveReport } from '#lambdas/breach/archive-breach-report';
import { reportFolder } from '#lambdas/breach/identity';
import { ArchiveVerificationError } from '#lambdas/platform/errors';
import { listKeys } from '../kit/s3.ts';
import { type BreachTestBed, REPORT_NAMING_KEY, RESULTS_BUCKET, startBreachBed } from './fixture.ts';

interface RawEntry {
  readonly name: string;
  readonly data: Buffer;
  /** The CRC-32 both headers declare. @default the data's */
  readonly crc?: number;
  /** What the local header says instead of the central directory's value. */
  readonly local?: { name?: string; method?: number; flags?: number; size?: number; crc?: number };
}

/** A ZIP of stored (method 0) entries, written field by field so each header can say what a test wants. */
function rawZip(entries: readonly RawEntry[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const crc = entry.crc ?? crc32(entry.data);
    const localName = Buffer.from(entry.local?.name ?? entry.name, 'utf8');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(entry.local?.flags ?? 0x800, 6);
    local.writeUInt16LE(entry.local?.method ?? 0, 8);
    local.writeUInt32LE((entry.local?.crc ?? crc) >>> 0, 14);
    local.writeUInt32LE(entry.local?.size ?? entry.data.length, 18);
    local.writeUInt32LE(entry.local?.size ?? entry.data.length, 22);
    local.writeUInt16LE(localName.length, 26);
    parts.push(local, localName, entry.data);
    const record = Buffer.alloc(46);
    record.writeUInt32LE(0x02014b50, 0);
    record.writeUInt16LE(20, 4);
    record.writeUInt16LE(20, 6);
    record.writeUInt16LE(0x800, 8);
    record.writeUInt32LE(crc >>> 0, 16);
    record.writeUInt32LE(entry.data.length, 20);
    record.writeUInt32LE(entry.data.length, 24);
    record.writeUInt16LE(name.length, 28);
    record.writeUInt32LE(offset, 42);
    central.push(record, name);
    offset += 30 + localName.length + entry.data.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, directory, end]);
}

const REPORT = 'jane-doe_20261120T100000Z_zip001';
const FOLDER = reportFolder(REPORT, REPORT_NAMING_KEY);
const REPORT_JSON = Buffer.from('{"total_breaches":1}');

let bed: BreachTestBed;
beforeAll(async () => {
  bed = await startBreachBed();
  bed.sim.createReport(REPORT, { name: 'Jane Doe', emails: ['jane.doe@example.com'] });
});
afterAll(async () => {
  await bed.close();
});

/** Archives REPORT with the simulator serving `zip`; the error, or undefined when it was archived. */
async function archiveServing(zip: Buffer): Promise<unknown> {
  bed.sim.addFault({
    api: 'storage',
    path: '/reports/',
    fault: {
      type: 'status',
      status: 200,
      bodyBase64: zip.toString('base64'),
      contentType: 'application/zip',
    },
  });
  try {
    await archiveReport(bed.deps, REPORT, { origin: 'workflow' });
    return undefined;
  } catch (error) {
    return error;
  }
}

async function finalKeys(): Promise<string[]> {
  return (await listKeys(bed.s3.client, RESULTS_BUCKET, FOLDER)).filter((key) => key.endsWith('.zip'));
}

describe('ZIP verification, as strict as a strict reader', () => {
  it('refuses a directory entry whose data does not match its CRC-32', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 1, maxLength: 4096 }),
        fc.integer({ min: 1, max: 0xffffffff }),
        async (data, flip) => {
          const bytes = Buffer.from(data);
          const zip = rawZip([
            { name: 'report.json', data: REPORT_JSON },
            { name: 'notes/', data: bytes, crc: (crc32(bytes) ^ flip) >>> 0 },
          ]);

          const error = await archiveServing(zip);

          expect(error).toBeInstanceOf(ArchiveVerificationError);
          expect(error).toMatchObject({
            check: 'crc',
            message: expect.stringMatching(/entry 1 \(notes\/\)/),
          });
          expect(await finalKeys()).toEqual([]);
        },
      ),
      { seed: 43, numRuns: 5 },
    );
  });

  it('refuses an entry whose local header disagrees with the central directory', async () => {
    const disagreements = fc.constantFrom(
      { field: 'name', local: { name: '../../x.sh.' }, says: /names another file/ },
      { field: 'name (same length)', local: { name: 'report.jsoN' }, says: /names another file/ },
      { field: 'method', local: { method: 8 }, says: /another compression method/ },
      { field: 'flags', local: { flags: 0x801 }, says: /other general purpose flags/ },
      { field: 'size', local: { size: REPORT_JSON.length + 1 }, says: /another compressed size/ },
      { field: 'crc', local: { crc: 1 }, says: /another CRC-32/ },
    );
    await fc.assert(
      fc.asyncProperty(disagreements, async ({ local, says }) => {
        const zip = rawZip([{ name: 'report.json', data: REPORT_JSON, local }]);

        const error = await archiveServing(zip);

        expect(error).toBeInstanceOf(ArchiveVerificationError);
        expect(error).toMatchObject({ message: expect.stringMatching(says) });
        expect(await finalKeys()).toEqual([]);
      }),
      { seed: 43, numRuns: 12 },
    );
  });

  it('archives a well-formed ZIP with a directory entry', async () => {
    const zip = rawZip([
      { name: 'notes/', data: Buffer.alloc(0) },
      { name: 'report.json', data: REPORT_JSON },
    ]);

    const error = await archiveServing(zip);

    expect(error).toBeUndefined();
    expect(await finalKeys()).toHaveLength(1);
  });
});
