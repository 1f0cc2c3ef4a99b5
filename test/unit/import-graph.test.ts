/**
 * The import graph of src/ has no circles (issue #27: the `domainFile` <-> `acls`/`given`/`reach`
 * circle was a symptom of modules writing each other's state; type-only imports count too, as
 * they tie the modules' designs together). madge reads the graph as TypeScript resolves it.
 */
import { expect } from 'chai';
import madge from 'madge';

describe('src/ import graph', function () {
  this.timeout(60_000);

  it('has no circular imports (type-only imports included)', async () => {
    const graph = await madge('src', { fileExtensions: ['ts'], tsConfig: 'tsconfig.json', detectiveOptions: { ts: { skipTypeImports: false } } });
    expect(graph.circular(), 'circles (each a list of files)').to.deep.equal([]);
    // the graph was read: the store imports its parts
    expect(graph.obj()['store/store.ts']).to.include('store/access/access.ts');
  });
});
