import { describe, expect, it } from '@jest/globals';
import { createAddressPolicy, parseAllowList } from '../src/address-policy.js';

describe('address policy', () => {
  const policy = createAddressPolicy();

  it.each([
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['100.64.0.1', 'CGNAT'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['fe80::1', 'IPv6 link-local'],
    ['fd00::1', 'IPv6 unique-local'],
    ['ff02::1', 'IPv6 multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['[::ffff:169.254.169.254]', 'bracketed IPv4-mapped link-local'],
    ['64:ff9b::a00:1', 'NAT64 of a private address'],
    ['2002:a00:1::', '6to4 of a private address'],
  ])('refuses %s (%s)', (address) => {
    expect(policy.allowsAddress(address)).toBe(false);
  });

  it.each(['93.184.215.14', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8'])(
    'allows the public address %s',
    (address) => {
      expect(policy.allowsAddress(address)).toBe(true);
    },
  );

  it('refuses what is not an address', () => {
    expect(policy.allowsAddress('localhost')).toBe(false);
  });

  it('lets the operator allow CIDRs, addresses and host names', () => {
    const allowed = createAddressPolicy(parseAllowList(' 127.0.0.0/8, images.internal ,::1,10.0.0.5'));
    expect(allowed.allowsAddress('127.0.0.1')).toBe(true);
    expect(allowed.allowsAddress('::ffff:127.0.0.2')).toBe(true);
    expect(allowed.allowsAddress('::1')).toBe(true);
    expect(allowed.allowsAddress('10.0.0.5')).toBe(true);
    expect(allowed.allowsAddress('10.0.0.6')).toBe(false);
    expect(allowed.allowsHost('Images.Internal.')).toBe(true);
    expect(allowed.allowsHost('other.internal')).toBe(false);
  });

  it('refuses a URL host that is a non-public address, unless allowed; names wait for their resolution', () => {
    const allowed = createAddressPolicy(parseAllowList('127.0.0.1'));
    expect(
      ['169.254.169.254', '[::1]', '[::ffff:10.0.0.1]', '127.0.0.2'].map(allowed.refusesLiteralHost),
    ).toEqual([true, true, true, true]);
    expect(['127.0.0.1', '8.8.8.8', 'localhost', 'hooks.example'].map(allowed.refusesLiteralHost)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it('parses the allow-list into hosts and CIDRs and refuses a malformed CIDR', () => {
    expect(parseAllowList('')).toEqual({ hosts: [], cidrs: [] });
    expect(parseAllowList('a.example,127.0.0.1,fd00::/8')).toEqual({
      hosts: ['a.example'],
      cidrs: ['127.0.0.1/32', 'fd00::/8'],
    });
    expect(() => parseAllowList('10.0.0.0/99')).toThrow();
  });
});
