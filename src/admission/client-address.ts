import type { IncomingMessage } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';
import type { ClientAddressing } from '../config.js';

/**
 * Who a request comes from, as budgets, sign-in back-off and feed caps count clients: the socket's peer
 * or, when that peer is a trusted proxy, the X-Forwarded-For entries read from the last one back, each
 * proxy naming the hop before it, up to the first address that is not a trusted proxy. An entry that is
 * not an address ends the walk at the proxy that wrote it. An IPv6 client is its network of
 * `ipv6PrefixLength` bits (`2001:db8:1:2:0:0:0:0/64`): one subscriber holds a whole /64 in practice.
 */
export function clientAddress(req: IncomingMessage, addressing: ClientAddressing): string {
  const { trustedProxies } = addressing;
  let address = plainAddress(req.socket.remoteAddress);
  if (address === undefined) return 'unknown';
  if (trustedProxies) {
    const hops = [req.headers['x-forwarded-for'] ?? []].flat().join(',').split(',');
    while (hops.length > 0 && trustedProxies.check(address, isIPv6(address) ? 'ipv6' : 'ipv4')) {
      const previous = plainAddress(hops.pop()!.trim());
      if (previous === undefined) break;
      address = previous;
    }
  }
  return isIPv6(address) ? ipv6Network(address, addressing.ipv6PrefixLength) : address;
}

/** An IP address without its zone, an IPv4-mapped IPv6 address as IPv4; undefined for anything else. */
function plainAddress(text: string | undefined): string | undefined {
  const address = text?.replace(/%.*$/, '');
  if (address === undefined) return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped !== undefined && isIPv4(mapped)) return mapped;
  return isIPv4(address) || isIPv6(address) ? address : undefined;
}

/** The network of `prefixLength` bits holding an IPv6 address, its eight groups written out. */
function ipv6Network(address: string, prefixLength: number): string {
  // The URL parser writes the address in its canonical form (lower case, dotted IPv4 as two groups,
  // one `::` for the longest run of zero groups), which leaves only the `::` to expand.
  const [head = '', tail] = new URL(`http://[${address}]/`).hostname.slice(1, -1).split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right].map((group, i) => {
    const kept = Math.min(16, Math.max(0, prefixLength - 16 * i));
    return (Number.parseInt(group, 16) & ((0xffff << (16 - kept)) & 0xffff)).toString(16);
  });
  return `${groups.join(':')}/${prefixLength}`;
}
