/**
 * One attempt of a request whose 2xx answer is read by `read` (whole as text, or consumed as it
 * streams): the request goes out with the credential, within `timeoutMs` for the whole exchange,
 * body included. Retries and credentials belong to `VendorHttp`, which passes itself in as the
 * context, as for a download (download.ts).
 */
import { header, requestIdOf } from './body.ts';
import { type TransportContext, USER_AGENT } from './download.ts';
import type { AttemptOutcome } from './outcome.ts';
import type { VendorAnswerFacts, VendorRequest } from './request.ts';
import { safeMediaType } from './response-headers.ts';
import { type HttpResponse, send } from './send.ts';

export async function readAttempt<T extends object>(
  ctx: TransportContext,
  req: VendorRequest,
  key: string,
  timeoutMs: number,
  read: (res: HttpResponse) => Promise<T>,
  /** Hand every HTTP answer to `read`, not only a 2xx (the rotate answer, kept whatever its status). */
  everyStatus = false,
): Promise<AttemptOutcome<T & VendorAnswerFacts>> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const url = ctx.buildUrl(req);
    const lookup = ctx.settings.destinations.admit(req.operation, url);
    const res = await send(url, {
      agent: ctx.agentFor(req, url),
      ...(lookup ? { lookup } : {}),
      method: req.method,
      headers: {
        accept: req.accept ?? 'application/json, text/plain;q=0.9, */*;q=0.8',
        'accept-encoding': 'gzip, deflate, br',
        'user-agent': USER_AGENT,
        ...(req.body ? { 'content-type': req.body.contentType } : {}),
        ...ctx.authHeaders(key),
      },
      ...(req.body ? { body: req.body.data } : {}),
      signal,
    });
    const status = res.statusCode;
    const requestId = requestIdOf(res.headers);
    if ((status >= 200 && status < 300) || everyStatus) {
      const value = await read(res);
      return {
        kind: 'ok',
        status,
        value: {
          ...value,
          status,
          contentType: safeMediaType(header(res.headers, 'content-type')),
          requestId,
        },
      };
    }
    return await ctx.nonSuccess(req, res, requestId, true);
  } catch (err) {
    return ctx.attemptError(err, signal);
  }
}
