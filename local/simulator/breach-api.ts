/**
 * The breach report API (seed 002): generate, list, download. X-API-Key auth. A download is a
 * two-hop redirect, like the real thing behind a CDN: 302 to a relative path on this origin,
 * then 307 to a pre-signed URL on the storage origin.
 */
import { type Route, route } from './context.ts';
import { decodeSegment, HttpError, jsonResponse, mediaType, readBody } from './http.ts';
import { isEmail, summaryOf } from './reports.ts';

const MAX_EMAILS = 1000;

function parseRecon(body: Buffer): { name: string; emails: string[] } {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new HttpError(400, 'bad_request', 'body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HttpError(400, 'bad_request', 'body must be a JSON object with name and emails');
  }
  const { name, emails } = value as { name?: unknown; emails?: unknown };
  if (typeof name !== 'string' || name.trim() === '') {
    throw new HttpError(400, 'bad_request', 'name must be a non-empty string');
  }
  if (!Array.isArray(emails) || emails.length === 0) {
    throw new HttpError(400, 'bad_request', 'emails must be a non-empty array of email addresses');
  }
  if (emails.length > MAX_EMAILS)
    throw new HttpError(400, 'bad_request', `at most ${MAX_EMAILS} emails per report`);
  const bad = emails.findIndex((e) => typeof e !== 'string' || !isEmail(e.trim()));
  if (bad >= 0) throw new HttpError(400, 'bad_request', `emails[${bad}] is not an email address`);
  return { name: name.trim(), emails: (emails as string[]).map((e) => e.trim()) };
}

function reportNameOf(segment: string, suffix: string): string {
  const decoded = decodeSegment(segment, 'report_name');
  if (!decoded.endsWith(suffix)) throw new HttpError(404, 'not_found', 'no such report');
  return decoded.slice(0, decoded.length - suffix.length);
}

export const breachRoutes: readonly Route[] = [
  route('breach', 'POST', '/recon', 'x-api-key', async ({ req, sim }) => {
    const type = mediaType(req);
    if (type !== 'application/json' && !type?.endsWith('+json')) {
      throw new HttpError(415, 'unsupported_media_type', 'send the request as application/json');
    }
    const { name, emails } = parseRecon(await readBody(req));
    const report = sim.reports.generate(name, emails);
    return jsonResponse(200, {
      status: report.status,
      output: report.reportName,
      total_breaches: report.breaches.length,
    });
  }),
  route('breach', 'GET', '/view_breaches', 'x-api-key', ({ sim }) => {
    const reports = [];
    for (const report of sim.reports.list()) reports.push(summaryOf(report));
    return jsonResponse(200, { reports });
  }),
  route('breach', 'GET', '/download/{report_name}', 'x-api-key', ({ params, sim }) => {
    const name = reportNameOf(params[0] ?? '', '');
    if (!sim.reports.get(name)) throw new HttpError(404, 'not_found', 'no such report');
    const location = `/files/${encodeURIComponent(name)}.zip`;
    return jsonResponse(302, { location }, { location });
  }),
  route('breach', 'GET', '/files/{file_name}', 'x-api-key', ({ params, sim }) => {
    const name = reportNameOf(params[0] ?? '', '.zip');
    if (!sim.reports.get(name)) throw new HttpError(404, 'not_found', 'no such report');
    const location = `${sim.storageUrl}/reports/${encodeURIComponent(name)}.zip?${sim.signer.sign(`reports/${name}.zip`)}`;
    return jsonResponse(307, { location }, { location });
  }),
];

export function isBreachPath(path: string): boolean {
  return /^\/(recon|view_breaches|download|files)(\/|$)/.test(path);
}
