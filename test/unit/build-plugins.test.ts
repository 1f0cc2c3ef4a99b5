/**
 * scripts/build-plugins.mjs `debSrcEntries`: the deb-src entry it adds on a machine whose apt has
 * none (a fresh Debian 12 image) mirrors the machine's own deb entries, in both apt formats, and
 * nothing is added where a deb-src entry exists or no deb entry is enabled.
 */
import { expect } from 'chai';
import path from 'node:path';
import { REPO } from '../helpers/server.js';

type Sources = { file: string; text: string }[];
const script = path.join(REPO, 'scripts/build-plugins.mjs');
const load = async () => (await import(script)) as { debSrcEntries(s: Sources): string | undefined; BUILD: string[] };

const DEB822 = `Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
`;

describe('scripts/build-plugins.mjs: the deb-src entry for apt-get source', () => {
  const cases: { name: string; sources: Sources; expect: string[] | undefined }[] = [
    {
      name: 'deb822 (Debian 12 images): one deb-src stanza per deb stanza, same URIs, suites, components, key',
      sources: [{ file: '/etc/apt/sources.list.d/debian.sources', text: DEB822 }],
      expect: ['Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg', 'Types: deb-src\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg'],
    },
    {
      name: 'one-line sources.list with [signed-by=...]',
      sources: [{ file: '/etc/apt/sources.list', text: '# comment\ndeb [signed-by=/k.gpg] http://m/debian bookworm main contrib\n' }],
      expect: ['Types: deb-src\nURIs: http://m/debian\nSuites: bookworm\nComponents: main contrib\nSigned-By: /k.gpg'],
    },
    { name: 'a deb-src entry exists already (one-line)', sources: [{ file: '/etc/apt/sources.list', text: 'deb http://m/debian bookworm main\ndeb-src http://m/debian bookworm main\n' }], expect: undefined },
    { name: 'a deb-src entry exists already (deb822, both types in one stanza)', sources: [{ file: '/x.sources', text: 'Types: deb deb-src\nURIs: http://m\nSuites: bookworm\nComponents: main\n' }], expect: undefined },
    { name: 'disabled stanzas are not copied; nothing to copy: nothing added', sources: [{ file: '/x.sources', text: 'Types: deb\nURIs: http://m\nSuites: bookworm\nEnabled: no\n' }], expect: undefined },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { debSrcEntries } = await load();
      const got = debSrcEntries(c.sources);
      if (c.expect === undefined) expect(got).to.equal(undefined);
      else expect(got!.trim().split('\n\n')).to.deep.equal(c.expect);
    });
  }

  it('builds with Debian packages only: a compiler, libhdf5-dev and liblz4-dev', async () => {
    expect((await load()).BUILD).to.include.members(['gcc', 'libhdf5-dev', 'liblz4-dev']);
  });
});
