/**
 * `npm run simulator`: runs the vendor simulator alone and prints what a human needs to talk to
 * it. The key is printed on purpose: it is a throwaway key for a local fake.
 */
import { Command, InvalidArgumentError } from 'commander';
import { startVendorSimulator } from './index.ts';

function integer(field: string, min: number, max: number) {
  return (value: string): number => {
    const parsed = Number(value);
    if (!/^\d+$/.test(value) || parsed < min || parsed > max) {
      throw new InvalidArgumentError(`${field} must be an integer from ${min} to ${max}.`);
    }
    return parsed;
  };
}

const program = new Command()
  .name('npm run simulator --')
  .description('Run the vendor simulator (scanning, key management and breach report APIs) on its own.')
  .option('--port <port>', 'port of the three APIs (0 picks a free one)', integer('--port', 0, 65535), 0)
  .option('--host <host>', 'address to listen on', '127.0.0.1')
  .option('--key <key>', 'initial API key (default: a random sk_sim_... key)')
  .option('--org <uuid>', 'organisation uuid for the key management API (default: random)')
  .option(
    '--polls <n>',
    'status polls a scan needs to finish (0 = instant)',
    integer('--polls', 0, 1_000_000),
    3,
  )
  .option('--verbose', 'log one line per request to stderr (method, route, status, time)', false)
  .showHelpAfterError();

program.parse();
const options = program.opts<{
  port: number;
  host: string;
  key?: string;
  org?: string;
  polls: number;
  verbose: boolean;
}>();

let simulator: Awaited<ReturnType<typeof startVendorSimulator>>;
try {
  simulator = await startVendorSimulator({
    host: options.host,
    port: options.port,
    pollsToFinish: options.polls,
    verbose: options.verbose,
    ...(options.key === undefined ? {} : { apiKey: options.key }),
    ...(options.org === undefined ? {} : { orgUuid: options.org }),
  });
} catch (error) {
  process.stderr.write(`simulator: could not start: ${(error as Error).message}\n`);
  process.exit(2);
}

const { url, storageUrl, apiKey, orgUuid } = simulator;
process.stdout.write(
  [
    'Vendor simulator is running.',
    '',
    `  API base URL  ${url}    (scanning, key management, breach reports)`,
    `  Storage URL   ${storageUrl}    (pre-signed report downloads)`,
    `  API key       ${apiKey}`,
    `  Org UUID      ${orgUuid}`,
    `  Scans finish after ${options.polls} status poll(s).`,
    '',
    'Try it:',
    `  export URL=${url} KEY=${apiKey}`,
    '  curl -s -X POST -H "Authorization: Bearer $KEY" -d domain=example.com $URL/scan',
    '  curl -s -H "Authorization: Bearer $KEY" $URL/status/<uuid>',
    `  curl -s -X POST -H "X-API-Key: $KEY" -H 'Content-Type: application/json' -d '{"name":"Ada","emails":["ada@example.com"]}' $URL/recon`,
    '',
    'Run the pipeline against it (in another terminal):',
    `  SCAN_API_URL=${url} KEYS_API_URL=${url} BREACH_API_URL=${url} VENDOR_ALLOWED_ORIGINS=${storageUrl} VENDOR_API_KEY=${apiKey} ORG_UUID=${orgUuid} npm start`,
    '',
    'Controls (loopback only, Content-Type: application/json): POST /__simulator/faults, DELETE /__simulator/faults,',
    '  POST /__simulator/scripts, POST /__simulator/replace-key',
    'After a key rotation the new key is in the rotate response. Ctrl-C stops the simulator.',
    '',
  ].join('\n'),
);

let stopping = false;
const stop = (signal: NodeJS.Signals) => {
  if (stopping) return;
  stopping = true;
  process.stderr.write(`simulator: ${signal} received, closing\n`);
  simulator.close().then(
    () => {
      process.exitCode = 0;
    },
    (error: unknown) => {
      process.stderr.write(`simulator: close failed: ${String(error)}\n`);
      process.exitCode = 1;
    },
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
