/** The table of scan outputs: its derived fields, and the rows it refuses with a named reason. */
import { describe, expect, it } from 'vitest';
import { ENV } from '#lambdas/platform/runtime/variables';
import {
  parseScanOutputsJson,
  resolveScanOutputs,
  SCAN_OUTPUT_NAMES,
  SCAN_OUTPUTS,
  scanOutputsJson,
  withScanOutputs,
} from '#lambdas/scan/scan-outputs';
import { scanSettingsFromEnv } from '#lambdas/scan/settings';
import { SCAN_VARIABLES } from '#lambdas/scan/variables';

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
    expect(() => resolveScanOutputs(rows)).toThrow(message);
  });

  it('extends the built-in rows, and refuses a row it already has', () => {
    const extended = withScanOutputs({ screenshots: row('/screenshots/{uuid}', false) });
    expect(extended.map((o) => o.name)).toEqual(['report', 'logs', 'debug', 'screenshots']);
    expect(() => withScanOutputs({ logs: row('/other-logs/{uuid}') })).toThrow(
      /'logs': the table already has it/,
    );
    expect(() => withScanOutputs({ more: row('/more/{uuid}', 'r') })).toThrow(
      /'more': nothingStoredMetricId 'r'/,
    );
  });

  it('reads back the table it writes into SCAN_OUTPUTS, and the handlers take it from there', () => {
    const extended = withScanOutputs({ screenshots: row('/screenshots/{uuid}', 'p') });
    const json = scanOutputsJson(extended);
    expect(parseScanOutputsJson(json)).toEqual(extended);
    const env = { [ENV.resultsBucket]: 'results', [SCAN_VARIABLES.outputs]: json };
    expect(scanSettingsFromEnv(env).outputs).toEqual(extended);
    expect(scanSettingsFromEnv({ [ENV.resultsBucket]: 'results' }).outputs).toBe(SCAN_OUTPUTS);
  });

  it.each([
    ['not json', /SCAN_OUTPUTS: is not JSON/],
    ['[]', /SCAN_OUTPUTS: must be a JSON object of scan outputs by name/],
    ['{}', /SCAN_OUTPUTS: must be a JSON object of scan outputs by name/],
    [
      '{"shots":{"vendorPath":1,"nothingStoredMetricId":false}}',
      /SCAN_OUTPUTS: scan output 'shots' needs a vendorPath/,
    ],
    ['{"shots":{"vendorPath":"/shots/{uuid}"}}', /SCAN_OUTPUTS: scan output 'shots' needs a vendorPath/],
    [
      '{"shots":{"vendorPath":"shots","nothingStoredMetricId":false}}',
      /SCAN_OUTPUTS: scan output 'shots': vendorPath/,
    ],
  ])('refuses SCAN_OUTPUTS=%s with a ConfigurationError naming the variable', (json, message) => {
    expect(() => parseScanOutputsJson(json)).toThrow(message);
    expect(() => parseScanOutputsJson(json)).toThrow(
      expect.objectContaining({ name: 'ConfigurationError', setting: 'SCAN_OUTPUTS' }),
    );
  });
});
