/**
 * The scan outputs: one row per output the vendor serves for a finished scan (seed 000: report,
 * logs, debug). Every place that needs the list derives it from this table: the output names and
 * their type, the vendor path the client fetches, the fetch step's operation name and stored file
 * name, the Parallel's branches and their state names (lib/workflows/scan/scan-workflow.ts), the
 * registry's states for fetch-scan-output, the manifest's list and order, the bytes-stored metric
 * and the `NothingStored` alarm. Adding an output is one row here, plus its answer in the
 * simulator (local/simulator/scan-outputs.ts). docs/architecture.md walks the change.
 *
 * Plain data, no CDK: the constructs and the handlers both import it, so the table is fixed at build
 * time and the deployed functions and state machine always agree on it.
 *
 * Rules every row follows (not columns, because they are the same for all):
 * - Stored as `<outputPrefix><name>.<extension>`, the extension from the vendor's Content-Type
 *   (`extensionFor` in fetch-scan-output.ts), the bytes as the vendor sent them.
 * - Cut past `scan.maxOutputBytes` decoded bytes (SCAN_MAX_OUTPUT_BYTES), one cap for every output.
 */

/** What one row says. */
export interface ScanOutputRow {
  /** The vendor's path, relative to the scanning API's base URL; `{uuid}` is the scan's uuid. */
  readonly vendorPath: `/${string}/{uuid}`;
  /**
   * Whether stored bytes of this output count as "something was stored" for the `NothingStored`
   * alarm, and the id of its bytes metric in the alarm's math expression (one lower-case letter
   * or word, unique, not `s`, which the succeeded-scans metric holds). `false`: not counted.
   */
  readonly nothingStoredMetricId: string | false;
}

/**
 * The table. The order is the Parallel's branch order, the manifest's order and the order
 * reconciliation fetches in. The names are also the metric `output` dimension and the stored
 * file's stem, so they stay as they are once deployed.
 */
export const SCAN_OUTPUT_ROWS = {
  report: { vendorPath: '/report/{uuid}', nothingStoredMetricId: 'r' },
  logs: { vendorPath: '/logs/{uuid}', nothingStoredMetricId: 'l' },
  debug: { vendorPath: '/debug/{uuid}', nothingStoredMetricId: 'd' },
} as const satisfies Readonly<Record<string, ScanOutputRow>>;

export type ScanOutputName = keyof typeof SCAN_OUTPUT_ROWS;

/** A row with what follows from its name. */
export interface ResolvedScanOutput<Name extends string> extends ScanOutputRow {
  /** A key of the table. */
  readonly name: Name;
  /** The Parallel branch's Task state: `Fetch` + the capitalised name (`FetchReport`). */
  readonly stateName: `Fetch${string}`;
  /** The vendor operation in logs, metrics and errors: `scan.get` + the capitalised name. */
  readonly operation: `scan.get${string}`;
}

/** A row of the table with what follows from its name. */
export type ScanOutput = ResolvedScanOutput<ScanOutputName>;

const NAME = /^[a-z][a-z0-9]*$/;
/** Unreserved URL characters only: the path is sent as written, with the uuid put in. */
const VENDOR_PATH = /^(\/[A-Za-z0-9._~-]+)+\/\{uuid\}$/;
/** `s` is the succeeded-scans metric of the NothingStored expression. */
const RESERVED_METRIC_IDS = new Set(['s']);

/**
 * The rows with their derived fields, checked: a bad row fails at load (synth, or a handler's cold
 * start) with an error naming the row and the rule, never at a vendor call.
 */
export function resolveScanOutputs<Name extends string>(
  rows: Readonly<Record<Name, ScanOutputRow>>,
): readonly ResolvedScanOutput<Name>[] {
  const metricIds = new Set<string>();
  return (Object.entries(rows) as [Name, ScanOutputRow][]).map(([name, row]) => {
    const where = `scan output '${name}'`;
    // Step Functions state names, metric dimensions and S3 keys all take a lower-case word.
    if (!NAME.test(name))
      throw new Error(`${where}: the name must be a lower-case letter then letters or digits`);
    // A `.` or `..` segment would be resolved away by the URL, to another of the vendor's paths.
    if (!VENDOR_PATH.test(row.vendorPath) || row.vendorPath.split('/').some((s) => s === '.' || s === '..')) {
      throw new Error(
        `${where}: vendorPath must be /<segment>[/<segment>…]/{uuid} (unreserved characters, no . or ..), got ${row.vendorPath}`,
      );
    }
    const id = row.nothingStoredMetricId;
    if (id !== false) {
      // A metric math id: letters, digits and underscores, a lower-case letter first
      // (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_MetricDataQuery.html).
      if (!/^[a-z][a-zA-Z0-9_]*$/.test(id) || RESERVED_METRIC_IDS.has(id) || metricIds.has(id)) {
        throw new Error(
          `${where}: nothingStoredMetricId '${id}' must be a unique lower-case id other than 's'`,
        );
      }
      metricIds.add(id);
    }
    const capitalised = `${name.charAt(0).toUpperCase()}${name.slice(1)}`;
    return {
      ...row,
      name,
      stateName: `Fetch${capitalised}`,
      operation: `scan.get${capitalised}`,
    } as const;
  });
}

/** Every output, in table order. */
export const SCAN_OUTPUTS: readonly ScanOutput[] = resolveScanOutputs(SCAN_OUTPUT_ROWS);

export const SCAN_OUTPUT_NAMES: readonly ScanOutputName[] = SCAN_OUTPUTS.map((output) => output.name);
