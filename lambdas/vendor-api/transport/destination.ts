/**
 * Where a vendor request may go: the configured vendor origins, or a public address over https.
 * Anything else (loopback, private, link-local and the cloud metadata service, carrier-grade NAT,
 * multicast, reserved and documentation ranges, IPv4 and IPv6 alike) is refused before a byte is
 * sent, whether the vendor named it in a redirect or a DNS name resolves to it.
 *
 * Two checks, because Node calls the lookup only for names:
 * - an IP literal is classified before the request is made (`new URL()` has already normalised the
 *   WHATWG host forms, so `http://2130706433/`, `http://0x7f.1/` and `http://017700000001/` all
 *   arrive here as `127.0.0.1`, and `[::ffff:127.0.0.1]` as `[::ffff:7f00:1]`);
 * - a name is resolved by our own `lookup`, handed to the connection itself: the addresses it
 *   checks are the addresses the socket connects to, so there is no gap between check and use in
 *   which a second DNS answer (rebinding) could point elsewhere.
 *
 * Ranges: the IANA special-purpose registries
 * (https://www.iana.org/assignments/iana-ipv4-special-registry,
 * https://www.iana.org/assignments/iana-ipv6-special-registry), RFC 1918 (private IPv4), RFC 6598
 * (100.64/10), RFC 3927 (169.254/16, where EC2's metadata service answers on 169.254.169.254),
 * RFC 4193 (fc00::/7, where the IPv6 metadata endpoint fd00:ec2::254 lives), RFC 4291 (::1,
 * fe80::/10, ff00::/8, ::ffff:0:0/96), RFC 6052 and RFC 8215 (NAT64 prefixes).
 */
import dns from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { VendorDestinationRefusedError } from '#lambdas/platform/errors';
import { redactUrl } from '#lambdas/platform/redaction/redact';

/** A resolved address, as `dns.lookup(name, { all: true })` gives them. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}

/** Resolves a host name to every address it has; injected by tests so they need no real DNS. */
export type HostResolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export const systemResolver: HostResolver = (hostname) =>
  dns.promises.lookup(hostname, { all: true, verbatim: true });

/** Each refused range with the reason a refusal names. */
const RANGES: readonly (readonly [reason: string, cidrs: readonly string[]])[] = [
  ['the cloud metadata address', ['169.254.169.254/32', 'fd00:ec2::254/128']],
  ['a loopback address', ['127.0.0.0/8', '::1/128']],
  ['an unspecified or "this network" address', ['0.0.0.0/8', '::/128']],
  ['a private address', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7']],
  ['a link-local address', ['169.254.0.0/16', 'fe80::/10']],
  ['a carrier-grade NAT address', ['100.64.0.0/10']],
  ['a multicast address', ['224.0.0.0/4', 'ff00::/8']],
  [
    'a reserved or documentation address',
    [
      '192.0.0.0/24', // IETF protocol assignments (RFC 6890)
      '192.0.2.0/24', // TEST-NET-1 (RFC 5737)
      '198.18.0.0/15', // benchmarking (RFC 2544)
      '198.51.100.0/24', // TEST-NET-2
      '203.0.113.0/24', // TEST-NET-3
      '240.0.0.0/4', // reserved, and 255.255.255.255 (broadcast)
      '100::/64', // discard-only (RFC 6666)
      '2001:db8::/32', // documentation (RFC 3849)
      'fec0::/10', // deprecated site-local (RFC 3879)
      '64:ff9b:1::/48', // local-use NAT64 (RFC 8215): translated inside the network
      '2001::/32', // Teredo (RFC 4380): a tunnel whose far end is not this address
    ],
  ],
];

const LISTS = RANGES.map(([reason, cidrs]) => {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [network, prefix] = cidr.split('/') as [string, string];
    list.addSubnet(network, Number(prefix), isIP(network) === 6 ? 'ipv6' : 'ipv4');
  }
  return { reason, list };
});

/**
 * Why `address` is not a public unicast address, or undefined when it is. IPv6 forms that carry an
 * IPv4 address (IPv4-mapped ::ffff:a.b.c.d, the deprecated IPv4-compatible ::a.b.c.d, NAT64
 * 64:ff9b::/96, 6to4 2002::/16) are judged by the IPv4 address inside, since that is where the
 * packets end up.
 */
export function addressRefusal(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const embedded = embeddedIpv4(bare);
    if (embedded !== undefined) {
      const inner = addressRefusal(embedded);
      return inner === undefined ? undefined : `${inner} (${embedded}, inside the IPv6 address)`;
    }
  }
  const type = family === 6 ? 'ipv6' : 'ipv4';
  return LISTS.find(({ list }) => list.check(bare, type))?.reason;
}

/** The 16 bytes of an IPv6 address (already known valid), a trailing dotted quad included. */
function ipv6Bytes(address: string): number[] {
  let text = address.toLowerCase();
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::') as [string, string | undefined];
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const words = [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  return words.flatMap((w) => [w >> 8, w & 0xff]);
}

function embeddedIpv4(address: string): string | undefined {
  const b = ipv6Bytes(address);
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const v4 = (at: number) => b.slice(at, at + 4).join('.');
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible; :: and ::1 themselves are IPv6 ranges above)
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4(12);
  if (zero(0, 12) && !zero(12, 15)) return v4(12);
  // 64:ff9b::/96, the well-known NAT64 prefix (RFC 6052)
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12)) return v4(12);
  // 2002:AABB:CCDD::/48, 6to4 (RFC 3056)
  if (b[0] === 0x20 && b[1] === 0x02) return v4(2);
  return undefined;
}

/**
 * The destination rule of one transport: its configured origins (the vendor's base URL, plus any
 * the deployment or the local runner added) are reached as they are, and anything else only over
 * https at a public address.
 */
export class DestinationGuard {
  private readonly allowed: ReadonlySet<string>;

  constructor(
    allowedOrigins: Iterable<string>,
    private readonly resolve: HostResolver = systemResolver,
  ) {
    this.allowed = new Set([...allowedOrigins].map((origin) => new URL(origin).origin));
  }

  /** True for a configured origin, reached without the public-address rule. */
  isConfigured(url: URL): boolean {
    return this.allowed.has(url.origin);
  }

  /**
   * Checks `url` before a request to it; throws VendorDestinationRefusedError when it may not be
   * reached. Returns the `lookup` the connection must use (undefined: the system's, for a
   * configured origin or an IP literal already checked).
   */
  admit(operation: string, url: URL): LookupFunction | undefined {
    if (this.isConfigured(url)) return undefined;
    const refuse = (reason: string) => new VendorDestinationRefusedError(operation, redactUrl(url), reason);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const literal = isIP(host) !== 0;
    // The address first: "the cloud metadata address" tells more than "not https".
    const reason = literal ? addressRefusal(host) : undefined;
    if (reason !== undefined) throw refuse(`${host} is ${reason}`);
    if (url.protocol !== 'https:') throw refuse('it is neither https nor a configured vendor origin');
    return literal ? undefined : this.checkedLookup(host, refuse);
  }

  /** A `lookup` for net.connect that fails the connection when any address of the name is refused. */
  private checkedLookup(host: string, refuse: (reason: string) => Error): LookupFunction {
    const lookup = (
      hostname: string,
      options: { family?: number | string; all?: boolean },
      callback: (...args: unknown[]) => void,
    ) => {
      const family =
        options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
      this.resolve(hostname).then(
        (resolved) => {
          const addresses = resolved.filter((a) =>
            family !== 4 && family !== 6 ? true : a.family === family,
          );
          // Every address, not only the first: with several, Node may connect to any of them.
          for (const { address } of addresses) {
            const reason = addressRefusal(address);
            if (reason !== undefined) {
              callback(refuse(`${host} resolves to ${address}, ${reason}`));
              return;
            }
          }
          const first = addresses[0];
          if (first === undefined) {
            callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND', hostname }));
          } else if (options.all === true) callback(null, addresses);
          else callback(null, first.address, first.family);
        },
        (error: unknown) => callback(error),
      );
    };
    return lookup as unknown as LookupFunction;
  }
}
