/**
 * One `npm start` demo run in its own process, so its peak RSS is its own: runs the CLI's main
 * with no arguments (the demo), then prints one JSON line with the exit code and peak RSS.
 */
import { main } from '../local/cli/main.ts';

const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (() => true) as typeof process.stdout.write;
const exitCode = await main([]);
write(`${JSON.stringify({ exitCode, maxRssKiB: process.resourceUsage().maxRSS })}\n`);
process.exitCode = exitCode;
