/**
 * The Host names a server answers to (src/http/hosts.ts; issue #24 item 6), table-driven.
 */
import { expect } from 'chai';
import { hostAllowed, hostName, hostRule } from '../../src/http/hosts.js';

describe('hostName: the host part of a Host header', () => {
  const cases: Array<[string, string | undefined]> = [
    ['localhost:5101', 'localhost'],
    ['LOCALHOST.', 'localhost'],
    ['127.0.0.1', '127.0.0.1'],
    ['[::1]:5101', '[::1]'],
    ['[::1]', '[::1]'],
    ['user@c.example:82', 'c.example'],
    ['a@b@evil.example', 'evil.example'],
    ['Data.Example.ORG:443', 'data.example.org'],
    ['', undefined],
    [':80', undefined],
    ['[::1', undefined],
    ['[::1]x', undefined],
    ['evil.example:80x', undefined],
    ['a:b:c', undefined],
  ];
  for (const [header, want] of cases) it(`${JSON.stringify(header)} -> ${want}`, () => expect(hostName(header)).to.equal(want));
});

describe('hostAllowed: loopback binds answer to loopback and configured names; others to any unless limited', () => {
  const loop = hostRule({ host: '127.0.0.1', endpoint: 'https://pub.example:8443/base', allowedHosts: 'Data.Example, lan-box' });
  const open = hostRule({ host: '0.0.0.0', endpoint: undefined, allowedHosts: '' });
  const limited = hostRule({ host: '0.0.0.0', endpoint: undefined, allowedHosts: 'a.example' });
  const v6 = hostRule({ host: '::1', endpoint: undefined, allowedHosts: '' });
  const star = hostRule({ host: '127.0.0.1', endpoint: undefined, allowedHosts: '*' });
  const cases: Array<[string, ReturnType<typeof hostRule>, string | undefined, boolean]> = [
    ['loopback name', loop, 'localhost:5101', true],
    ['127.0.0.0/8', loop, '127.1.2.3:5101', true],
    ['[::1]', loop, '[::1]:5101', true],
    ['listed (case and spaces ignored)', loop, 'data.example', true],
    ['listed, any port', loop, 'lan-box:9999', true],
    ['endpoint host', loop, 'pub.example', true],
    ['another name', loop, 'evil.example:5101', false],
    ['a name ending in a loopback name', loop, 'localhost.evil.example', false],
    ['a name starting with a loopback address', loop, '127.0.0.1.evil.example', false],
    ['malformed', loop, 'bad host', false],
    ['no Host (HTTP/1.0)', loop, undefined, true],
    ['network bind: any name', open, 'evil.example', true],
    ['network bind, limited: listed', limited, 'a.example:443', true],
    ['network bind, limited: loopback', limited, 'localhost', true],
    ['network bind, limited: the bound address', limited, '0.0.0.0', true],
    ['network bind, limited: another', limited, 'evil.example', false],
    ['bound to ::1', v6, '[::1]:5101', true],
    ['bound to ::1, another', v6, 'evil.example', false],
    ['*', star, 'evil.example', true],
  ];
  for (const [name, rule, header, want] of cases) it(name, () => expect(hostAllowed(rule, header)).to.equal(want));
});
