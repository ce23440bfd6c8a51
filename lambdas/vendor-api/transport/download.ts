/**
 * One attempt of a streamed download: the redirect chain by hand, with the credential and scheme
 * rules of a chain, up to the final 2xx headers, whose body is handed over guarded. Retries and
 * credentials belong to `VendorHttp`, which passes itself in as the context.
 */
import {
  VendorBodyTooLargeError,
  VendorInsecureRedirectError,
  VendorResponseError,
} from '#lambdas/platform/errors';
import { redactUrl } from '#lambdas/platform/redaction/redact';
import {
  decodersFor,
  discard,
  guardBody,
  hasFraming,
  header,
  normaliseIdentity,
  parseLength,
  requestIdOf,
} from './body.ts';
import { type AttemptOutcome, permanent, UNFRAMED_BODY } from './outcome.ts';
import type { VendorRequest } from './request.ts';
import { registeredCodings, safeEtag, safeMediaType } from './response-headers.ts';
import { type HttpResponse, send } from './send.ts';
import type { ResolvedSettings } from './settings.ts';
import type { VendorDownload } from './types.ts';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** How every request of the transport names itself. */
export const USER_AGENT = 'vendor-security-pipeline';

/** What an attempt (a download, a read) needs from the transport that runs it. */
export interface TransportContext {
  readonly settings: ResolvedSettings;
  /** The origin credentials may be sent to. */
  readonly baseOrigin: string;
  agentFor(req: VendorRequest, url: URL): import('node:http').Agent;
  authHeaders(key: string): Record<string, string>;
  buildUrl(req: VendorRequest): URL;
  nonSuccess<T>(
    req: VendorRequest,
    res: HttpResponse,
    requestId: string | undefined,
    trusted: boolean,
  ): Promise<AttemptOutcome<T>>;
  attemptError<T>(err: unknown, signal: AbortSignal): AttemptOutcome<T>;
}

export async function downloadAttempt(
  ctx: TransportContext,
  req: VendorRequest,
  key: string,
): Promise<AttemptOutcome<VendorDownload>> {
  const { requestTimeoutMs, maxRedirects } = ctx.settings;
  // Not AbortSignal.timeout: the overall deadline covers the redirect chain up to the final
  // headers only. It must be cancelled then, or it would cut a long (but live) body short;
  // the body is guarded by its idle timeout (guardBody) instead.
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`timed out after ${requestTimeoutMs} ms`, 'TimeoutError')),
    requestTimeoutMs,
  );
  let url = ctx.buildUrl(req);
  let redirects = 0;
  // The credential rule of a redirect chain: the key goes only to the configured origin, and
  // only while the chain has never left it. Once a hop went elsewhere (a pre-signed storage
  // URL), no later hop carries the key, even one that comes back to the vendor's origin:
  // otherwise whoever controls the storage origin could steer a credentialed GET to any path
  // of the vendor's API.
  let leftBaseOrigin = false;
  try {
    for (;;) {
      leftBaseOrigin ||= url.origin !== ctx.baseOrigin;
      const trusted = !leftBaseOrigin;
      // Every hop, the first included: refused here (a literal address) or when the name resolves.
      const lookup = ctx.settings.destinations.admit(req.operation, url);
      const res = await send(url, {
        agent: ctx.agentFor(req, url),
        ...(lookup ? { lookup } : {}),
        method: 'GET',
        headers: {
          accept: req.accept ?? '*/*',
          'accept-encoding': 'gzip, deflate, br',
          'user-agent': USER_AGENT,
          ...(trusted ? ctx.authHeaders(key) : {}),
        },
        signal: controller.signal,
      });
      const status = res.statusCode;
      const requestId = requestIdOf(res.headers);
      if (REDIRECT_STATUSES.has(status)) {
        discard(res.body);
        const location = header(res.headers, 'location');
        if (!location) {
          return permanent(
            new VendorResponseError(req.operation, `HTTP ${status} redirect without a Location`),
          );
        }
        redirects += 1;
        if (redirects > maxRedirects) {
          return permanent(new VendorResponseError(req.operation, `more than ${maxRedirects} redirects`));
        }
        const next = URL.canParse(location, url.href) ? new URL(location, url) : undefined;
        if (!next || (next.protocol !== 'https:' && next.protocol !== 'http:')) {
          return permanent(new VendorResponseError(req.operation, 'redirect to an unusable Location'));
        }
        // An https download stays https: the body would otherwise cross the network in clear.
        if (url.protocol === 'https:' && next.protocol === 'http:') {
          return permanent(new VendorInsecureRedirectError(req.operation));
        }
        url = next;
        continue;
      }
      clearTimeout(timer);
      if (status >= 200 && status < 300) {
        if (!hasFraming(res.headers)) {
          // Refused before a byte is read: nothing of it may ever be stored as complete.
          res.body.destroy();
          return {
            kind: 'network',
            code: UNFRAMED_BODY,
            requestNotSent: false,
            cause: new Error('response without Content-Length or chunked transfer coding'),
          };
        }
        const announced = parseLength(header(res.headers, 'content-length'));
        if (req.maxBytes !== undefined && announced !== undefined && announced > req.maxBytes) {
          // Encoded bytes only grow when decoded: a larger announced length is over the cap for sure.
          discard(res.body);
          return permanent(new VendorBodyTooLargeError(req.operation, req.maxBytes, announced));
        }
        const codings = registeredCodings(header(res.headers, 'content-encoding'));
        if (codings === 'unregistered') {
          // Its bytes could be labelled neither truthfully nor with the vendor's own word for them.
          discard(res.body);
          return permanent(
            new VendorResponseError(req.operation, 'the answer uses an unregistered Content-Encoding'),
          );
        }
        return { kind: 'ok', status, value: toDownload(ctx, req, res, url, redirects, codings) };
      }
      // A 401/403 from a foreign origin is about its pre-signed URL, not our key.
      return await ctx.nonSuccess(req, res, requestId, trusted);
    }
  } catch (err) {
    return ctx.attemptError(err, controller.signal);
  } finally {
    clearTimeout(timer);
  }
}

function toDownload(
  ctx: TransportContext,
  req: VendorRequest,
  res: HttpResponse,
  url: URL,
  redirects: number,
  contentEncoding: string | undefined,
): VendorDownload {
  const decoders = decodersFor(contentEncoding);
  const declaredLength = parseLength(header(res.headers, 'content-length'));
  const decoded = decoders !== undefined && decoders.length > 0;
  return {
    body: guardBody(req.operation, res.body, decoders ?? [], {
      idleTimeoutMs: ctx.settings.idleTimeoutMs,
      expectedBytes: decoded ? undefined : declaredLength,
      maxBytes: req.maxBytes,
      maxDecodingRatio: req.maxDecodingRatio,
    }),
    // Response headers are vendor text: each kept only in a form that holds nothing else.
    contentType: safeMediaType(header(res.headers, 'content-type')),
    // After transparent decoding the declared length and encoding no longer describe `body`.
    contentLength: decoded ? undefined : declaredLength,
    etag: safeEtag(header(res.headers, 'etag')),
    contentEncoding: decoded ? undefined : normaliseIdentity(contentEncoding),
    decodedContentEncoding: decoded ? contentEncoding : undefined,
    finalUrl: redactUrl(url),
    redirects,
  };
}
