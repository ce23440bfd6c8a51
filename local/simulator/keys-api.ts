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
    // The vendor's API description says "no body"; whatever arrives is read and ignored so the connection stays usable.
    await readBody(call.req);
    const fault = call.rotateAnswer ?? { shape: 'default' };
    // `same-key`: the vendor "rotates" without changing anything and hands back the key in use.
    const rotated =
      fault.shape === 'same-key'
        ? call.sim.keys.unchanged()
        : call.sim.keys.rotate((fault.delaySeconds ?? 0) * 1000);
    const answer = rotateAnswer(
      fault,
      {
        orgUuid,
        apiKey: rotated.apiKey,
        keyId: rotated.keyId,
        createdAt: rotated.createdAt.toISOString(),
      },
      call.sim.closing,
    );
    return {
      status: 200,
      headers: { 'content-type': answer.contentType, 'content-length': answer.length },
      body: answer.body,
    };
  }),
];

export function isKeysPath(path: string): boolean {
  return path.startsWith('/orgs/');
}
