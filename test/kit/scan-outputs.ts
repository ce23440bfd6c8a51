/** A row of the scan outputs table by name, for tests that fetch one output directly. */
import { SCAN_OUTPUTS, type ScanOutput, type ScanOutputName } from '#lambdas/scan/scan-outputs';

export function scanOutput(name: ScanOutputName): ScanOutput {
  const row = SCAN_OUTPUTS.find((output) => output.name === name);
  if (!row) throw new Error(`the scan outputs table has no '${name}' row`);
  return row;
}
