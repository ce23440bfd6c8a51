/** The key management API (seed 001): key metadata and rotation. Bearer auth. */
import { type Route, type RouteCall, route } from './context.ts';
import { decodeSegment, HttpError, jsonResponse, readBody } from './http.ts';
import { rotateAnswer } from './rotate-answers.ts';

function checkOrg(call: RouteCall): string {
  const org = decodeSegment(call.params[0] ?? '', 'org_uuid');
  if (org.toLowerCase() !== call.sim.options.orgUuid.toLowerCase()) {
    throw new HttpError(404, 'not_found', 'no such organisation');
  }
  return call.sim.options.orgUuid;
}

export const keyRoutes: readonly Route[] = [
  route('keys', 'GET', '/orgs/{org_uuid}/api/key', 'bearer', (call) =>
    jsonResponse(200, call.sim.keys.metadata(checkOrg(call))),
  ),
  route('keys', 'POST', '/orgs/{org_uuid}/api/key/rotate', 'bearer', async (call) => {
    const orgUuid = checkOrg(call);
    // The seed says "no body"; whatever arrives is read and ignored so the connection stays usable.
    await readBody(call.req);
    const rotated = call.sim.keys.rotate();
    const answer = rotateAnswer(call.rotateAnswer ?? 'default', {
      orgUuid,
      apiKey: rotated.apiKey,
      keyId: rotated.keyId,
      createdAt: rotated.createdAt.toISOString(),
    });
    return {
      status: 200,
      headers: { 'content-type': answer.contentType },
      body: Buffer.from(answer.body, 'utf8'),
    };
  }),
];

export function isKeysPath(path: string): boolean {
  return path.startsWith('/orgs/');
}
