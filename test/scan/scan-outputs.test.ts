/** The table of scan outputs: its derived fields, and the rows it refuses with a named reason. */
import { describe, expect, it } from 'vitest';
import {
  resolveScanOutputs,
  SCAN_OUTPUT_NAMES,
  SCAN_OUTPUTS,
  type ScanOutputRow,
} from '#lambdas/scan/scan-outputs';

const row = (vendorPath: string, nothingStoredMetricId: string | false = false) =>
  ({ vendorPath, nothingStoredMetricId }) as {
    vendorPath: `/${string}/{uuid}`;
    nothingStoredMetricId: string | false;
  };

describe('the scan outputs table', () => {
  it('lists report, logs and debug with the state and operation names the workflow has always used', () => {
    expect(SCAN_OUTPUT_NAMES).toEqual(['report', 'logs', 'debug']);
    expect(
      SCAN_OUTPUTS.map((o) => [o.stateName, o.operation, o.vendorPath, o.nothingStoredMetricId]),
    ).toEqual([
      ['FetchReport', 'scan.getReport', '/report/{uuid}', 'r'],
      ['FetchLogs', 'scan.getLogs', '/logs/{uuid}', 'l'],
      ['FetchDebug', 'scan.getDebug', '/debug/{uuid}', 'd'],
    ]);
  });

  it.each([
    [{ Shots: row('/shots/{uuid}') }, /'Shots': the name must be a lower-case letter/],
    [{ shots: row('/shots/{id}') }, /'shots': vendorPath must be/],
    [{ shots: row('/../{uuid}/x') }, /'shots': vendorPath must be/],
    [{ shots: row('/../{uuid}') }, /'shots': vendorPath must be/],
    [{ shots: row('/shots?x=1/{uuid}') }, /'shots': vendorPath must be/],
    [
      { a: row('/a/{uuid}', 'p'), b: row('/b/{uuid}', 'p') },
      /'b': nothingStoredMetricId 'p' must be a unique/,
    ],
    [{ shots: row('/shots/{uuid}', 's') }, /'shots': nothingStoredMetricId 's'/],
    [{ shots: row('/shots/{uuid}', 'P') }, /'shots': nothingStoredMetricId 'P'/],
  ])('refuses a bad row, naming it and the rule (%#)', (rows, message) => {
    expect(() => resolveScanOutputs(rows as Record<string, ScanOutputRow>)).toThrow(message);
  });
});
