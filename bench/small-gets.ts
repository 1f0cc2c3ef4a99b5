/**
 * The small metadata GETs of issue #9 target 1 on the benchmark data (bench/make_data.py, copied
 * under `/b/` of a server's data directory): a group, an attribute, a link, a dataset and a
 * domain. Shared by bench/run.ts ("small") and bench/pair-small.ts. Not a benchmark itself.
 */

async function getJson(url: string): Promise<Record<string, unknown>> {
  const r = await fetch(url);
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return (await r.json()) as Record<string, unknown>;
}

/**
 * The path (with query) of each kind of small GET on the server at `base`, in the order
 * group, attribute, link, dataset, domain.
 * @throws Error when the benchmark files are not served there
 */
export async function smallGetPaths(base: string): Promise<[string, string][]> {
  const D = '/b/big.h5';
  const A = '/b/attrs1k.h5';
  const rootOf = async (dom: string) => (await getJson(`${base}/?domain=${dom}`)).root as string;
  const link = async (dom: string, group: string, name: string) => ((await getJson(`${base}/groups/${group}/links/${name}?domain=${dom}`)).link as { id: string }).id;
  const root = await rootOf(D);
  const obj = await link(A, await rootOf(A), 'obj');
  return [
    ['group', `/groups/${root}?domain=${D}`],
    ['attribute', `/groups/${obj}/attributes/a0001?domain=${A}`],
    ['link', `/groups/${root}/links/data?domain=${D}`],
    ['dataset', `/datasets/${await link(D, root, 'data')}?domain=${D}`],
    ['domain', `/?domain=${D}`],
  ];
}
