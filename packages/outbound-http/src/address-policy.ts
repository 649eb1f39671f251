import ipaddr from 'ipaddr.js';

/**
 * Which peers an outbound fetch may connect to. Only public unicast addresses are allowed: ipaddr.js classifies
 * every special-purpose range (RFC 6890 and successors: private, loopback, link-local, unique-local, multicast,
 * CGNAT, unspecified, broadcast, reserved, documentation, 6to4/Teredo/NAT64 which can embed a private IPv4
 * address), and anything it does not call `unicast` is refused. IPv4-mapped IPv6 addresses are judged as the
 * IPv4 address they carry. The operator's allow-list (hosts or CIDRs) overrides the refusal.
 */
export interface AddressPolicy {
  /** True when connecting to `address` (a literal IP) is allowed. */
  allowsAddress(address: string): boolean;
  /** True when the host name is on the allow-list, whatever it resolves to. */
  allowsHost(hostname: string): boolean;
  /**
   * True when a URL's host is an IP address the policy refuses. Such a URL can be refused before any request
   * (or when it is saved); a name is judged only as it resolves, at each connection.
   */
  refusesLiteralHost(hostname: string): boolean;
}

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

const normalizeHost = (hostname: string): string =>
  hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');

/** Parses `OUTBOUND_ALLOW_HOSTS`: comma-separated host names, IP addresses or CIDRs. Throws on a bad CIDR. */
export const parseAllowList = (value: string): { hosts: string[]; cidrs: string[] } => {
  const hosts: string[] = [];
  const cidrs: string[] = [];
  for (const entry of value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')) {
    if (entry.includes('/')) {
      ipaddr.parseCIDR(entry);
      cidrs.push(entry);
    } else if (ipaddr.isValid(normalizeHost(entry))) {
      const address = ipaddr.process(normalizeHost(entry));
      cidrs.push(`${address.toString()}/${address.kind() === 'ipv4' ? 32 : 128}`);
    } else {
      hosts.push(normalizeHost(entry));
    }
  }
  return { hosts, cidrs };
};

export const createAddressPolicy = (
  allowList: { hosts?: readonly string[]; cidrs?: readonly string[] } = {},
): AddressPolicy => {
  const hosts = new Set((allowList.hosts ?? []).map(normalizeHost));
  const cidrs: Cidr[] = (allowList.cidrs ?? []).map((cidr) => {
    const [address, bits] = ipaddr.parseCIDR(cidr);
    // A mapped IPv6 CIDR is compared as IPv4, like the addresses it is matched against.
    return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
      ? [(address as ipaddr.IPv6).toIPv4Address(), bits - 96]
      : [address, bits];
  });

  const allowsAddress = (literal: string): boolean => {
    const host = normalizeHost(literal);
    if (!ipaddr.isValid(host)) return false;
    const address = ipaddr.process(host);
    if (cidrs.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits)))
      return true;
    return address.range() === 'unicast';
  };
  const allowsHost = (hostname: string): boolean => hosts.has(normalizeHost(hostname));
  return {
    allowsAddress,
    allowsHost,
    refusesLiteralHost: (hostname) =>
      ipaddr.isValid(normalizeHost(hostname)) && !allowsHost(hostname) && !allowsAddress(hostname),
  };
};
