/**
 * The import graph of src/ has no circles (issue #27: the `domainFile` <-> `acls`/`given`/`reach`
 * circle was a symptom of modules writing each other's state; type-only imports count too, as
 * they tie the modules' designs together). madge reads the graph as TypeScript resolves it.
 * The store's folders sit below its facade (docs/architecture.md, "The folders of src/store/").
 */
import { expect } from 'chai';
import madge from 'madge';

describe('src/ import graph', function () {
  this.timeout(60_000);
  let m: Awaited<ReturnType<typeof madge>>;
  let graph: Record<string, string[]>;

  before(async () => {
    m = await madge('src', { fileExtensions: ['ts'], tsConfig: 'tsconfig.json', detectiveOptions: { ts: { skipTypeImports: false } } });
    graph = m.obj();
  });

  it('has no circular imports (type-only imports included)', () => {
    expect(m.circular(), 'circles (each a list of files)').to.deep.equal([]);
    // the graph was read: the store imports its parts
    expect(graph['store/store.ts']).to.include('store/access/access.ts');
    expect(graph['store/store.ts']).to.include('store/domainFiles.ts');
  });

  it("no file of the store's folders imports the facade or its parts (src/store/*.ts)", () => {
    const wrong = Object.entries(graph).flatMap(([file, deps]) =>
      /^store\/[a-z]+\//.test(file) ? deps.filter((d) => /^store\/[^/]+\.ts$/.test(d)).map((d) => `${file} -> ${d}`) : [],
    );
    expect(wrong).to.deep.equal([]);
  });
});
